//! The ITF encoding (CHECK-3) and `--expect` files (CHECK-1) as libraries: every ITF form
//! round-trips, malformed documents and expectation files say where they are wrong.

use std::collections::BTreeMap;
use taintcheck_model::check::expectation::Expectation;
use taintcheck_model::check::itf::{Trace, Value};
use taintcheck_model::check::properties::PROPERTIES;
use taintcheck_model::check::run::Status;

fn every_form() -> Value {
    Value::record([
        ("b", Value::Bool(true)),
        ("n", Value::Int(-(1i128 << 70))),
        ("s", Value::str("default/p1")),
        ("l", Value::List(vec![Value::int(1), Value::int(2)])),
        ("t", Value::Tup(vec![Value::str("a"), Value::int(0)])),
        ("set", Value::Set(vec![Value::str("x")])),
        (
            "m",
            Value::Map(vec![(Value::str("k"), Value::List(Vec::new()))]),
        ),
        ("v", Value::variant("Some", Value::int(3))),
        ("none", Value::tag("None")),
        ("u", Value::Unserializable("opaque".into())),
    ])
}

#[test]
fn every_form_round_trips() {
    let trace = Trace {
        source: "test".into(),
        description: "every form".into(),
        vars: vec!["x".into()],
        states: vec![BTreeMap::from([("x".to_string(), every_form())])],
    };
    let text = trace.to_json().to_string();
    assert!(
        text.contains(r##""#bigint":"-1180591620717411303424""##),
        "{text}"
    );
    assert!(text.contains(r##""#map":[["k",[]]]"##), "{text}");
    assert!(text.contains(r##""#meta":{"index":0}"##), "{text}");
    assert_eq!(Trace::parse(&text), Ok(trace));
}

#[test]
fn plain_numbers_read_as_integers() {
    let t = Trace::parse(r#"{"vars":["x"],"states":[{"x":5}]}"#).unwrap();
    assert_eq!(t.states[0]["x"], Value::Int(5));
}

#[test]
fn malformed_documents_say_where() {
    let e = Trace::parse(r#"{"vars":["x"],"states":[{"y":1}]}"#).unwrap_err();
    assert_eq!(e.0, "states[0].y: not a declared variable");
    let e = Trace::parse(r#"{"vars":["x"],"states":[{}]}"#).unwrap_err();
    assert_eq!(e.0, "states[0]: variable x missing");
    let e = Trace::parse(r##"{"vars":["x"],"states":[{"x":{"#bigint":"z"}}]}"##).unwrap_err();
    assert_eq!(e.0, "states[0].x: #bigint \"z\" is not an integer");
}

#[test]
fn unlisted_properties_hold_or_have_examples() {
    let e = Expectation::parse("e.yaml", "EVICT-1: violated\nSOME-4: no-example\n").unwrap();
    let by_id = |id: &str| e.of(PROPERTIES.iter().find(|p| p.id == id).unwrap());
    assert_eq!(by_id("EVICT-1"), Status::Violated);
    assert_eq!(by_id("EVICT-2"), Status::Holds);
    assert_eq!(by_id("SOME-4"), Status::NoExample);
    assert_eq!(by_id("SOME-1"), Status::ExampleFound);
}

#[test]
fn json_and_full_names_are_accepted() {
    let e = Expectation::parse(
        "e.json",
        r#"{"CANCEL-1 honest cancel": "violated", "a cancelled timer": "example_found"}"#,
    )
    .unwrap();
    assert_eq!(e.of(&PROPERTIES[6]), Status::Violated);
}

#[test]
fn errors_name_file_line_and_field() {
    let e = Expectation::parse(
        "e.yaml",
        "EVICT-1: violated\nEVICT-9: holds\nSOME-1: holds\n",
    )
    .unwrap_err()
    .to_string();
    let lines: Vec<&str> = e.lines().collect();
    assert!(
        lines[0]
            .starts_with("e.yaml:2: Unsupported value: \"EVICT-9\": supported values: \"EVICT-1\""),
        "{e}"
    );
    assert_eq!(
        lines[1],
        "e.yaml:3: SOME-1: Invalid value: \"holds\": SOME-1 is a `sometimes` property"
    );
}
