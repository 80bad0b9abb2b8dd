//! Who may act, on a real kube-apiserver with etcd. Leader election (RT-WORLD-8): of two
//! instances of `taintcheck controller` one leads and the other waits without acting; the
//! leader's graceful stop hands the lease over; a leader killed outright is replaced only once
//! its lease has run out; no pod is deleted twice across the hand-overs, also in the middle of
//! a rate-limited storm, where the successor evicts what its predecessor left; a leader that finds
//! another holder in the Lease stops and exits 1. Permissions
//! (RT-WORLD-7): the RBAC of docs/deploy.md, applied as written, is enough for every request,
//! and without the Lease's or any rights it refuses to start, naming the refusal (exit 2).
//! Skipped with the reason when the control plane is not built (failed instead under
//! `TAINTCHECK_REQUIRE_UPSTREAM=1`).

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1 as k8s;
use k8s_openapi::api::rbac::v1 as rbac;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::{Api, ObjectMeta, PostParams};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use taintcheck_cluster::objects;
use taintcheck_cluster::process::ControlPlane;
use taintcheck_core::api::{Taint, TaintEffect};

mod controller_support;

use controller_support::{
    account, audited_deletes, bin, control_plane_built, set_taints, Instance,
};

const NS: &str = "identity-test";

/// A lease that changes hands within seconds.
const QUICK_LEASE: &[&str] = &[
    "--leader-elect-lease-duration",
    "4s",
    "--leader-elect-renew-deadline",
    "2s",
];

/// The tests take turns: each starts a control plane, and the hand-overs are timed.
static CONTROL_PLANE: std::sync::Mutex<()> = std::sync::Mutex::new(());

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

/// A control plane with the namespace `NS` (and its default ServiceAccount) and the node `n1`
/// tainted `maintenance=true:NoExecute`; a runtime and an admin client for it.
fn control_plane(dir: &Path) -> (ControlPlane, tokio::runtime::Runtime, kube::Client) {
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
    // ServiceAccount admission needs it; no controller-manager makes it here.
    rt.block_on(
        Api::<k8s::ServiceAccount>::namespaced(client.clone(), NS)
            .create(&PostParams::default(), &account("default", NS)),
    )
    .expect("the namespace's default ServiceAccount");
    let taint = Taint::new("maintenance", "true", TaintEffect::NoExecute);
    let node = objects::node("n1", "identity", std::slice::from_ref(&taint));
    rt.block_on(Api::<k8s::Node>::all(client.clone()).create(&PostParams::default(), &node))
        .expect("the node");
    (cp, rt, client)
}

#[test]
fn one_leader_at_a_time_and_no_pod_deleted_twice() {
    if !control_plane_built() {
        return;
    }
    let _turn = CONTROL_PLANE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = std::env::temp_dir().join(format!("taintcheck-lease-{}", std::process::id()));
    let (cp, rt, client) = control_plane(&dir);
    let kubeconfig = cp.kubeconfig();
    let pods = Api::<k8s::Pod>::namespaced(client.clone(), NS);

    // Two instances: exactly one leads; the other waits and sends nothing.
    let begun = Instant::now();
    let mut a = Instance::start(&kubeconfig, dir.join("a.ndjson"), QUICK_LEASE);
    let mut b = Instance::start(&kubeconfig, dir.join("b.ndjson"), QUICK_LEASE);
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
    let mut third = Instance::start(&kubeconfig, dir.join("c.ndjson"), QUICK_LEASE);
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

    // Another holder written into the Lease (as a leader elsewhere that took it would): the
    // leader sees it at its next renewal, stops, and exits 1 without giving the lease up.
    let leases = Api::<Lease>::namespaced(client.clone(), "kube-system");
    let mut lease = rt
        .block_on(leases.get("taintcheck-controller"))
        .expect("the Lease exists");
    let spec = lease.spec.get_or_insert_with(Default::default);
    spec.holder_identity = Some("elsewhere".into());
    spec.renew_time = Some(MicroTime(k8s_openapi::jiff::Timestamp::now()));
    spec.lease_duration_seconds = Some(60);
    rt.block_on(leases.replace("taintcheck-controller", &PostParams::default(), &lease))
        .expect("the Lease replaced");
    let status = third.child.wait().unwrap();
    assert_eq!(status.code(), Some(1), "{:?}", third.seen);
    assert!(
        third
            .wait_for(
                "lost the lease kube-system/taintcheck-controller",
                Duration::from_secs(5)
            )
            .is_some(),
        "{:?}",
        third.seen
    );
    let kept = rt
        .block_on(leases.get("taintcheck-controller"))
        .expect("the Lease exists");
    assert_eq!(
        kept.spec.and_then(|s| s.holder_identity).as_deref(),
        Some("elsewhere")
    );
    drop((old, new, third));
    drop(cp);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Pods of the storm in `a_hand_over_mid_storm_evicts_every_pod_once`.
const STORM_PODS: usize = 40;

/// A hand-over in the middle of a storm (RT-WORLD-8): 40 untolerating pods on a node tainted at
/// once, the leader's client slowed to 10 requests a second (4 a pod under `fixed`), stopped
/// gracefully once it has deleted 5. Its successor relists and evicts the rest: every pod is gone,
/// each deleted exactly once by the API server's audit log, and no pod is in both instances'
/// DELETEs.
#[test]
fn a_hand_over_mid_storm_evicts_every_pod_once() {
    if !control_plane_built() {
        return;
    }
    let _turn = CONTROL_PLANE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = std::env::temp_dir().join(format!("taintcheck-storm-lease-{}", std::process::id()));
    let (cp, rt, client) = control_plane(&dir);
    let kubeconfig = cp.kubeconfig();
    let pods = Api::<k8s::Pod>::namespaced(client.clone(), NS);
    rt.block_on(Api::<k8s::Node>::all(client.clone()).create(
        &PostParams::default(),
        &objects::node("n2", "identity", &[]),
    ))
    .expect("the node n2");
    let names: Vec<String> = (0..STORM_PODS).map(|i| format!("s{i:02}")).collect();
    for name in &names {
        let pod = objects::pod(NS, name, Some("n2"), &[], 0);
        rt.block_on(pods.create(&PostParams::default(), &pod))
            .unwrap_or_else(|e| panic!("creating {name}: {e}"));
    }
    let flags: Vec<&str> = QUICK_LEASE
        .iter()
        .copied()
        .chain(["--kube-api-qps", "10", "--kube-api-burst", "10"])
        .collect();
    let mut a = Instance::start(&kubeconfig, dir.join("a.ndjson"), &flags);
    let mut b = Instance::start(&kubeconfig, dir.join("b.ndjson"), &flags);
    let until = Instant::now() + Duration::from_secs(60);
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
    let (mut leader, mut standby) = if a_leads { (a, b) } else { (b, a) };

    // The storm: at 10 requests a second, 40 pods take the leader about 16 s; the 40 works
    // read the pod and its node and patch before any deletes, so the first DELETE comes about
    // 12 s in. The leader stops once it has deleted 5.
    set_taints(
        &rt,
        &client,
        "n2",
        &[Taint::new("storm", "", TaintEffect::NoExecute)],
    );
    let until = Instant::now() + Duration::from_secs(60);
    while leader.deletes().len() < 5 {
        assert!(
            Instant::now() < until,
            "the leader deleted {:?} in 60 s",
            leader.deletes()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    leader.signal(libc::SIGTERM);
    assert_eq!(
        leader.child.wait().unwrap().code(),
        Some(0),
        "{:?}",
        leader.seen
    );
    let first = leader.deletes();
    assert!(
        !first.is_empty() && first.len() < STORM_PODS,
        "the leader stopped with {} of {STORM_PODS} pods deleted: not mid-storm",
        first.len()
    );
    standby
        .wait_for("ready ", Duration::from_secs(30))
        .unwrap_or_else(|| panic!("the standby never led: {:?}", standby.seen));

    let until = Instant::now() + Duration::from_secs(90);
    loop {
        let left = rt
            .block_on(pods.list(&Default::default()))
            .expect("a list")
            .items
            .len();
        if left == 0 {
            break;
        }
        assert!(
            Instant::now() < until,
            "{left} pods left 90 s after the hand-over"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let second = standby.deletes();
    eprintln!(
        "deleted by the first leader: {}, by its successor: {}",
        first.len(),
        second.len()
    );
    for name in &names {
        assert_eq!(audited_deletes(&cp, name), 1, "{name}: accepted DELETEs");
        let by = first.iter().chain(&second).filter(|d| *d == name).count();
        assert_eq!(by, 1, "{name}: DELETEs sent by the two leaders");
    }
    drop((leader, standby));
    drop(cp);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The YAML of docs/deploy.md's "Permissions" section, as objects.
fn documented_rbac() -> Vec<serde_json::Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/deploy.md");
    let text = std::fs::read_to_string(&path).expect("docs/deploy.md");
    let section = &text[text.find("## Permissions").expect("a Permissions section")..];
    let block = section
        .split("```yaml\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("a yaml block in Permissions");
    taintcheck_formats::yaml::json::documents(block)
        .expect("the block is YAML")
        .into_iter()
        .map(|(v, _)| v)
        .collect()
}

/// Creates `object` (a kind of docs/deploy.md's permissions) as the admin.
fn create(rt: &tokio::runtime::Runtime, client: &kube::Client, object: serde_json::Value) {
    fn typed<K: serde::de::DeserializeOwned>(v: serde_json::Value) -> K {
        serde_json::from_value(v).expect("a valid object")
    }
    let ns = object["metadata"]["namespace"].as_str().map(str::to_string);
    let kind = object["kind"].as_str().unwrap_or_default().to_string();
    let pp = PostParams::default();
    let made = match (kind.as_str(), ns) {
        ("ServiceAccount", Some(ns)) => rt
            .block_on(
                Api::namespaced(client.clone(), &ns)
                    .create(&pp, &typed::<k8s::ServiceAccount>(object)),
            )
            .map(drop),
        ("ClusterRole", None) => rt
            .block_on(Api::all(client.clone()).create(&pp, &typed::<rbac::ClusterRole>(object)))
            .map(drop),
        ("ClusterRoleBinding", None) => rt
            .block_on(
                Api::all(client.clone()).create(&pp, &typed::<rbac::ClusterRoleBinding>(object)),
            )
            .map(drop),
        ("Role", Some(ns)) => rt
            .block_on(
                Api::namespaced(client.clone(), &ns).create(&pp, &typed::<rbac::Role>(object)),
            )
            .map(drop),
        ("RoleBinding", Some(ns)) => rt
            .block_on(
                Api::namespaced(client.clone(), &ns)
                    .create(&pp, &typed::<rbac::RoleBinding>(object)),
            )
            .map(drop),
        (other, ns) => panic!("docs/deploy.md: unexpected {other} (namespace {ns:?})"),
    };
    made.unwrap_or_else(|e| panic!("creating a {kind}: {e}"));
}

/// A kubeconfig for `kube-system/name`, made as a ServiceAccount if `make`.
fn kubeconfig_of(
    rt: &tokio::runtime::Runtime,
    client: &kube::Client,
    cp: &ControlPlane,
    name: &str,
    make: bool,
) -> PathBuf {
    if make {
        rt.block_on(
            Api::<k8s::ServiceAccount>::namespaced(client.clone(), "kube-system")
                .create(&PostParams::default(), &account(name, "kube-system")),
        )
        .expect("the account");
    }
    let out = cp.dir().join(format!("{name}.kubeconfig"));
    rt.block_on(taintcheck_cluster::identity::token_kubeconfig(
        client,
        &cp.kubeconfig(),
        name,
        &out,
    ))
    .expect("a token");
    out
}

#[test]
fn the_documented_permissions_suffice_and_missing_ones_are_named() {
    if !control_plane_built() {
        return;
    }
    let _turn = CONTROL_PLANE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = std::env::temp_dir().join(format!("taintcheck-rbac-{}", std::process::id()));
    let (cp, rt, client) = control_plane(&dir);
    let pods = Api::<k8s::Pod>::namespaced(client.clone(), NS);

    // Without any rights: the first list is refused (leader election off, so the list is
    // the first request).
    let nothing = kubeconfig_of(&rt, &client, &cp, "taintcheck-nothing", true);
    let out = Command::new(env!("CARGO_BIN_EXE_taintcheck"))
        .args([
            "controller",
            "--bind-address",
            "127.0.0.1:0",
            "--leader-elect=false",
            "--kubeconfig",
        ])
        .arg(&nothing)
        .output()
        .expect("taintcheck runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot start") && err.contains("403"), "{err}");

    // The documented account, before its Role for the Lease exists: the lease is refused.
    let rbac = documented_rbac();
    let kinds: Vec<&str> = rbac
        .iter()
        .map(|o| o["kind"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        kinds,
        [
            "ServiceAccount",
            "ClusterRole",
            "ClusterRoleBinding",
            "Role",
            "RoleBinding"
        ]
    );
    let (cluster_wide, lease): (Vec<_>, Vec<_>) = rbac
        .into_iter()
        .partition(|o| !o["kind"].as_str().unwrap_or_default().starts_with("Role"));
    for object in cluster_wide {
        create(&rt, &client, object);
    }
    let documented = kubeconfig_of(&rt, &client, &cp, "taintcheck-controller", false);
    let out = Command::new(env!("CARGO_BIN_EXE_taintcheck"))
        .args([
            "controller",
            "--bind-address",
            "127.0.0.1:0",
            "--kubeconfig",
        ])
        .arg(&documented)
        .output()
        .expect("taintcheck runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("lease kube-system/taintcheck-controller") && err.contains("forbidden"),
        "{err}"
    );

    // With all of it: it leads, and every request of an eviction is allowed.
    for object in lease {
        create(&rt, &client, object);
    }
    let mut c = Instance::start(&documented, dir.join("trace.ndjson"), QUICK_LEASE);
    assert!(
        c.wait_for("ready ", Duration::from_secs(60)).is_some(),
        "{:?}",
        c.seen
    );
    evicted(&rt, &pods, "p1", "n1");
    let events = Api::<k8s::Event>::namespaced(client.clone(), NS);
    let until = Instant::now() + Duration::from_secs(10);
    while rt
        .block_on(events.list(&Default::default()))
        .expect("Events listed")
        .items
        .iter()
        .all(|e| e.reason.as_deref() != Some("TaintManagerEviction"))
    {
        assert!(
            Instant::now() < until,
            "no TaintManagerEviction Event written"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let records = c.records();
    let verbs: Vec<&str> = records
        .iter()
        .filter(|r| r["kind"] == "request")
        .map(|r| r["verb"].as_str().unwrap_or_default())
        .collect();
    assert!(
        verbs.contains(&"patch") && verbs.contains(&"delete"),
        "{verbs:?}"
    );
    for r in records.iter().filter(|r| r["kind"] == "response") {
        assert_eq!(r["result"], "ok", "{r}");
    }
    c.signal(libc::SIGTERM);
    assert_eq!(c.child.wait().unwrap().code(), Some(0), "{:?}", c.seen);
    drop(c);
    drop(cp);
    let _ = std::fs::remove_dir_all(&dir);
}
