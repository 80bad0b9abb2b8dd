//! `taintcheck check` in CI (spec CHECK-1, CHECK-3): exit 0 by default whatever the verdicts,
//! 1 with `--gate` on a finding or with `--expect` on a difference, 2 on bad input; incomplete
//! runs never say "holds"; JUnit XML, ITF traces and `--json` steps are structured.

mod cli_support;

use cli_support::{stderr, stdout, taintcheck};
use std::path::PathBuf;
use taintcheck_model::check::itf::{Trace, Value};
use taintcheck_model::check::itf_state::VARS;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("taintcheck-cli-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn write(name: &str, text: &str) -> String {
    let path = scratch(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

const N1: [&str; 5] = [
    "check",
    "--profile",
    "latest",
    "--config",
    "timer-vs-cancel",
];
/// `latest` on `timer-vs-cancel`: N1 and N2 (the DELETE after the cancel is also a write after
/// it, CANCEL-2), and no immediate, failed or restart evictions (`no-example` is met by their
/// `not_applicable`: the configuration cannot show them, CHECK-1).
const N1_VERDICTS: &str = "EVICT-1: violated\nCANCEL-1: violated\nCANCEL-2: violated\n\
                           SOME-1: no-example\nSOME-4: no-example\nSOME-5: no-example\n";

fn with<'a>(base: &[&'a str], more: &[&'a str]) -> Vec<&'a str> {
    base.iter().chain(more).copied().collect()
}

#[test]
fn violations_exit_0_by_default_and_say_how_to_gate() {
    let o = taintcheck(&N1);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("3 of 12 `always` properties violated, 0 of 5 `sometimes` properties without an example (3 more not applicable to this configuration). Exit 0: --gate"),
        "{out}"
    );
    assert!(
        out.contains(
            "  Explore it: taintcheck explore --config timer-vs-cancel --profile latest --property EVICT-1\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("(Explorer: http://127.0.0.1:3000/#/steps/0/"),
        "{out}"
    );
}

#[test]
fn gate_fails_on_a_violation_and_passes_the_fixed_design() {
    let o = taintcheck(&with(&N1, &["--gate"]));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stdout(&o).ends_with(". --gate: exit 1.\n"),
        "{}",
        stdout(&o)
    );
    // `fixed` holds every `always` property here, and the three `sometimes` without an
    // example are ones the configuration cannot exemplify (no failing request, no restart, no
    // pod that can be evicted at once): not applicable, with why, and no finding (CHECK-1).
    let o = taintcheck(&[
        "check",
        "--profile",
        "fixed",
        "--config",
        "timer-vs-cancel",
        "--gate",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let out = stdout(&o);
    assert!(
        out.contains("an eviction after a restart")
            && out.contains(
                "not applicable: no controller restart is configured (operation restart)"
            ),
        "{out}"
    );
    assert!(out.ends_with(
        "0 of 12 `always` properties violated, 0 of 5 `sometimes` properties without an \
         example (3 more not applicable to this configuration). --gate: passed.\n"
    ));
    // One the configuration can exemplify and does not still fails the gate: `failing-delete`
    // removes nothing and changes no toleration, yet an operation could cancel, so a missing
    // "a cancelled timer" is a finding.
    let o = taintcheck(&[
        "check",
        "--profile",
        "fixed",
        "--config",
        "failing-delete",
        "--gate",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let out = stdout(&o);
    assert!(out.contains("a cancelled timer"), "{out}");
    assert!(
        out.ends_with(
            "0 of 12 `always` properties violated, 1 of 5 `sometimes` properties without an \
             example (2 more not applicable to this configuration). --gate: exit 1.\n"
        ),
        "{out}"
    );
}

/// `--json` carries the verdict and its reason; a JUnit report skips the case.
#[test]
fn not_applicable_is_reported_with_why() {
    let fixed = ["check", "--profile", "fixed", "--config", "timer-vs-cancel"];
    let o = taintcheck(&with(&fixed, &["--json"]));
    let report: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    let some_4 = report["properties"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["id"] == "SOME-4"))
        .expect("SOME-4");
    assert_eq!(some_4["status"], "not_applicable");
    assert_eq!(
        some_4["reason"],
        "no failing request is configured (operation fail_next_call)"
    );
    let xml = std::env::temp_dir().join(format!("taintcheck-na-{}.xml", std::process::id()));
    let o = taintcheck(&with(&fixed, &["--junit", xml.to_str().expect("utf-8")]));
    assert_eq!(o.status.code(), Some(0));
    let text = std::fs::read_to_string(&xml).expect("the JUnit file");
    assert!(text.contains("failures=\"0\" skipped=\"3\""), "{text}");
    assert!(
        text.contains("<skipped message=\"not applicable: no controller restart"),
        "{text}"
    );
    let _ = std::fs::remove_file(xml);
}

#[test]
fn expect_asserts_the_whole_verdict_set() {
    let known = write("n1.yaml", N1_VERDICTS);
    let o = taintcheck(&with(&N1, &["--expect", &known]));
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).ends_with(&format!("Expectation {known}: met.\n")));
    // The fixed design differs exactly where the races were.
    let o = taintcheck(&[
        "check",
        "--profile",
        "fixed",
        "--config",
        "timer-vs-cancel",
        "--expect",
        &known,
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).ends_with(&format!(
            "Expectation {known}: 3 difference(s), exit 1:\n  \
             EVICT-1: expected violated, got holds\n  CANCEL-1: expected violated, got holds\n  \
             CANCEL-2: expected violated, got holds\n"
        )),
        "{}",
        stdout(&o)
    );
    // With --json the summary goes to stderr and stdout stays JSON.
    let o = taintcheck(&with(&N1, &["--expect", &known, "--json"]));
    assert_eq!(o.status.code(), Some(0));
    serde_json::from_str::<serde_json::Value>(&stdout(&o)).expect("JSON on stdout");
    assert!(stderr(&o).contains("met."));
}

#[test]
fn bad_expectation_files_are_bad_input() {
    let bad = write("bad.yaml", "EVICT-1: broken\n");
    let o = taintcheck(&with(&N1, &["--expect", &bad]));
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        format!(
            "{bad}:1: EVICT-1: Unsupported value: \"broken\": supported values: \"holds\", \
             \"violated\", \"example-found\", \"no-example\", \"not-applicable\"\n"
        )
    );
    assert_eq!(stdout(&o), "");
    let o = taintcheck(&with(
        &N1,
        &["--expect", "tests/fixtures/does-not-exist.yaml"],
    ));
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).starts_with("taintcheck: tests/fixtures/does-not-exist.yaml: "));
}

#[test]
fn incomplete_runs_never_say_holds() {
    let o = taintcheck(&[
        "check",
        "--profile",
        "fixed",
        "--config",
        "default",
        "--target-states",
        "50",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(j["complete"], false);
    let statuses: Vec<&str> = j["properties"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["status"].as_str().unwrap())
        .collect();
    assert!(!statuses.contains(&"holds"), "{statuses:?}");
    assert!(statuses.contains(&"not_refuted"), "{statuses:?}");
    let o = taintcheck(&[
        "check",
        "--profile",
        "fixed",
        "--config",
        "default",
        "--target-states",
        "50",
    ]);
    let out = stdout(&o);
    assert!(!out.contains(" holds\n"), "{out}");
    assert!(out.contains("  EVICT-1 no eviction after observed taint removal  not refuted within "));
}

#[test]
fn junit_has_one_case_per_property_and_fails_the_findings() {
    let file = scratch("n1.xml");
    let o = taintcheck(&with(&N1, &["--junit", file.to_str().unwrap()]));
    assert_eq!(o.status.code(), Some(0));
    let xml = std::fs::read_to_string(&file).unwrap();
    assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites "));
    assert_eq!(xml.matches("<testcase ").count(), 17, "{xml}");
    assert_eq!(xml.matches("<failure ").count(), 3, "{xml}");
    assert!(xml.contains("<testsuite name=\"taintcheck check latest/timer-vs-cancel\" tests=\"17\" failures=\"3\" skipped=\"3\""), "{xml}");
    assert!(
        xml.contains(
            "name=\"EVICT-1 no eviction after observed taint removal\">\n      \
             <failure message=\"violated\" type=\"violated\">  1. t="
        ),
        "{xml}"
    );
    // Balanced elements: every case is closed or self-closing.
    let closed = xml.matches("</testcase>").count() + xml.matches("\"/>\n").count();
    assert!(closed >= 17, "{xml}");
    // With the known verdicts expected, the dashboard is green.
    let known = write("n1-junit.yaml", N1_VERDICTS);
    let o = taintcheck(&with(
        &N1,
        &["--junit", file.to_str().unwrap(), "--expect", &known],
    ));
    assert_eq!(o.status.code(), Some(0));
    let xml = std::fs::read_to_string(&file).unwrap();
    assert_eq!(xml.matches("<failure ").count(), 0, "{xml}");
}

#[test]
fn itf_traces_read_back_with_a_state_per_step() {
    let dir = scratch("itf");
    let o = taintcheck(&with(&N1, &["--itf", dir.to_str().unwrap(), "--json"]));
    assert_eq!(o.status.code(), Some(0));
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let mut files = 0;
    for p in j["properties"].as_array().unwrap() {
        let path = if p["counterexample"].is_null() {
            &p["example"]
        } else {
            &p["counterexample"]
        };
        if path.is_null() {
            continue;
        }
        files += 1;
        let id = p["id"].as_str().unwrap();
        let file = dir.join(format!("latest-timer-vs-cancel-{id}.itf.json"));
        let trace = Trace::parse(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let steps = path["steps"].as_array().unwrap();
        assert_eq!(trace.states.len(), steps.len() + 1, "{id}");
        assert_eq!(trace.vars, VARS.map(String::from).to_vec());
        // The clock of each state is the time of the step taken from it.
        for (state, step) in trace.states.iter().zip(steps) {
            assert_eq!(
                state["now"],
                Value::Int(step["time_ms"].as_i64().unwrap().into())
            );
        }
    }
    // EVICT-1, CANCEL-1 and CANCEL-2, and the examples of SOME-2 and SOME-3.
    assert_eq!(files, 5);
}

/// `--schedule-out`: each counterexample as a scenario the scenario reader accepts and a schedule
/// the proxy reads (PROXY-11); one made on 1.18, whose work sends nothing between its start and
/// its DELETE, is refused on stderr with the steps that say why.
#[test]
fn schedule_out_writes_a_scenario_and_a_schedule_per_counterexample() {
    let dir = scratch("steer");
    let o = taintcheck(&with(&N1, &["--schedule-out", dir.to_str().unwrap()]));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for id in ["evict-1", "cancel-1", "cancel-2"] {
        let yaml = dir.join(format!("timer-vs-cancel-{id}.yaml"));
        let text = std::fs::read_to_string(&yaml).unwrap();
        let scenario =
            taintcheck_formats::scenario::parse_scenario(yaml.to_str().unwrap(), &text).unwrap();
        assert_eq!(scenario.name, format!("timer-vs-cancel-{id}"));
        let json = dir.join(format!("timer-vs-cancel-{id}.json"));
        let schedule = taintcheck_formats::schedule::Schedule::parse(
            "s.json",
            &std::fs::read_to_string(&json).unwrap(),
        )
        .unwrap();
        // The PATCH's answer held until the untaint reached the controller (rule 1), and the
        // untaint played once the PATCH is sent (rule 5).
        let kinds: Vec<&str> = schedule.holds.iter().map(|h| h.describe().0).collect();
        assert_eq!(kinds, ["answer", "operations"], "{id}: {schedule:?}");
    }
    let old = scratch("steer-1.18");
    let o = taintcheck(&[
        "check",
        "--profile",
        "v1.18",
        "--config",
        "timer-vs-cancel",
        "--schedule-out",
        old.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "EVICT-1: no real-time scenario: cannot be forced from outside the controller: the \
             counterexample puts step 4 (env: remove taint k:NoExecute from node n1) between \
             steps 3 and 6 of its work"
        ),
        "{}",
        stderr(&o)
    );
    assert!(!old.join("timer-vs-cancel-evict-1.yaml").exists());
    let o = taintcheck(&with(
        &N1,
        &["--schedule-out", dir.to_str().unwrap(), "--each-class"],
    ));
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--schedule-out: not with --each-class"));
}

#[test]
fn json_steps_are_fields_and_sometimes_properties_carry_examples() {
    let o = taintcheck(&with(&N1, &["--json"]));
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let props = j["properties"].as_array().unwrap();
    let evict = &props[0];
    assert_eq!(evict["id"], "EVICT-1");
    assert_eq!(evict["status"], "violated");
    assert!(evict["example"].is_null());
    let steps = evict["counterexample"]["steps"].as_array().unwrap();
    let first = &steps[0];
    for field in ["number", "time_ms", "actor", "action", "outcome", "changed"] {
        assert!(first.get(field).is_some(), "{field}: {first}");
    }
    // Some step is the environment removing the taint, which changes the API and queues a
    // watch event for the node informer.
    let removal = steps
        .iter()
        .find(|s| s["actor"] == "environment")
        .expect("the environment acts");
    assert!(removal["action"].as_str().unwrap().starts_with("env: "));
    let changed: Vec<&str> = removal["changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert!(
        changed.contains(&"api") && (changed.contains(&"nodes") || changed.contains(&"pods")),
        "{changed:?}"
    );
    assert!(changed.contains(&"env"), "{changed:?}");
    let cancel = props.iter().find(|p| p["id"] == "SOME-3").unwrap();
    assert_eq!(cancel["status"], "example_found");
    let example = cancel["example"]["steps"].as_array().unwrap();
    assert!(
        example
            .iter()
            .any(|s| s["outcome"].to_string().contains("Cancelling deletion")),
        "{example:?}"
    );
}

#[test]
fn report_refuses_what_it_cannot_write() {
    let o = taintcheck(&[
        "report",
        "EVICT-1",
        "--profile",
        "fixed",
        "--config",
        "timer-vs-cancel",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "taintcheck: EVICT-1 holds on --config timer-vs-cancel --profile fixed: nothing to report\n"
    );
    let o = taintcheck(&["report", "SOME-1", "--config", "timer-vs-cancel"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).starts_with("taintcheck: PROPERTY: Unsupported value: \"SOME-1\""));
    let file = scratch("n1.md");
    let o = taintcheck(&[
        "report",
        "EVICT-1",
        "--profile",
        "latest",
        "--config",
        "timer-vs-cancel",
        "-o",
        file.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let md = std::fs::read_to_string(&file).unwrap();
    assert!(md.starts_with("# NoExecute taint eviction: "), "{md}");
}

/// MODEL-CUTOFF on the command line: a class larger than its cutoff is cut and the report says
/// so (`--json` too); `--no-cutoff` checks every pod; `--each-class` runs each class alone and
/// its paths' `explore` commands select that run with `--only`; what couples the classes, and
/// an unknown `--only` pod, are usage errors.
#[test]
fn the_cutoff_is_reported_and_each_class_runs_alone() {
    let o = taintcheck(&["check", "--config", "three-pods"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains(
        "3 pods in 1 class; checked 1 per class (1 pod; cutoff, MODEL-CUTOFF); --no-cutoff checks all\n"
    ));
    let o = taintcheck(&["check", "--config", "three-pods", "--budget", "0", "--json"]);
    let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(json["cutoff"]["pods"], 3);
    assert_eq!(json["cutoff"]["checked"], 1);
    let o = taintcheck(&[
        "check",
        "--config",
        "three-pods",
        "--budget",
        "0",
        "--no-cutoff",
        "--json",
    ]);
    let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(json.get("cutoff").is_none());

    let default = ["check", "--profile", "latest", "--config", "default"];
    let o = taintcheck(&with(&default, &["--each-class"]));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains(
            "2 pods in 2 classes; checked 1 per class (2 pods, each class on its own: 2 runs;"
        ),
        "{out}"
    );
    assert!(
        out.contains("Explore it: taintcheck explore --config default --profile latest --only p"),
        "{out}"
    );

    let refused = [
        (
            &["check", "--config", "rate-limited-storm", "--each-class"][..],
            "--each-class: the client's rate limit",
        ),
        (
            &["check", "--each-class", "--partition", "0/2"][..],
            "--each-class: not with --partition",
        ),
        (&["check", "--only", "p9"][..], "--only: Not found: \"p9\""),
    ];
    for (more, why) in refused {
        let o = taintcheck(more);
        assert_eq!(o.status.code(), Some(2), "{more:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(why), "{more:?}: {}", stderr(&o));
    }
}
