//! What the tests of `taintcheck controller` on a real control plane share: where upstream's
//! binaries are, whether the control plane is built, and one running instance of the
//! controller with its stderr lines and its trace.

#![allow(dead_code)] // each test binary uses its part

use k8s_openapi::api::core::v1 as k8s;
use kube::api::{Api, ObjectMeta, PostParams};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};
use taintcheck_cluster::objects;
use taintcheck_cluster::process::ControlPlane;
use taintcheck_core::api::Taint;

/// upstream/build.sh's binaries.
pub fn bin() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("upstream/bin")
}

/// Whether the control plane is built; if not, skip (printing why) or, under
/// `TAINTCHECK_REQUIRE_UPSTREAM=1`, fail.
pub fn control_plane_built() -> bool {
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

/// A ServiceAccount `namespace/name`.
pub fn account(name: &str, namespace: &str) -> k8s::ServiceAccount {
    k8s::ServiceAccount {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(namespace.into()),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// Sets `node`'s taints to `taints` (a full replacement, as kubectl's edit sends it).
pub fn set_taints(
    rt: &tokio::runtime::Runtime,
    client: &kube::Client,
    node: &str,
    taints: &[Taint],
) {
    let nodes = Api::<k8s::Node>::all(client.clone());
    let mut n = rt.block_on(nodes.get(node)).expect("the node");
    let spec = n.spec.get_or_insert_with(Default::default);
    spec.taints = (!taints.is_empty()).then(|| taints.iter().map(objects::taint).collect());
    rt.block_on(nodes.replace(node, &PostParams::default(), &n))
        .unwrap_or_else(|e| panic!("tainting {node}: {e}"));
}

/// The audit log's accepted DELETEs of `pod`, across both lives of the API server.
pub fn audited_deletes(cp: &ControlPlane, pod: &str) -> usize {
    let text = std::fs::read_to_string(cp.audit_log()).expect("the audit log");
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| {
            e["verb"] == "delete"
                && e["objectRef"]["resource"] == "pods"
                && e["objectRef"]["name"] == pod
                && e["responseStatus"]["code"] == 200
        })
        .count()
}

/// One `taintcheck controller --profile fixed`: its stderr lines as they come, its trace in a
/// file.
pub struct Instance {
    pub child: Child,
    lines: Receiver<String>,
    pub seen: Vec<String>,
    trace: PathBuf,
}

impl Instance {
    /// Started with `kubeconfig`, writing its trace to `trace`, with `flags` added (the
    /// lease's timing, say).
    pub fn start(kubeconfig: &Path, trace: PathBuf, flags: &[&str]) -> Instance {
        let mut child = Command::new(env!("CARGO_BIN_EXE_taintcheck"))
            .args([
                "controller",
                "--profile",
                "fixed",
                "--bind-address",
                "127.0.0.1:0",
            ])
            .args(flags)
            .arg("--kubeconfig")
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
    pub fn wait_for(&mut self, prefix: &str, within: Duration) -> Option<Instant> {
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

    /// Takes the stderr lines written so far into `seen`.
    pub fn drain(&mut self) {
        while let Ok(line) = self.lines.try_recv() {
            self.seen.push(line);
        }
    }

    pub fn signal(&self, signal: i32) {
        // SAFETY: kill(2) on our own child's pid.
        unsafe {
            libc::kill(self.child.id() as i32, signal);
        }
    }

    /// The trace file.
    pub fn trace(&self) -> &Path {
        &self.trace
    }

    /// Its trace so far.
    pub fn records(&self) -> Vec<serde_json::Value> {
        let text = std::fs::read_to_string(&self.trace).expect("the trace is readable");
        text.lines()
            .map(|l| serde_json::from_str(l).expect("a JSON trace line"))
            .collect()
    }

    /// The pods its trace shows it sent a DELETE for.
    pub fn deletes(&self) -> Vec<String> {
        self.records()
            .iter()
            .filter(|r| r["kind"] == "request" && r["verb"] == "delete")
            .map(|r| r["name"].as_str().unwrap_or_default().to_string())
            .collect()
    }

    pub fn requests(&self) -> usize {
        self.records()
            .iter()
            .filter(|r| r["kind"] == "request")
            .count()
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
