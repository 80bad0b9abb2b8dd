//! The scenario corpus (`specs/scenarios/`) on the reference runtime, under every profile: each
//! run must meet the scenario's expectations, and its timeline is snapshot-tested
//! (`tests/snapshots/runtime_scenarios__<scenario>@<profile>.snap`). Virtual time only.

use std::path::{Path, PathBuf};
use std::process::Command;
use taintcheck_core::profile::Profile;
use taintcheck_formats::scenario::{check, parse_scenario};
use taintcheck_formats::trace::to_line;
use taintcheck_runtime::driver::{run_scenario, ClockKind};
use taintcheck_runtime::timeline;

fn corpus() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("specs/scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("specs/scenarios exists")
        .map(|e| e.expect("readable directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
}

#[test]
fn corpus_has_at_least_25_scenarios() {
    assert!(corpus().len() >= 25, "{} scenarios", corpus().len());
}

#[test]
fn every_scenario_meets_its_expectations_and_matches_its_snapshot() {
    let mut failures = Vec::new();
    for path in corpus() {
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let file = path.display().to_string();
        let scenario = parse_scenario(&file, &text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(scenario.name, stem, "a scenario's name is its file name");
        for name in Profile::NAMES {
            let profile = Profile::by_name(name).unwrap();
            let report = run_scenario(&scenario, profile, ClockKind::Virtual);
            let failed = check(&scenario.expectations_for(name), &report.records);
            failures.extend(failed.iter().map(|f| format!("{stem} [{name}] {f}")));
            insta::with_settings!({
                snapshot_suffix => name,
                prepend_module_to_snapshot => true,
                description => scenario.description.trim(),
                omit_expression => true,
            }, {
                insta::assert_snapshot!(stem.clone(), timeline::render(&report.records));
            });
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn runs_are_deterministic_on_the_virtual_clock() {
    let path = corpus()
        .into_iter()
        .find(|p| p.ends_with("n4-orphaned-timer.yaml"))
        .unwrap();
    let scenario = parse_scenario("n4", &std::fs::read_to_string(path).unwrap()).unwrap();
    let runs: Vec<String> = (0..5)
        .map(|_| {
            let r = run_scenario(&scenario, Profile::latest(), ClockKind::Virtual);
            timeline::render(&r.records)
        })
        .collect();
    assert!(runs.windows(2).all(|w| w[0] == w[1]));
}

/// `taintcheck run` streams its records to its outputs as the run makes them (RT-REC-1): for
/// every corpus scenario and profile its timeline, `--trace` file and `--json` trace are what a
/// run that keeps its records shows, byte for byte.
#[test]
fn the_cli_streams_what_a_kept_run_records() {
    let trace = temp_file("streamed.ndjson", "");
    for path in corpus() {
        let file = path.to_str().unwrap();
        let scenario = parse_scenario(file, &std::fs::read_to_string(&path).unwrap()).unwrap();
        for name in Profile::NAMES {
            let profile = Profile::by_name(name).unwrap();
            let kept = run_scenario(&scenario, profile, ClockKind::Virtual).records;
            let (code, stdout, stderr) = taintcheck(&[
                "run",
                file,
                "--profile",
                name,
                "--trace",
                trace.to_str().unwrap(),
            ]);
            assert_eq!(code, 0, "{file} [{name}] {stderr}");
            let shown = format!(
                "scenario {} under profile {name}\n{}",
                scenario.name,
                timeline::render(&kept)
            );
            assert!(stdout.starts_with(&shown), "{file} [{name}]:\n{stdout}");
            assert!(
                stdout[shown.len()..].starts_with("expectations: "),
                "{stdout}"
            );
            let lines: String = kept.iter().map(to_line).collect();
            assert_eq!(
                std::fs::read_to_string(&trace).unwrap(),
                lines,
                "{file} [{name}]"
            );
            let (code, stdout, _) = taintcheck(&["run", file, "--profile", name, "--json"]);
            assert_eq!(code, 0, "{file} [{name}] --json");
            let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
            let records = serde_json::to_value(&kept).unwrap();
            assert_eq!(report["trace"], records, "{file} [{name}] --json");
        }
    }
}

fn taintcheck(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_taintcheck"))
        .args(args)
        .output()
        .expect("taintcheck runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn temp_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("taintcheck-run-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

const SMALL: &str = "\
name: small
nodes:
  - name: node1
pods:
  - {name: web-0, node: node1}
ops:
  - {at: 1s, taint: node1 k=v:NoExecute}
until: 10s
expect:
  all:
    deleted:
      - {pod: web-0, at: 1s}
";

#[test]
fn run_exits_0_when_expectations_hold_and_writes_the_trace() {
    let scenario = temp_file("ok.yaml", SMALL);
    let trace = scenario.with_extension("ndjson");
    let (code, stdout, _) = taintcheck(&[
        "run",
        scenario.to_str().unwrap(),
        "--profile",
        "v1.18",
        "--trace",
        trace.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("expectations: 1 checked, all met"));
    let written = std::fs::read_to_string(trace).unwrap();
    let records = taintcheck_formats::trace::parse_trace("t", &written).unwrap();
    assert!(records.iter().any(|r| matches!(
        r.event,
        taintcheck_formats::trace::TraceEvent::Request { .. }
    )));
}

#[test]
fn run_exits_1_when_an_expectation_fails() {
    let scenario = temp_file("late.yaml", &SMALL.replace("at: 1s}", "at: 5s}"));
    let (code, stdout, _) = taintcheck(&["run", scenario.to_str().unwrap()]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains(
            "expected default/web-0 to be deleted at 5.000s, but it was deleted at 1.000s"
        ),
        "{stdout}"
    );
}

#[test]
fn run_exits_2_on_bad_input_naming_file_line_and_field() {
    let scenario = temp_file(
        "bad.yaml",
        &SMALL.replace("{at: 1s, taint", "{at: soon, taint"),
    );
    let (code, _, stderr) = taintcheck(&["run", scenario.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("bad.yaml:7: ops[0].at: Invalid value: \"soon\""),
        "{stderr}"
    );
    let good = temp_file("good.yaml", SMALL);
    let (code, _, stderr) = taintcheck(&["run", good.to_str().unwrap(), "--profile", "v9"]);
    assert_eq!(code, 2);
    assert!(
        stderr.starts_with("taintcheck: invalid value 'v9' for '--profile <PROFILE>'"),
        "{stderr}"
    );
}

#[test]
fn manifests_in_a_scenario_are_read_and_their_errors_located() {
    // The corpus scenario's manifests, from files and inline, become the starting cluster.
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("specs/scenarios");
    let path = corpus.join("manifest-kubectl-objects.yaml");
    let s = parse_scenario(
        path.to_str().unwrap(),
        &std::fs::read_to_string(&path).unwrap(),
    )
    .unwrap();
    assert_eq!(s.nodes[0].name.to_string(), "n1");
    assert_eq!(s.nodes[0].taints[0].key.to_string(), "dedicated");
    let web = &s.pods[0];
    assert_eq!(
        web.pod.uid.to_string(),
        "0b6d3f4e-2a1c-4d5e-9f8a-7b6c5d4e3f2a"
    );
    assert_eq!(web.pod.tolerations[1].seconds, Some(60));
    assert!(!web.daemon_set, "owned by a StatefulSet");
    assert_eq!(s.pods[1].pod.key.to_string(), "kube-system/log-agent-x7k2p");
    assert!(s.pods[1].daemon_set, "controlled by a DaemonSet");

    // Bad manifests: exit 2, each error with its file, line and field path.
    let manifest = temp_file(
        "bad-pod.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web-1\nspec:\n  tolerations:\n  \
         - {key: a, operator: Exists}\n  - {key: b, operator: Foo}\n",
    );
    let scenario = temp_file(
        "manifests.yaml",
        "name: manifests\nnodes:\n  - manifest: missing-node.yaml\n  - manifest:\n      \
         apiVersion: v1\n      kind: Node\n      metadata: {name: n2}\n      spec:\n        \
         taints: [{key: k, effect: NoExec}]\npods:\n  - manifest: bad-pod.yaml\n  \
         - manifest: bad-pod.yaml\n    daemonSet: true\n",
    );
    let (code, _, stderr) = taintcheck(&["run", scenario.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    let file = scenario.display().to_string();
    let pod = manifest.display().to_string();
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines,
        [
            format!(
                "{file}:3: nodes[0].manifest: Invalid value: \"missing-node.yaml\": cannot read \
                 file: No such file or directory (os error 2)"
            ),
            format!(
                "{file}:9: spec.taints[0].effect: Unsupported value: \"NoExec\": supported \
                 values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\""
            ),
            format!("{file}:13: pods[1].daemonSet: unknown field: supported fields: \"manifest\""),
            format!(
                "{pod}:8: spec.tolerations[1].operator: Unsupported value: \"Foo\": supported \
                 values: \"Equal\", \"Exists\", \"Lt\", \"Gt\""
            ),
        ],
        "{stderr}"
    );
}

/// ENV-13, RT-INF-3: a watch that breaks loses the events its informer received and had not
/// yet delivered, as the model's relist drops the informer's undelivered events; the relist on
/// reconnect delivers the difference, which repairs the cache. The node informer is 5 s
/// behind: the taint written at 10 s would be delivered at 15 s, but the watch breaks at 12 s
/// with it still in transit. The controller sees the taint only through the relist at 22 s,
/// delivered at 27 s, and deletes the pod then under every profile (at 15 s if the informer
/// had kept it).
#[test]
fn a_dropped_watch_loses_undelivered_events_and_the_relist_repairs_the_cache() {
    const BUFFERED: &str = "\
name: buffered-event-lost
runtime: {nodeInformerLag: 5s}
nodes:
  - name: node1
pods:
  - {name: web-0, node: node1}
ops:
  - {at: 10s, taint: node1 outage=true:NoExecute}
  - {at: 12s, dropWatch: nodes, for: 10s}
until: 60s
expect:
  all:
    deleted:
      - {pod: web-0, at: 27s}
";
    let scenario = parse_scenario("buffered.yaml", BUFFERED).unwrap_or_else(|e| panic!("{e}"));
    for name in Profile::NAMES {
        let report = run_scenario(
            &scenario,
            Profile::by_name(name).unwrap(),
            ClockKind::Virtual,
        );
        let failed = check(&scenario.expectations_for(name), &report.records);
        assert!(failed.is_empty(), "[{name}] {failed:?}");
        let timeline = timeline::render(&report.records);
        let first_decision = timeline
            .lines()
            .find(|l| l.contains("default/web-0:"))
            .unwrap_or_else(|| panic!("[{name}] no decision:\n{timeline}"));
        assert!(
            first_decision.trim_start().starts_with("27.000s"),
            "[{name}] the controller saw the taint before the relist:\n{timeline}"
        );
    }
}
