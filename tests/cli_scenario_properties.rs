//! User-defined properties in a scenario's `expect` (specs/scenario-format.md, SCN-5; PROP-2),
//! judged on the runtime's run by `taintcheck run`: met (exit 0), broken (exit 1, the property's
//! line and what the run showed), and a claim a run cannot judge (exit 2, file:line:path).

mod cli_support;

use cli_support::{stderr, stdout, taintcheck};

/// `web` gets the default 300 s not-ready toleration; `db-0` tolerates not-ready forever.
const CLUSTER: &str = r#"name: props
nodes: [{name: node1}]
pods:
  - {name: web, node: node1}
  - name: db-0
    node: node1
    tolerations: [{key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute}]
ops:
  - {at: 0s, taint: node1 node.kubernetes.io/not-ready:NoExecute}
until: 400s
expect:
  all:
    properties:
"#;

/// Writes `CLUSTER` with `properties` to a scenario file of its own and runs it.
fn run(file: &str, properties: &str) -> (std::process::Output, String) {
    let dir = std::env::temp_dir().join(format!("taintcheck-scn-props-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(file);
    std::fs::write(&path, format!("{CLUSTER}{properties}")).unwrap();
    let path = path.to_str().unwrap().to_owned();
    (taintcheck(&["run", &path, "--profile", "latest"]), path)
}

#[test]
fn properties_the_run_meets_pass() {
    let (o, _) = run(
        "held.yaml",
        r#"      - {name: db-stays, always: {never_deleted: {pods: "db-*"}}}
      - {name: web-at-300s, always: {deleted_within: {pods: web, taint: node.kubernetes.io/not-ready, from: 300s, to: 301s}}}
      - {name: one-at-a-time, always: {at_most_deletions: {count: 1, window: 10s}}}
      - {name: marked-once, always: {marked_at_most_once: {}}}
      - {name: web-deleted, sometimes: {deleted: {pods: web}}}
      - {name: web-marked, sometimes: {event: {event: MarkingForDeletion, pods: web}}}
"#,
    );
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains("expectations: 6 checked, all met"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn a_broken_property_fails_at_its_line() {
    let (o, path) = run(
        "violated.yaml",
        r#"      - {name: web-stays, always: {never_deleted: {pods: web}}}
      - {name: web-late, always: {not_deleted_before: {pods: web, after: 301s}}}
      - {name: db-deleted, sometimes: {deleted: {pods: db-0}}}
      - {name: db-marked, sometimes: {event: {event: MarkingForDeletion, pods: "db-*"}}}
"#,
    );
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    for line in [
        format!("FAILED {path}:line 14: property \"web-stays\" violated: default/web was deleted at 300.000s"),
        format!("FAILED {path}:line 15: property \"web-late\" violated: default/web was deleted at 300.000s, earlier than 301000ms after its anchor"),
        format!("FAILED {path}:line 16: property \"db-deleted\" has no example in this run: A pod matching db-0 is evicted."),
        format!("FAILED {path}:line 17: property \"db-marked\" has no example in this run: The controller records \"Marking for deletion\" about a pod matching db-*."),
        "expectations: 4 checked, 4 failed".to_owned(),
    ] {
        assert!(out.contains(&line), "{line}\n---\n{out}");
    }
}

#[test]
fn a_claim_a_run_cannot_judge_is_refused_at_its_line() {
    let (o, path) = run(
        "bad.yaml",
        r#"      - {name: on-time, always: {evicted_in_time: {slack: 1s}}}
      - {name: once, sometimes: {never_deleted: {}}}
"#,
    );
    assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
    let err = stderr(&o);
    for line in [
        format!("{path}:14: expect.all.properties[0].always.evicted_in_time: Invalid value: checked on model configurations only (it needs the legal eviction time)"),
        format!("{path}:15: expect.all.properties[1].sometimes: Invalid value: a safety claim is checked with \"always\"; \"sometimes\" takes deleted or event"),
    ] {
        assert!(err.contains(&line), "{line}\n---\n{err}");
    }
}
