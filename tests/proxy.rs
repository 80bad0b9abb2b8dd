//! `taintcheck proxy` (specs/proxy.md): real controllers recorded through it. From fixtures of
//! real runs (tests/fixtures/recordings/upstream-proxy/): the proxy's exchange log imports
//! (IMPORT-11), conforms to its release, and shows the controller's requests and Events the
//! audit log of the same run shows. On the real control plane (upstream/build.sh's binaries;
//! skipped with the reason when they are missing, failed under
//! `TAINTCHECK_REQUIRE_UPSTREAM=1`): the real-time corpus on the newest release's controller and
//! on `taintcheck controller` (kube-rs) through the proxy, every run's two traces agreeing.

mod cli_support;
mod controller_support;

use cli_support::{stderr, stdout, taintcheck};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const FIXTURES: &str = "tests/fixtures/recordings/upstream-proxy";

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tc-proxy-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// `taintcheck import FILES -o OUT`: the trace's lines.
fn import(files: &[String], out: &Path) -> Vec<Value> {
    let mut args = vec!["import".to_string()];
    args.extend(files.iter().cloned());
    args.extend(["-o".to_string(), out.display().to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = taintcheck(&args);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    std::fs::read_to_string(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The controller's requests (verb, pod, answer) and Events (pod, message) with their counts.
fn outputs(trace: &[Value]) -> BTreeMap<String, usize> {
    let mut requests = BTreeMap::new();
    let mut out = BTreeMap::new();
    for l in trace {
        let key = match l["kind"].as_str() {
            Some("request") => {
                requests.insert(
                    l["id"].as_u64(),
                    format!("{} {}/{}", l["verb"], l["namespace"], l["name"]),
                );
                continue;
            }
            Some("response") => format!("{} → {}", requests[&l["id"].as_u64()], l["result"]),
            Some("event") => format!("{}/{}: {}", l["namespace"], l["name"], l["message"]),
            _ => continue,
        };
        *out.entry(key).or_default() += 1;
    }
    out
}

#[test]
fn a_real_controllers_exchanges_import_conform_and_match_its_audit_log() {
    for (run, profile) in [
        ("v1.37.2-toleration-timer", "1.37"),
        ("v1.18.6-toleration-timer", "1.18"),
    ] {
        let dir = format!("{FIXTURES}/{run}");
        let proxy_trace = scratch(&format!("{run}-proxy.ndjson"));
        let proxy = import(&[format!("{dir}/proxy.ndjson")], &proxy_trace);
        assert_eq!(proxy[0]["source"], "proxy", "{run}");
        assert_eq!(
            proxy[0]["observed"],
            serde_json::json!(["requests", "events"])
        );
        let audit = import(
            &["audit.log", "pods.json", "nodes.json", "events.json"].map(|f| format!("{dir}/{f}")),
            &scratch(&format!("{run}-audit.ndjson")),
        );
        let seen = outputs(&proxy);
        assert!(
            seen.keys()
                .any(|k| k.starts_with("\"delete\"") && k.ends_with("\"ok\"")),
            "{run}: the controller's eviction is in the proxy's trace: {seen:?}"
        );
        assert_eq!(
            seen,
            outputs(&audit),
            "{run}: the proxy and the audit log disagree"
        );
        let judged = taintcheck(&[
            "conform",
            proxy_trace.to_str().unwrap(),
            "--profile",
            profile,
            "--latency-bound-ms",
            "500",
        ]);
        assert_eq!(judged.status.code(), Some(0), "{run}: {}", stdout(&judged));
    }
}

/// Upstream's controller speaks protobuf unless told otherwise; the proxy logs such bodies by
/// their type only, and the import says what to change, at the line.
#[test]
fn a_protobuf_exchange_is_refused_with_the_flag_that_avoids_it() {
    let text = std::fs::read_to_string(format!("{FIXTURES}/v1.37.2-toleration-timer/proxy.ndjson"))
        .unwrap();
    let mut lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let at = lines
        .iter()
        .position(|l| l["kind"] == "Exchange" && l["verb"] == "get")
        .expect("the controller's GET of its pod");
    let o = lines[at].as_object_mut().unwrap();
    o.remove("responseObject");
    o.insert(
        "contentType".into(),
        "application/vnd.kubernetes.protobuf".into(),
    );
    let edited = scratch("protobuf.ndjson");
    let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&edited, body).unwrap();
    let out = taintcheck(&["import", edited.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("protobuf.ndjson:{}: contentType", at + 1))
            && err.contains("--kube-api-content-type=application/json"),
        "{err}"
    );
}

/// `taintcheck upstream --proxy --json FILES` with `flags`: one report per scenario; each run's
/// proxy trace conforms and shows exactly the requests and Events of the audit log.
fn corpus_through_the_proxy(flags: &[&str]) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("specs/scenarios/realtime");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .map(|p| p.display().to_string())
        .collect();
    files.sort();
    let mut args = vec!["upstream", "--proxy", "--json"];
    args.extend(flags);
    args.extend(files.iter().map(String::as_str));
    let out = taintcheck(&args);
    let text = stdout(&out);
    let reports: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON report a line"))
        .collect();
    assert_eq!(reports.len(), files.len(), "{text}\n{}", stderr(&out));
    let mut requests = 0;
    for r in &reports {
        let p = &r["proxy"];
        assert_eq!(p["conforms"], true, "the proxy's trace: {r}");
        assert_eq!(p["differences"], serde_json::json!([]), "{r}");
        assert_eq!(p["requests"], r["requests"], "{r}");
        assert_eq!(r["conforms"], true, "the audit log's trace: {r}");
        requests += r["requests"].as_u64().unwrap_or(0);
    }
    assert!(requests > 0, "the corpus evicts: {text}");
    assert_eq!(out.status.code(), Some(0), "{text}");
}

/// One control plane at a time: runs are timed against a latency bound.
static CONTROL_PLANE: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn the_realtime_corpus_through_the_proxy_on_the_newest_release() {
    let bin = controller_support::bin();
    if !controller_support::control_plane_built() {
        return;
    }
    if !bin.join("taint-eviction-v1.37.2").is_file() {
        let why = "upstream/bin lacks taint-eviction-v1.37.2: run `upstream/build.sh 1.37.2`";
        assert!(
            std::env::var("TAINTCHECK_REQUIRE_UPSTREAM").as_deref() != Ok("1"),
            "TAINTCHECK_REQUIRE_UPSTREAM=1 but {why}"
        );
        eprintln!("skipped: {why}");
        return;
    }
    let _turn = CONTROL_PLANE.lock().unwrap_or_else(|e| e.into_inner());
    corpus_through_the_proxy(&["--kubernetes", "1.37.2"]);
}

#[test]
fn the_realtime_corpus_through_the_proxy_on_taintchecks_own_controller() {
    if !controller_support::control_plane_built() {
        return;
    }
    let _turn = CONTROL_PLANE.lock().unwrap_or_else(|e| e.into_inner());
    corpus_through_the_proxy(&["--ours", "fixed"]);
}

/// `taintcheck proxy`'s bad input: a kubeconfig that is missing, an API server whose
/// certificate it cannot check, an address in use; each exits 2 naming what is wrong.
#[test]
fn the_proxys_bad_input_is_named_with_exit_2() {
    let trace = scratch("never.ndjson");
    let trace = trace.to_str().unwrap();
    let out = taintcheck(&[
        "proxy",
        "--kubeconfig",
        "no/such.kubeconfig",
        "--trace",
        trace,
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no/such.kubeconfig"),
        "{}",
        stderr(&out)
    );

    let kubeconfig = |server: &str| {
        let path = scratch(&format!("{}.kubeconfig", server.len()));
        let text = serde_json::json!({
            "apiVersion": "v1", "kind": "Config",
            "clusters": [{"name": "c", "cluster": {"server": server}}],
            "users": [{"name": "u", "user": {"token": "t"}}],
            "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
            "current-context": "x",
        });
        std::fs::write(&path, text.to_string()).unwrap();
        path.display().to_string()
    };
    let unchecked = kubeconfig("https://127.0.0.1:6443");
    let out = taintcheck(&["proxy", "--kubeconfig", &unchecked, "--trace", trace]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no certificate authority"),
        "{}",
        stderr(&out)
    );

    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let plain = kubeconfig("http://127.0.0.1:6443/");
    let out = taintcheck(&[
        "proxy",
        "--kubeconfig",
        &plain,
        "--listen",
        &addr,
        "--trace",
        trace,
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("--listen {addr}: cannot listen")),
        "{}",
        stderr(&out)
    );
}
