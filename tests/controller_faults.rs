//! `taintcheck controller` when its API server fails (RT-WORLD-9), on a real kube-apiserver
//! with etcd: the server stopped and started again mid-countdown. The controller keeps running,
//! its watches break and resume or relist, and every pod ends as the taints say: the one whose
//! toleration runs out is deleted once, at its time; the one that tolerates forever stays; the
//! one whose node is untainted after the restart stays. Its own trace conforms to `fixed`.
//! Skipped with the reason when the control plane is not built (failed instead under
//! `TAINTCHECK_REQUIRE_UPSTREAM=1`).

mod cli_support;
mod controller_support;

use cli_support::{stderr, stdout, taintcheck};
use controller_support::{
    account, audited_deletes, bin, control_plane_built, set_taints, Instance,
};
use k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration;
use k8s_openapi::api::core::v1 as k8s;
use kube::api::{Api, DeleteParams, ObjectMeta, PostParams};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use taintcheck_cluster::process::ControlPlane;
use taintcheck_cluster::{identity, objects};
use taintcheck_core::api::{Taint, TaintEffect, Toleration};

const NS: &str = "faults-test";

/// The tests take turns: each starts a control plane, and the restart is timed.
static CONTROL_PLANE: std::sync::Mutex<()> = std::sync::Mutex::new(());
/// The countdown: long enough that the API server is back before it ends.
const TOLERATION_S: i64 = 25;

fn taint() -> Taint {
    Taint::new("maintenance", "true", TaintEffect::NoExecute)
}

/// A control plane with the namespace `NS` (and its default ServiceAccount) and the untainted
/// nodes `n1` and `n2`; a runtime and an admin client for it, and a kubeconfig for the
/// controller (upstream's service account, with cluster-admin rights).
fn cluster(
    dir: &std::path::Path,
) -> (ControlPlane, tokio::runtime::Runtime, kube::Client, PathBuf) {
    let cp = ControlPlane::start(
        &bin().join("controlplane"),
        &dir.join("controlplane"),
        None,
        Duration::from_secs(120),
    )
    .expect("the control plane starts");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let client = rt
        .block_on(taintcheck_cluster::client(Some(&cp.kubeconfig())))
        .expect("a client");
    let namespace = k8s::Namespace {
        metadata: ObjectMeta {
            name: Some(NS.into()),
            ..Default::default()
        },
        ..Default::default()
    };
    rt.block_on(
        Api::<k8s::Namespace>::all(client.clone()).create(&PostParams::default(), &namespace),
    )
    .expect("the namespace");
    rt.block_on(
        Api::<k8s::ServiceAccount>::namespaced(client.clone(), NS)
            .create(&PostParams::default(), &account("default", NS)),
    )
    .expect("the namespace's default ServiceAccount");
    let nodes = Api::<k8s::Node>::all(client.clone());
    for name in ["n1", "n2"] {
        rt.block_on(nodes.create(&PostParams::default(), &objects::node(name, "faults", &[])))
            .expect("a node");
    }
    let kubeconfig = dir.join("controller.kubeconfig");
    rt.block_on(identity::controller_kubeconfig(
        &client,
        &cp.kubeconfig(),
        identity::ACCOUNT,
        &kubeconfig,
    ))
    .expect("the controller's kubeconfig");
    (cp, rt, client, kubeconfig)
}

/// Stops `c` with SIGTERM (exit 0), imports the API server's audit log (the controller acted
/// as upstream's service account, `identity::ACCOUNT`, which import knows) and judges the
/// trace under `fixed` with the controller's client limits and latency bound `bound_ms`: it
/// must conform.
fn stop_and_conform(mut c: Instance, cp: &ControlPlane, bound_ms: &str) {
    c.signal(libc::SIGTERM);
    assert_eq!(c.child.wait().unwrap().code(), Some(0), "{:?}", c.seen);
    let trace = cp.dir().join("imported.ndjson").display().to_string();
    let audit = cp.audit_log().display().to_string();
    let out = taintcheck(&["import", &audit, "--output", &trace]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = taintcheck(&[
        "conform",
        &trace,
        "--profile",
        "fixed",
        "--qps",
        "20",
        "--burst",
        "30",
        "--latency-bound-ms",
        bound_ms,
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{trace}: {}{}",
        stdout(&out),
        stderr(&out)
    );
}

#[test]
fn an_api_server_restart_mid_countdown_loses_no_eviction_and_makes_no_second() {
    if !control_plane_built() {
        return;
    }
    let _turn = CONTROL_PLANE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = std::env::temp_dir().join(format!("taintcheck-restart-{}", std::process::id()));
    let (mut cp, rt, client, kubeconfig) = cluster(&dir);
    let pods = Api::<k8s::Pod>::namespaced(client.clone(), NS);
    let counted = Toleration::exists(
        "maintenance",
        Some(TaintEffect::NoExecute),
        Some(TOLERATION_S),
    );
    let forever = Toleration::exists("maintenance", Some(TaintEffect::NoExecute), None);
    for (name, node, toleration) in [
        ("counted", "n1", &counted),
        ("forever", "n1", &forever),
        ("untainted", "n2", &counted),
    ] {
        let pod = objects::pod(NS, name, Some(node), std::slice::from_ref(toleration), 0);
        rt.block_on(pods.create(&PostParams::default(), &pod))
            .unwrap_or_else(|e| panic!("creating {name}: {e}"));
    }

    // A lease that outlives the outage: this test is about the watches and requests.
    let mut c = Instance::start(
        &kubeconfig,
        dir.join("trace.ndjson"),
        &[
            "--leader-elect-lease-duration",
            "120s",
            "--leader-elect-renew-deadline",
            "100s",
        ],
    );
    assert!(
        c.wait_for("ready ", Duration::from_secs(60)).is_some(),
        "{:?}",
        c.seen
    );

    let tainted = Instant::now();
    set_taints(&rt, &client, "n1", &[taint()]);
    set_taints(&rt, &client, "n2", &[taint()]);
    std::thread::sleep(Duration::from_secs(2));
    cp.restart(Duration::from_secs(2), Duration::from_secs(120))
        .expect("the control plane starts again");
    let back = tainted.elapsed();
    eprintln!("the API server was back {back:?} after the taints");
    assert!(
        back < Duration::from_secs(TOLERATION_S as u64 - 5),
        "the restart took too long for the countdown to outlive it: {back:?}"
    );
    assert!(
        c.child.try_wait().unwrap().is_none(),
        "the controller ended with the API server: {:?}",
        c.seen
    );
    let client = rt
        .block_on(taintcheck_cluster::client(Some(&cp.kubeconfig())))
        .expect("a client of the restarted server");
    set_taints(&rt, &client, "n2", &[]);

    // The countdown ends TOLERATION_S after the taint: `counted` goes then, once.
    let pods = Api::<k8s::Pod>::namespaced(client.clone(), NS);
    let until = tainted + Duration::from_secs(TOLERATION_S as u64 + 15);
    while rt
        .block_on(pods.get_opt("counted"))
        .expect("a GET")
        .is_some()
    {
        assert!(
            Instant::now() < until,
            "counted was not evicted: {:?}",
            c.seen
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let gone = tainted.elapsed();
    eprintln!("counted deleted {gone:?} after the taint");
    assert!(
        gone >= Duration::from_secs(TOLERATION_S as u64),
        "deleted before its toleration ran out: {gone:?}"
    );
    // Time for a second DELETE, were one coming.
    std::thread::sleep(Duration::from_secs(3));
    c.drain();
    assert!(
        c.seen.iter().any(|l| l.contains("watch of")),
        "the watches never broke: {:?}",
        c.seen
    );
    assert_eq!(c.deletes(), ["counted"], "{:?}", c.seen);
    assert_eq!(audited_deletes(&cp, "counted"), 1);
    for stays in ["forever", "untainted"] {
        assert!(
            rt.block_on(pods.get_opt(stays)).expect("a GET").is_some(),
            "{stays} was deleted"
        );
        assert_eq!(audited_deletes(&cp, stays), 0, "{stays}");
    }

    for line in c.seen.iter().filter(|l| l.contains("watch of")) {
        eprintln!("{line}");
    }
    // The restarted API server's watch cache starts at etcd's newest revision, after the pod
    // watch's last one: resumed there, the watch is answered 410 Gone, and the watcher relists.
    assert!(
        c.seen
            .iter()
            .any(|l| l.contains("watch of pods") && l.contains("Expired")),
        "the resumed pod watch was not answered 410 Gone: {:?}",
        c.seen
    );
    // The trace, outage included, is a behaviour of `fixed`, once the latency bound covers what
    // an outage does to a watch: broken, it is retried with the reflector's backoff (client-go
    // and kube-runtime alike: 0.8 s doubling to 30 s), so a change made once the API server is
    // back reaches the controller at the next retry.
    stop_and_conform(c, &cp, "30000");
    drop(cp);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A validating webhook on pods' DELETE that nothing serves, with `failurePolicy: Fail`: the
/// API server answers every DELETE of a pod with 500 ("failed calling webhook"), as a real
/// cluster does when its webhook's backend is down.
fn refusing_webhook() -> ValidatingWebhookConfiguration {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "refuse-pod-deletes"},
        "webhooks": [{
            "name": "refuse-pod-deletes.taintcheck.test",
            "clientConfig": {"url": "https://127.0.0.1:1/refuse"},
            "rules": [{
                "operations": ["DELETE"],
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "resources": ["pods"]
            }],
            "failurePolicy": "Fail",
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
            "timeoutSeconds": 1
        }]
    }))
    .expect("a valid webhook configuration")
}

/// DELETEs answered 500 for seconds, then accepted: under `fixed` the work retries (its
/// backoff doubling up to 5 s, PROFILE-6) and the pod is deleted once the API server accepts,
/// once; nothing else is deleted; the trace conforms.
#[test]
fn deletes_answered_500_are_retried_until_one_is_accepted() {
    if !control_plane_built() {
        return;
    }
    let _turn = CONTROL_PLANE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = std::env::temp_dir().join(format!("taintcheck-5xx-{}", std::process::id()));
    let (cp, rt, client, kubeconfig) = cluster(&dir);
    let webhooks = Api::<ValidatingWebhookConfiguration>::all(client.clone());
    rt.block_on(webhooks.create(&PostParams::default(), &refusing_webhook()))
        .expect("the webhook configuration");
    let pods = Api::<k8s::Pod>::namespaced(client.clone(), NS);
    // The API server refuses a DELETE once its webhook informer has the configuration.
    let canary = objects::pod(NS, "canary", Some("n2"), &[], 0);
    rt.block_on(pods.create(&PostParams::default(), &canary))
        .expect("the canary");
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        match rt.block_on(pods.delete("canary", &DeleteParams::default())) {
            Err(kube::Error::Api(s)) if s.code == 500 => break,
            other => {
                assert!(Instant::now() < until, "no 500 yet: {other:?}");
                if other.is_ok() {
                    rt.block_on(pods.create(&PostParams::default(), &canary))
                        .expect("the canary again");
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
    let pod = objects::pod(NS, "refused", Some("n1"), &[], 0);
    rt.block_on(pods.create(&PostParams::default(), &pod))
        .expect("the pod");

    let mut c = Instance::start(&kubeconfig, dir.join("trace.ndjson"), &[]);
    assert!(
        c.wait_for("ready ", Duration::from_secs(60)).is_some(),
        "{:?}",
        c.seen
    );
    set_taints(&rt, &client, "n1", &[taint()]);
    std::thread::sleep(Duration::from_secs(8));
    let refused: Vec<serde_json::Value> = c
        .records()
        .into_iter()
        .filter(|r| r["kind"] == "response" && r["result"] == "failed")
        .collect();
    assert!(
        refused.len() >= 3,
        "fewer than 3 refused requests in 8 s: {refused:?}"
    );
    assert!(rt
        .block_on(pods.get_opt("refused"))
        .expect("a GET")
        .is_some());

    let accepted = Instant::now();
    rt.block_on(webhooks.delete("refuse-pod-deletes", &DeleteParams::default()))
        .expect("the webhook removed");
    let until = accepted + Duration::from_secs(20);
    while rt
        .block_on(pods.get_opt("refused"))
        .expect("a GET")
        .is_some()
    {
        assert!(
            Instant::now() < until,
            "refused was never deleted: {:?}",
            c.seen
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    eprintln!(
        "{} refused DELETEs; deleted {:?} after the webhook went",
        refused.len(),
        accepted.elapsed()
    );
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(audited_deletes(&cp, "refused"), 1);
    assert!(
        c.deletes().iter().all(|d| d == "refused"),
        "{:?}",
        c.deletes()
    );
    stop_and_conform(c, &cp, "1000");
    drop(cp);
    let _ = std::fs::remove_dir_all(&dir);
}
