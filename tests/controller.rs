//! `taintcheck controller` on a real kube-apiserver with etcd (upstream/build.sh's control
//! plane; skipped with the reason when it is not built, failed instead under
//! `TAINTCHECK_REQUIRE_UPSTREAM=1`): the real-time corpus under `fixed` and `latest`, judged by
//! `conform` against the same profile; health, metrics and a graceful stop; and the errors at
//! start. Spec: RT-WORLD-1..RT-WORLD-8; the hand-over between instances is
//! tests/controller_identity.rs.

mod cli_support;
mod controller_support;

use cli_support::{stderr, stdout, taintcheck};
use controller_support::{bin, control_plane_built};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use taintcheck_cluster::process::ControlPlane;

/// The tests that start a control plane take turns: runs are timed against a latency bound,
/// and two API servers with etcd at once would share the machine's cores.
static CONTROL_PLANE: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn realtime() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("specs/scenarios/realtime");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("specs/scenarios/realtime exists")
        .map(|e| e.expect("readable directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .map(|p| p.display().to_string())
        .collect();
    files.sort();
    files
}

/// `taintcheck upstream --ours profile --json files`: one report per file, and its exit code.
fn run_ours(profile: &str, files: &[String]) -> (Vec<serde_json::Value>, Option<i32>) {
    let mut args = vec!["upstream", "--ours", profile, "--json"];
    args.extend(files.iter().map(String::as_str));
    let out = taintcheck(&args);
    let text = stdout(&out);
    let reports: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON report a line"))
        .collect();
    assert_eq!(reports.len(), files.len(), "{text}\n{}", stderr(&out));
    (reports, out.status.code())
}

/// The corpus under `profile` on the control plane: one report per scenario.
fn corpus_under(profile: &str) -> Vec<serde_json::Value> {
    let (reports, code) = run_ours(profile, &realtime());
    for r in &reports {
        assert_eq!(r["profile"], profile, "{r}");
        assert_eq!(r["conforms"], true, "false alarm or defect: {r}");
        assert_eq!(r["expect_failures"], serde_json::json!([]), "{r}");
        assert_eq!(r["envelope_failures"], serde_json::json!([]), "{r}");
    }
    assert_eq!(code, Some(0));
    reports
}

fn deletions<'a>(reports: &'a [serde_json::Value], scenario: &str) -> &'a serde_json::Value {
    &reports
        .iter()
        .find(|r| r["scenario"] == scenario)
        .unwrap_or_else(|| panic!("{scenario} was run"))["deletions"]
}

/// Every trace of `taintcheck controller` conforms to its own profile, meets the scenario's
/// expectations for it and lies in the envelope; and `fixed` does not show the races the
/// corpus exhibits for upstream: a timer that outlives the untaint or its node, and a
/// toleration's changed seconds ignored.
#[test]
fn the_realtime_corpus_under_fixed_and_latest_on_a_real_api_server() {
    if !control_plane_built() {
        return;
    }
    let _turn = CONTROL_PLANE.lock().unwrap_or_else(|e| e.into_inner());
    let fixed = corpus_under("fixed");
    let _latest = corpus_under("latest");
    for scenario in ["rt-n1-timer-vs-untaint", "rt-node-deleted-timer"] {
        assert_eq!(
            deletions(&fixed, scenario),
            &serde_json::json!([]),
            "{scenario}"
        );
    }
    let shortened = deletions(&fixed, "rt-t2-shortened-seconds-ignored");
    assert_eq!(shortened.as_array().map(Vec::len), Some(1), "{shortened}");
}

fn http_get(addr: &str, path: &str) -> String {
    let mut s = TcpStream::connect(addr).expect("the health server accepts");
    write!(s, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

/// Started against the control plane: ready once listed, healthy, metrics in Prometheus
/// text, and a SIGTERM ends it with exit 0 promptly. With a token the API server refuses, it
/// exits 2 at once, naming the refusal.
#[test]
fn health_metrics_graceful_stop_and_a_refused_token() {
    if !control_plane_built() {
        return;
    }
    let _turn = CONTROL_PLANE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = std::env::temp_dir().join(format!("taintcheck-controller-{}", std::process::id()));
    let cp = ControlPlane::start(
        &bin().join("controlplane"),
        &dir.join("controlplane"),
        None,
        Duration::from_secs(120),
    )
    .expect("the control plane starts");
    let kubeconfig = cp.kubeconfig();

    let mut child = Command::new(env!("CARGO_BIN_EXE_taintcheck"))
        .args([
            "controller",
            "--bind-address",
            "127.0.0.1:0",
            "--kubeconfig",
        ])
        .arg(&kubeconfig)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("taintcheck controller starts");
    let mut err = BufReader::new(child.stderr.take().unwrap());
    // It waits for its lease, leads, then lists and is ready.
    let mut line = String::new();
    let mut before = Vec::new();
    while err.read_line(&mut line).unwrap() > 0 && !line.starts_with("ready ") {
        before.push(std::mem::take(&mut line));
    }
    assert!(
        line.starts_with("ready taint-eviction-controller"),
        "{before:?} {line}"
    );
    assert!(
        before.len() == 2
            && before[0].starts_with("waiting for the lease kube-system/taintcheck-controller as ")
            && before[1].starts_with("leading: the lease kube-system/taintcheck-controller"),
        "{before:?}"
    );
    let addr = line
        .rsplit("http://")
        .next()
        .map(str::trim)
        .expect("the ready line names the address")
        .to_string();
    assert!(addr.starts_with("127.0.0.1:"), "{addr}");
    let health = http_get(&addr, "/healthz");
    assert!(
        health.starts_with("HTTP/1.1 200") && health.ends_with("ok\n"),
        "{health}"
    );
    let metrics = http_get(&addr, "/metrics");
    assert!(
        metrics.contains("\ntaint_eviction_controller_pod_deletions_total 0\n"),
        "{metrics}"
    );

    let begun = Instant::now();
    // SAFETY: kill(2) on our own child's pid.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    assert!(
        begun.elapsed() < Duration::from_secs(10),
        "{:?}",
        begun.elapsed()
    );

    let text = std::fs::read_to_string(&kubeconfig).unwrap();
    let refused = dir.join("refused.kubeconfig");
    let token = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("token: "))
        .expect("the admin kubeconfig has a token");
    std::fs::write(&refused, text.replace(token, "not-a-token")).unwrap();
    let begun = Instant::now();
    let out = taintcheck(&[
        "controller",
        "--bind-address",
        "127.0.0.1:0",
        "--kubeconfig",
        &refused.display().to_string(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("401"), "{}", stderr(&out));
    assert!(
        begun.elapsed() < Duration::from_secs(20),
        "{:?}",
        begun.elapsed()
    );
    drop(cp);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A kubeconfig that cannot be read is named, with exit 2, before anything starts.
#[test]
fn a_missing_kubeconfig_is_named() {
    let out = taintcheck(&["controller", "--kubeconfig", "/nonexistent/kubeconfig"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("/nonexistent/kubeconfig"),
        "{}",
        stderr(&out)
    );
}
