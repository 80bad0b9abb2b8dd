//! One error style across commands, per command family: usage and I/O errors read
//! `taintcheck: message`, bad input `file:line: field.path: message`; both exit 2.

mod cli_support;

use cli_support::{stderr, stdout, taintcheck};
use std::path::PathBuf;

fn scratch(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("taintcheck-cli-errors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Exit 2 and exactly `expected` on stderr, nothing on stdout.
fn fails_with(args: &[&str], expected: &str) {
    let o = taintcheck(args);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    assert_eq!(stdout(&o), "", "{args:?}");
    assert_eq!(stderr(&o), expected, "{args:?}");
}

const MISSING: &str = "tests/fixtures/does-not-exist.yaml";
const NO_SUCH_FILE: &str = "No such file or directory (os error 2)";

#[test]
fn arguments_clap_rejects_are_usage_errors() {
    let o = taintcheck(&["validate", "--no-such-flag", "x.yaml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with("taintcheck: unexpected argument '--no-such-flag' found"),
        "{}",
        stderr(&o)
    );
    let o = taintcheck(&["conform", "-", "--latency-bound-ms=-5"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with("taintcheck: invalid value '-5' for '--latency-bound-ms <D>'"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn model_commands() {
    let o = taintcheck(&["check", "--config", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with(
            "taintcheck: --config: Unsupported value: \"nope\": supported values: \"default\", "
        ),
        "{}",
        stderr(&o)
    );
    let config = scratch("bad-config.yaml", "description: bad\nnodes: lots\n");
    let file = config.to_str().unwrap();
    let o = taintcheck(&["check", "--config", file]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.starts_with(&format!("{file}:2: nodes: ")), "{err}");
    let o = taintcheck(&["check", "--seconds", "soon"]);
    assert_eq!(
        stderr(&o),
        "taintcheck: --seconds: Invalid value: \"soon\": expected an integer or \"forever\"\n"
    );
    let o = taintcheck(&["explore", "--addr", "nowhere"]);
    assert_eq!(
        stderr(&o),
        "taintcheck: --addr: Invalid value: \"nowhere\": expected host:port\n"
    );
}

#[test]
fn scenario_commands() {
    for command in ["run", "expect"] {
        fails_with(
            &[command, MISSING],
            &format!("taintcheck: {MISSING}: cannot read file: {NO_SUCH_FILE}\n"),
        );
    }
    let scenario = scratch("bad-scenario.yaml", "name: bad\nuntil: soon\n");
    let file = scenario.to_str().unwrap();
    let o = taintcheck(&["run", file]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with(&format!("{file}:")),
        "{}",
        stderr(&o)
    );
    assert!(!stderr(&o).contains("taintcheck:"), "{}", stderr(&o));
}

#[test]
fn oracle_commands() {
    fails_with(
        &["conform", MISSING],
        &format!("taintcheck: {MISSING}: cannot read file: {NO_SUCH_FILE}\n"),
    );
    let header = r#"{"t":0,"kind":"header","version":1,"source":"test"}"#;
    let trace = scratch("bad.ndjson", &format!("{header}\nnot json\n"));
    let file = trace.to_str().unwrap();
    let o = taintcheck(&["conform", file]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with(&format!("{file}:2: ")),
        "{}",
        stderr(&o)
    );
}

#[test]
fn manifest_commands() {
    fails_with(
        &["validate", MISSING],
        &format!(
            "taintcheck: {MISSING}: cannot read file: {NO_SUCH_FILE}\ntaintcheck: 1 error(s)\n"
        ),
    );
    fails_with(
        &["explain", "--node", MISSING, "--pod", MISSING],
        &format!("taintcheck: {MISSING}: cannot read file: {NO_SUCH_FILE}\n"),
    );
    let o = taintcheck(&[
        "explain",
        "--node",
        "tests/fixtures/node-unreachable.yaml",
        "--pod",
        "tests/fixtures/pod-invalid.yaml",
    ]);
    assert!(
        stderr(&o).starts_with(
            "tests/fixtures/pod-invalid.yaml:15: spec.tolerations[1].operator: Unsupported value"
        ),
        "{}",
        stderr(&o)
    );
}

#[test]
fn import() {
    fails_with(
        &["import", MISSING],
        &format!("taintcheck: {MISSING}: cannot read file: {NO_SUCH_FILE}\n"),
    );
    let recording = scratch(
        "bad-recording.json",
        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\"}\n{oops\n",
    );
    let file = recording.to_str().unwrap();
    let o = taintcheck(&["import", file]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with(&format!("{file}:2: invalid JSON: ")),
        "{}",
        stderr(&o)
    );
}
