//! `conform`, `expect` and `import` as a user runs them: exit codes, messages, the witness
//! round trip through `taintcheck run`, a recording imported and checked.

use std::path::{Path, PathBuf};
use std::process::Command;

fn taintcheck(args: &[&str], stdin: Option<&str>) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_taintcheck"));
    cmd.args(args);
    let out = match stdin {
        None => cmd.output().expect("taintcheck runs"),
        Some(text) => {
            use std::io::Write;
            let mut child = cmd
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("taintcheck runs");
            child
                .stdin
                .take()
                .unwrap()
                .write_all(text.as_bytes())
                .unwrap();
            child.wait_with_output().unwrap()
        }
    };
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("taintcheck-cli-oracle-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// The runtime's trace of the N1 scenario (the untaint arrives 2 s late).
fn n1_trace() -> PathBuf {
    let trace = scratch("n1.ndjson");
    let scenario = root().join("specs/scenarios/n1-timer-fires-before-untaint-arrives.yaml");
    let (code, _, err) = taintcheck(
        &[
            "run",
            scenario.to_str().unwrap(),
            "--trace",
            trace.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(code, 0, "{err}");
    trace
}

#[test]
fn conform_accepts_within_the_bound_and_explains_and_reproduces_a_violation() {
    let trace = n1_trace();
    let t = trace.to_str().unwrap();
    let (code, out, _) = taintcheck(&["conform", t, "--latency-bound-ms", "2000"], None);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("conforms to latest (latency bound 2000 ms)"),
        "{out}"
    );

    let witness = scratch("w.yaml");
    let w = witness.to_str().unwrap();
    let (code, out, _) = taintcheck(
        &["conform", t, "--latency-bound-ms", "0", "--witness", w],
        None,
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(
            ":6: default/web-0 should have been marked for deletion by 310.200s (it \
                      tolerates maintenance for 300 s from 10.000s"
        ),
        "{out}"
    );
    // The witness runs, and the reference runtime meets its expectation.
    let (code, out, err) = taintcheck(&["run", w, "--profile", "latest"], None);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("expectations: 1 checked, all met"), "{out}");
}

#[test]
fn conform_reads_a_stream_and_reports_json() {
    let text = std::fs::read_to_string(n1_trace()).unwrap();
    let (code, out, _) = taintcheck(
        &["conform", "-", "--json", "--latency-bound-ms", "0"],
        Some(&text),
    );
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["verdict"], "violation");
    assert_eq!(v["violation"]["line"], 6);
    assert_eq!(v["violation"]["pod"], "default/web-0");
}

/// `conform - --progress` speaks before the stream ends: a line on stderr naming the line
/// reached while stdin is still open, then the verdict at its end.
#[test]
fn conform_reports_progress_on_a_stream_before_its_end() {
    use std::io::{BufRead, BufReader, Write};
    let mut child = Command::new(env!("CARGO_BIN_EXE_taintcheck"))
        .args(["conform", "-", "--progress", "0", "--threads", "1"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("taintcheck runs");
    let mut stdin = child.stdin.take().unwrap();
    let lines = [
        r#"{"t":0,"kind":"header","version":1,"source":"test"}"#,
        r#"{"t":0,"kind":"node_added","rv":1,"node":{"name":"n1","taints":[]}}"#,
        r#"{"t":1500,"kind":"pod_added","rv":2,"pod":{"key":{"namespace":"default","name":"web-0"},"uid":"u1","node_name":"n1","tolerations":[]}}"#,
    ];
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    stdin.flush().unwrap();
    // Read stderr on a thread, so that a missing line fails the test instead of hanging it.
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let (to, from) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        for _ in 0..3 {
            let mut line = String::new();
            stderr.read_line(&mut line).unwrap();
            to.send(line).unwrap();
        }
    });
    let wait = std::time::Duration::from_secs(60);
    let progress: Vec<String> = (0..3).map(|_| from.recv_timeout(wait).unwrap()).collect();
    assert_eq!(
        progress[2], "-: line 3 at 1.500s: no violation found so far (1 pods tracked, 1 states)\n",
        "{progress:?}"
    );
    assert!(
        progress[1].starts_with("-: line 2 at 0.000s"),
        "{progress:?}"
    );
    drop(stdin);
    reader.join().unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let out = String::from_utf8_lossy(&out.stdout);
    assert!(out.starts_with("-: conforms to latest"), "{out}");
}

#[test]
fn conform_rejects_bad_input_with_the_line() {
    let header = r#"{"t":0,"kind":"header","version":1,"source":"test"}"#;
    let cases = [
        (format!("{header}\nnot json\n"), "-:2: "),
        (
            format!("{header}\n{{\"t\":5,\"kind\":\"controller_restarted\"}}\n{{\"t\":4,\"kind\":\"controller_restarted\"}}\n"),
            "-:3: t: time 0.004s is before the previous line's 0.005s",
        ),
        (
            format!("{header}\n{{\"t\":1,\"kind\":\"node_deleted\",\"rv\":1,\"name\":\"n9\"}}\n"),
            "-:2: node n9 deleted, but the trace never added it",
        ),
    ];
    for (text, message) in cases {
        let (code, _, err) = taintcheck(&["conform", "-"], Some(&text));
        assert_eq!(code, 2, "{err}");
        assert!(err.starts_with(message), "{err}");
    }
}

#[test]
fn a_recording_is_imported_and_checked() {
    let fixtures = root().join("tests/fixtures/recordings/evicted-after-300s");
    let trace = scratch("cluster.ndjson");
    let (code, _, err) = taintcheck(
        &[
            "import",
            fixtures.join("pods.json").to_str().unwrap(),
            fixtures.join("nodes.json").to_str().unwrap(),
            fixtures.join("events.json").to_str().unwrap(),
            "-o",
            trace.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(code, 0, "{err}");
    let (code, out, _) = taintcheck(
        &[
            "conform",
            trace.to_str().unwrap(),
            "--latency-bound-ms",
            "2000",
        ],
        None,
    );
    assert_eq!(code, 0, "{out}");
    let (code, _, err) = taintcheck(
        &["import", fixtures.join("missing.json").to_str().unwrap()],
        None,
    );
    assert_eq!(code, 2, "{err}");
}

#[test]
fn import_json_summarises_lines_and_skips() {
    let fixtures = root().join("tests/fixtures/recordings/evicted-after-300s");
    let trace = scratch("summary.ndjson");
    let t = trace.to_str().unwrap();
    let (code, out, err) = taintcheck(
        &[
            "import",
            fixtures.join("pods.json").to_str().unwrap(),
            fixtures.join("nodes.json").to_str().unwrap(),
            fixtures.join("events.json").to_str().unwrap(),
            "-o",
            t,
            "--json",
        ],
        None,
    );
    assert_eq!(code, 0, "{out}");
    // The skips, per reason, on stderr as well.
    assert!(err.starts_with("skipped: "), "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["output"], t);
    let written = std::fs::read_to_string(&trace).unwrap().lines().count();
    assert_eq!(v["lines"].as_u64(), Some(written as u64));
    let skipped = v["skipped"].as_object().unwrap();
    assert!(!skipped.is_empty(), "{v}");
    let reasons = [
        "watch_event_type",
        "other_kind",
        "unseen_deletion",
        "unchanged",
        "other_event",
        "event_without_time",
        "event_repeated",
        "duplicate",
    ];
    for (reason, count) in skipped {
        assert!(reasons.contains(&reason.as_str()), "{reason}");
        assert!(count.as_u64().unwrap() > 0, "{reason}");
    }
    // The trace goes to stdout without --output, so --json needs it.
    let (code, _, err) = taintcheck(
        &[
            "import",
            fixtures.join("pods.json").to_str().unwrap(),
            "--json",
        ],
        None,
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.starts_with("taintcheck: the following required arguments"),
        "{err}"
    );
}

#[test]
fn expect_states_the_envelope_per_incarnation() {
    let scenario = root().join("specs/scenarios/r2-125332-resurrected-tombstone.yaml");
    let s = scenario.to_str().unwrap();
    let (code, out, err) = taintcheck(&["expect", s, "--profile", "v1.18"], None);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(
            "default/web-0 (uid web-0-1): must be deleted within [300.000s, 300.200s]: it tolerates \
                      node.kubernetes.io/unreachable for 300 s from 0.000s"
        ),
        "{out}"
    );
    // The resurrected tombstone (N3) is a race in 1.18: the successor may or may not go.
    assert!(
        out.contains("default/web-0 (uid web-0-2): may be deleted within [700.000s, 700.200s]"),
        "{out}"
    );
    let (code, out, _) = taintcheck(&["expect", s, "--profile", "fixed", "--json"], None);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["pods"][1]["verdict"], "must_delete");
    assert_eq!(v["pods"][1]["uid"], "web-0-2");
    let forever = root().join("specs/scenarios/t1-90794-forever-does-not-cancel.yaml");
    let (_, out, _) = taintcheck(
        &["expect", forever.to_str().unwrap(), "--profile", "fixed"],
        None,
    );
    assert!(
        out.contains("db-0 (uid db-0-1): must not be deleted"),
        "{out}"
    );
}

/// Failures armed before the pod exists (`failRequests` at 0 s) count for it (ORACLE-10): on
/// S2, no legal behaviour of upstream deletes the pod (it gives up after five failed DELETEs),
/// and `fixed`'s retry comes after the failures.
#[test]
fn expect_counts_failures_armed_before_the_pod_exists() {
    for name in ["s2-140639-failing-deletes", "proxied/rt-s2-failing-deletes"] {
        let scenario = root().join(format!("specs/scenarios/{name}.yaml"));
        let s = scenario.to_str().unwrap();
        for profile in ["v1.18", "latest"] {
            let (code, out, err) = taintcheck(&["expect", s, "--profile", profile], None);
            assert_eq!(code, 0, "{err}");
            assert!(
                out.contains("default/web-0 (uid web-0-1): must not be deleted"),
                "{name} {profile}: {out}"
            );
        }
        let (_, out, _) = taintcheck(&["expect", s, "--profile", "fixed"], None);
        assert!(
            out.contains("default/web-0 (uid web-0-1): must be deleted within"),
            "{name}: {out}"
        );
    }
}

/// A reason speaks of the API state that produced its window (ORACLE-10): when tolerationSeconds
/// changes while a deletion is scheduled, upstream keeps the first deadline, and the reason cites
/// the toleration as it was then, not the final one; the fixed design's window follows the new
/// value and so does its reason.
#[test]
fn expect_reasons_cite_the_state_that_set_the_window() {
    let taint = "when the taint was first observable";
    let cases = [
        (
            "t2-102993-lengthened-seconds-ignored",
            "latest",
            format!(
                "must be deleted within [10.000s, 10.300s]: it tolerates maintenance for 10 s \
                 from 0.000s, {taint} (as the API showed it from 0.000s to 5.000s); at 10.000s: \
                 it tolerates maintenance for 600 s from 0.000s, {taint}\n"
            ),
        ),
        (
            "t2-102993-lengthened-seconds-ignored",
            "fixed",
            format!(
                "must be deleted within [600.000s, 600.400s]: it tolerates maintenance for 600 s \
                 from 0.000s, {taint}\n"
            ),
        ),
        (
            "t2-108982-shortened-seconds-ignored",
            "v1.18",
            format!(
                "must be deleted within [100.000s, 100.200s]: it tolerates maintenance for 100 s \
                 from 0.000s, {taint} (as the API showed it from 0.000s to 5.000s); at 100.000s: \
                 it tolerates maintenance for 10 s from 0.000s, {taint}\n"
            ),
        ),
        (
            "t2-108982-shortened-seconds-ignored",
            "fixed",
            format!(
                "must be deleted within [10.000s, 10.400s]: it tolerates maintenance for 10 s \
                 from 0.000s, {taint}\n"
            ),
        ),
    ];
    for (name, profile, expected) in cases {
        let scenario = root().join(format!("specs/scenarios/{name}.yaml"));
        let (code, out, err) = taintcheck(
            &["expect", scenario.to_str().unwrap(), "--profile", profile],
            None,
        );
        assert_eq!(code, 0, "{err}");
        assert!(out.contains(&expected), "{name} {profile}: {out}");
    }
}

#[test]
fn conform_json_reports_bad_input_as_json() {
    let node = r#"{"t":0,"kind":"node_added","rv":1,"node":{"name":"n1","taints":[]}}"#;
    let unknown_profile =
        r#"{"t":0,"kind":"header","version":1,"source":"test","profile":"v1.99"}"#;
    let files = [
        ("no-header.ndjson", format!("{node}\n")),
        ("empty.ndjson", String::new()),
        ("profile.ndjson", format!("{unknown_profile}\n{node}\n")),
    ];
    let expected = [
        "no-header.ndjson:1: kind: expected the header line first (\"kind\":\"header\")",
        "empty.ndjson:1: kind: expected the header line first (\"kind\":\"header\")",
        "profile.ndjson:1: profile: Unsupported value: \"v1.99\": supported values: ",
    ];
    for ((file, text), message) in files.iter().zip(expected) {
        let path = scratch(file);
        std::fs::write(&path, text).unwrap();
        let (code, out, err) = taintcheck(&["conform", path.to_str().unwrap(), "--json"], None);
        assert_eq!(code, 2, "{file}: {out}{err}");
        assert_eq!(err, "", "{file}: nothing but the JSON verdict");
        let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
        assert_eq!(v["verdict"], "bad_input", "{file}");
        let shown = v["message"].as_str().unwrap();
        assert!(shown.contains(message), "{file}: {shown}");
    }
    // Without --json the same input is reported as text on stderr.
    let path = scratch("no-header.ndjson");
    let (code, out, err) = taintcheck(&["conform", path.to_str().unwrap()], None);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(err.contains("no-header.ndjson:1: kind: expected the header line first"));
    // Arguments too: a missing trace file under --json.
    let missing = scratch("missing.ndjson");
    let (code, out, err) = taintcheck(&["conform", missing.to_str().unwrap(), "--json"], None);
    assert_eq!((code, err.as_str()), (2, ""));
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["verdict"], "bad_input");
}
