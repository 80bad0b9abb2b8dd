//! `taintcheck validate` and `taintcheck explain` on fixtures shaped like real `kubectl get -o
//! yaml|json` output (`tests/fixtures/`), through the built binary.

mod cli_support;

use cli_support::{stderr, stdout, taintcheck};

const NODE: &str = "tests/fixtures/node-unreachable.yaml";
const POD: &str = "tests/fixtures/pod-default-tolerations.yaml";

#[test]
fn validate_accepts_kubectl_output_in_every_shape() {
    let o = taintcheck(&[
        "validate",
        NODE,
        POD,
        "tests/fixtures/nodes-list.yaml",
        "tests/fixtures/node-sla.json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "5 object(s) valid\n");
    assert_eq!(stderr(&o), "");
}

#[test]
fn validate_gates_comparison_operators() {
    let off = taintcheck(&["validate", "tests/fixtures/pod-sla.json"]);
    assert_eq!(off.status.code(), Some(2));
    assert_eq!(
        stderr(&off),
        "tests/fixtures/pod-sla.json:31: spec.tolerations[0].operator: Unsupported value: \"Gt\": supported values: \"Equal\", \"Exists\"\ntaintcheck: 1 error(s)\n"
    );
    let on = taintcheck(&[
        "validate",
        "--comparison-operators",
        "tests/fixtures/pod-sla.json",
    ]);
    assert_eq!(on.status.code(), Some(0), "{}", stderr(&on));
}

#[test]
fn validate_reports_every_error_with_file_line_and_path() {
    let o = taintcheck(&[
        "validate",
        "tests/fixtures/pod-invalid.yaml",
        "tests/fixtures/pod-type-error.json",
        "tests/fixtures/nodes-list-invalid.yaml",
        "tests/fixtures/does-not-exist.yaml",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stdout(&o), "");
    insta::assert_snapshot!(stderr(&o));
}

#[test]
fn validate_json_lists_every_error_as_an_object() {
    let o = taintcheck(&[
        "validate",
        "--json",
        NODE,
        "tests/fixtures/pod-invalid.yaml",
        "tests/fixtures/does-not-exist.yaml",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o), "", "everything is in the JSON document");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (v["objects"].as_u64(), v["valid"].as_bool()),
        (Some(2), Some(false))
    );
    let errors = v["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 6, "{v}");
    assert_eq!(
        errors[0],
        serde_json::json!({
            "file": "tests/fixtures/pod-invalid.yaml",
            "line": 15,
            "path": "spec.tolerations[1].operator",
            "message": "Unsupported value: \"Foo\": supported values: \"Equal\", \"Exists\"",
        })
    );
    let unreadable = &errors[5];
    assert_eq!(unreadable["file"], "tests/fixtures/does-not-exist.yaml");
    assert!(unreadable["line"].is_null() && unreadable["path"].is_null());
    assert!(unreadable["message"]
        .as_str()
        .unwrap()
        .starts_with("cannot read file: "));

    let o = taintcheck(&["validate", "--json", NODE, POD]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"objects": 2, "valid": true, "errors": []})
    );
}

#[test]
fn validate_without_files_is_a_usage_error() {
    let o = taintcheck(&["validate"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("FILE"), "{}", stderr(&o));
}

#[test]
fn explain_prints_a_readable_table() {
    let o = taintcheck(&["explain", "--node", NODE, "--pod", POD]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    insta::assert_snapshot!(stdout(&o));
}

#[test]
fn explain_json_has_the_documented_shape() {
    let o = taintcheck(&["explain", "--node", NODE, "--pod", POD, "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        concat!(
            r#"{"taints":[{"taint":"node.kubernetes.io/unreachable:NoSchedule","effect":"NoSchedule","toleration_index":null,"seconds":null},"#,
            r#"{"taint":"node.kubernetes.io/unreachable:NoExecute","effect":"NoExecute","toleration_index":1,"seconds":300},"#,
            r#"{"taint":"example.com/spot=true:PreferNoSchedule","effect":"PreferNoSchedule","toleration_index":null,"seconds":null}],"#,
            r#""all_tolerated":true,"min_toleration_seconds":300,"eviction":"after","eviction_after_seconds":300,"#,
            r#""schedulable":false,"unschedulable_reason":"node(s) had untolerated taint {node.kubernetes.io/unreachable: }","#,
            r#""prefer_no_schedule_untolerated":1}"#,
            "\n"
        )
    );
}

#[test]
fn explain_comparison_operators_change_the_outcome() {
    let args = [
        "explain",
        "--node",
        "tests/fixtures/node-sla.json",
        "--pod",
        "tests/fixtures/pod-sla.json",
    ];
    let rejected = taintcheck(&args);
    assert_eq!(
        rejected.status.code(),
        Some(2),
        "Gt is invalid without the gate"
    );

    let mut gate_off = args.to_vec();
    gate_off.extend(["--no-validate", "--json"]);
    let off: serde_json::Value = serde_json::from_slice(&taintcheck(&gate_off).stdout).unwrap();
    assert_eq!(
        off["eviction"], "immediate",
        "Gt never matches with the gate off: evicted at once"
    );

    let mut gate_on = args.to_vec();
    gate_on.extend(["--comparison-operators", "--json"]);
    let on: serde_json::Value = serde_json::from_slice(&taintcheck(&gate_on).stdout).unwrap();
    assert_eq!(
        (
            on["eviction"].as_str(),
            on["eviction_after_seconds"].as_i64()
        ),
        (Some("after"), Some(120))
    );
    assert_eq!(on["schedulable"], true);

    let mut text = args.to_vec();
    text.push("--comparison-operators");
    insta::assert_snapshot!(stdout(&taintcheck(&text)));
}

#[test]
fn explain_refuses_invalid_objects_unless_told_not_to_validate() {
    let args = [
        "explain",
        "--node",
        NODE,
        "--pod",
        "tests/fixtures/pod-invalid.yaml",
    ];
    let o = taintcheck(&args);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(
            "pod-invalid.yaml:15: spec.tolerations[1].operator: Unsupported value: \"Foo\""
        ),
        "{}",
        stderr(&o)
    );
    let mut permissive = args.to_vec();
    permissive.extend(["--no-validate", "--json"]);
    let o = taintcheck(&permissive);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["eviction"], "immediate",
        "nothing tolerates node.kubernetes.io/unreachable"
    );
}

#[test]
fn explain_needs_exactly_one_object_of_each_kind() {
    let o = taintcheck(&[
        "explain",
        "--node",
        "tests/fixtures/nodes-list.yaml",
        "--pod",
        POD,
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "tests/fixtures/nodes-list.yaml: expected exactly one Node, found 2\n"
    );
    let o = taintcheck(&["explain", "--node", POD, "--pod", POD]);
    assert_eq!(
        stderr(&o),
        format!("{POD}: expected exactly one Node, found 0\n")
    );
    let o = taintcheck(&[
        "explain",
        "--node",
        NODE,
        "--pod",
        "tests/fixtures/pod-type-error.json",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).starts_with("tests/fixtures/pod-type-error.json:20: spec.tolerations[0].tolerationSeconds: Invalid value: \"abc\""));
    let o = taintcheck(&["explain", "--node", NODE]);
    assert_eq!(o.status.code(), Some(2), "missing --pod is a usage error");
}

#[test]
fn explain_an_untainted_node() {
    let o = taintcheck(&[
        "explain",
        "--node",
        "tests/fixtures/node-untainted.yaml",
        "--pod",
        POD,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    insta::assert_snapshot!(stdout(&o));
}
