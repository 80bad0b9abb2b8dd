//! Leader election of `taintcheck controller` on a real kube-apiserver with etcd (RT-WORLD-8):
//! of two instances one leads and the other waits without acting; the leader's graceful stop
//! hands the lease over; a leader killed outright is replaced only once its lease has run out;
//! and no pod is deleted twice across the hand-overs. Skipped with the reason when the control
//! plane is not built (failed instead under `TAINTCHECK_REQUIRE_UPSTREAM=1`).

use k8s_openapi::api::core::v1 as k8s;
use kube::api::{Api, PostParams};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};
use taintcheck_cluster::objects;
use taintcheck_cluster::process::ControlPlane;
use taintcheck_model::api::{Taint, TaintEffect};

const NS: &str = "lease-test";

fn bin() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("upstream/bin")
}

fn control_plane_built() -> bool {
    if bin().join("controlplane").is_file() {
        return true;
    }
    let why = "upstream/bin lacks controlplane: run `upstream/build.sh` (needs Go)";
    if std::env::var("TAINTCHECK_REQUIRE_UPSTREAM").as_deref() == Ok("1") {
        panic!("TAINTCHECK_REQUIRE_UPSTREAM=1 but {why}");
    }
    eprintln!("skipped: {why}");
    false
}

/// One `taintcheck controller`: its stderr lines as they come, its trace in a file.
struct Instance {
    child: Child,
    lines: Receiver<String>,
    seen: Vec<String>,
    trace: PathBuf,
}

impl Instance {
    fn start(kubeconfig: &Path, trace: PathBuf) -> Instance {
        let mut child = Command::new(env!("CARGO_BIN_EXE_taintcheck"))
            .args([
                "controller",
                "--profile",
                "fixed",
                "--bind-address",
                "127.0.0.1:0",
                "--leader-elect-lease-duration",
                "4s",
                "--leader-elect-renew-deadline",
                "2s",
                "--kubeconfig",
            ])
            .arg(kubeconfig)
            .stdout(std::fs::File::create(&trace).expect("the trace file is writable"))
            .stderr(Stdio::piped())
            .spawn()
            .expect("taintcheck controller starts");
        let err = child.stderr.take().expect("stderr is piped");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Instance {
            child,
            lines,
            seen: Vec::new(),
            trace,
        }
    }

    /// Waits up to `within` for a stderr line starting with `prefix`; when it came.
    fn wait_for(&mut self, prefix: &str, within: Duration) -> Option<Instant> {
        let until = Instant::now() + within;
        if self.seen.iter().any(|l| l.starts_with(prefix)) {
            return Some(Instant::now());
        }
        loop {
            let left = until.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let hit = line.starts_with(prefix);
                    self.seen.push(line);
                    if hit {
                        return Some(Instant::now());
                    }
                }
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => return None,
            }
        }
    }

    fn signal(&self, signal: i32) {
        // SAFETY: kill(2) on our own child's pid.
        unsafe {
            libc::kill(self.child.id() as i32, signal);
        }
    }

    /// The pods its trace shows it sent a DELETE for.
    fn deletes(&self) -> Vec<String> {
        let text = std::fs::read_to_string(&self.trace).expect("the trace is readable");
        text.lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("a JSON trace line"))
            .filter(|r| r["kind"] == "request" && r["verb"] == "delete")
            .map(|r| r["name"].as_str().unwrap_or_default().to_string())
            .collect()
    }

    fn requests(&self) -> usize {
        let text = std::fs::read_to_string(&self.trace).expect("the trace is readable");
        text.lines()
            .filter(|l| l.contains(r#""kind":"request""#))
            .count()
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Creates a pod bound to `node`, without tolerations, and waits until the API no longer has
/// it (the leader evicted it at once: the node has a NoExecute taint).
fn evicted(rt: &tokio::runtime::Runtime, pods: &Api<k8s::Pod>, name: &str, node: &str) {
    let pod = objects::pod(NS, name, Some(node), &[], 0);
    rt.block_on(pods.create(&PostParams::default(), &pod))
        .unwrap_or_else(|e| panic!("creating {name}: {e}"));
    let until = Instant::now() + Duration::from_secs(30);
    while rt.block_on(pods.get_opt(name)).expect("a GET").is_some() {
        assert!(Instant::now() < until, "{name} was not evicted within 30 s");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn one_leader_at_a_time_and_no_pod_deleted_twice() {
    if !control_plane_built() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("taintcheck-lease-{}", std::process::id()));
    let cp = ControlPlane::start(
        &bin().join("controlplane"),
        &dir.join("controlplane"),
        None,
        Duration::from_secs(120),
    )
    .expect("the control plane starts");
    let kubeconfig = cp.kubeconfig();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let client = rt
        .block_on(taintcheck_cluster::client(Some(&kubeconfig)))
        .expect("a client");
    let namespace = k8s::Namespace {
        metadata: kube::api::ObjectMeta {
            name: Some(NS.into()),
            ..Default::default()
        },
        ..Default::default()
    };
    rt.block_on(
        Api::<k8s::Namespace>::all(client.clone()).create(&PostParams::default(), &namespace),
    )
    .expect("the namespace");
    // ServiceAccount admission needs it; no controller-manager makes it here.
    let account = k8s::ServiceAccount {
        metadata: kube::api::ObjectMeta {
            name: Some("default".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    rt.block_on(
        Api::<k8s::ServiceAccount>::namespaced(client.clone(), NS)
            .create(&PostParams::default(), &account),
    )
    .expect("the namespace's default ServiceAccount");
    let taint = Taint::new("maintenance", "true", TaintEffect::NoExecute);
    let node = objects::node("n1", "lease", std::slice::from_ref(&taint));
    rt.block_on(Api::<k8s::Node>::all(client.clone()).create(&PostParams::default(), &node))
        .expect("the node");
    let pods = Api::<k8s::Pod>::namespaced(client.clone(), NS);

    // Two instances: exactly one leads; the other waits and sends nothing.
    let begun = Instant::now();
    let mut a = Instance::start(&kubeconfig, dir.join("a.ndjson"));
    let mut b = Instance::start(&kubeconfig, dir.join("b.ndjson"));
    let until = begun + Duration::from_secs(60);
    let a_leads = loop {
        if a.wait_for("ready ", Duration::from_millis(50)).is_some() {
            break true;
        }
        if b.wait_for("ready ", Duration::from_millis(50)).is_some() {
            break false;
        }
        assert!(
            Instant::now() < until,
            "no instance led: {:?} {:?}",
            a.seen,
            b.seen
        );
    };
    eprintln!("first leader ready after {:?}", begun.elapsed());
    let (mut leader, mut standby) = if a_leads { (a, b) } else { (b, a) };
    assert!(
        standby
            .wait_for("leading", Duration::from_secs(3))
            .is_none(),
        "both lead: {:?}",
        standby.seen
    );
    assert!(
        standby
            .wait_for(
                "waiting for the lease kube-system/taintcheck-controller",
                Duration::ZERO
            )
            .is_some(),
        "{:?}",
        standby.seen
    );
    evicted(&rt, &pods, "p1", "n1");
    assert_eq!(standby.requests(), 0, "the standby sent requests");

    // A graceful stop hands the lease over: the standby leads within a lease's duration
    // (it notices the release at the latest when the old term would have run out).
    let stopped = Instant::now();
    leader.signal(libc::SIGTERM);
    assert_eq!(
        leader.child.wait().unwrap().code(),
        Some(0),
        "{:?}",
        leader.seen
    );
    let led = standby
        .wait_for("ready ", Duration::from_secs(30))
        .unwrap_or_else(|| panic!("the standby never led: {:?}", standby.seen));
    eprintln!("hand-over after a graceful stop: {:?}", led - stopped);
    assert!(
        led - stopped < Duration::from_secs(10),
        "{:?}",
        led - stopped
    );
    evicted(&rt, &pods, "p2", "n1");
    let (old, new) = (leader, standby);

    // A leader killed outright keeps its lease until it runs out: its successor leads no
    // sooner than the lease's 4 s after the last renewal (which is at most 2 s before the kill).
    let mut third = Instance::start(&kubeconfig, dir.join("c.ndjson"));
    assert!(
        third
            .wait_for("waiting for the lease", Duration::from_secs(30))
            .is_some(),
        "{:?}",
        third.seen
    );
    std::thread::sleep(Duration::from_secs(1));
    assert!(
        third.seen.iter().all(|l| !l.starts_with("leading")),
        "{:?}",
        third.seen
    );
    let killed = Instant::now();
    new.signal(libc::SIGKILL);
    let led = third
        .wait_for("ready ", Duration::from_secs(30))
        .unwrap_or_else(|| panic!("no successor after a kill: {:?}", third.seen));
    eprintln!("hand-over after a kill: {:?}", led - killed);
    assert!(
        led - killed >= Duration::from_secs(1),
        "the lease was taken {:?} after the kill, before it ran out",
        led - killed
    );
    evicted(&rt, &pods, "p3", "n1");

    // Each pod was deleted once, by whichever instance led when it appeared.
    assert_eq!(old.deletes(), ["p1"]);
    assert_eq!(new.deletes(), ["p2"]);
    assert_eq!(third.deletes(), ["p3"]);
    third.signal(libc::SIGTERM);
    drop((old, new, third));
    drop(cp);
    let _ = std::fs::remove_dir_all(&dir);
}
