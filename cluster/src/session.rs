//! One scenario on a running control plane with a release's controller: watches started, the
//! controller started and synced, the starting cluster created, the operations played in real
//! time until the scenario's `until`, the controller stopped, and the run's share of the audit
//! log and the watches kept as files for `taintcheck import`. Runs follow one another on a
//! control plane: every controller acts on every pod it sees, so two at once would act twice.

use crate::names::{Names, RUN_LABEL};
use crate::play::{Played, Player};
use crate::process::{Controller, ControllerOptions};
use crate::proxy::steer::Schedule;
use crate::proxy::{self, Limits, Proxy, Upstream};
use crate::watch::{self, Recorder, Scope, Sinks};
use crate::{identity, Error};
use k8s_openapi::jiff::Timestamp;
use kube::Client;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use taintcheck_formats::scenario::{Op, Scenario};

/// How long a controller may take from its start until its informers have listed.
pub const SYNC_TIMEOUT: Duration = Duration::from_secs(30);

/// The control plane a session plays on.
#[derive(Clone, Debug)]
pub struct Cluster {
    /// The admin kubeconfig.
    pub kubeconfig: PathBuf,
    /// The API server's audit log.
    pub audit_log: PathBuf,
}

/// A release's controller, as a session starts it.
#[derive(Clone, Debug)]
pub struct Release {
    /// `1.37.2`.
    pub version: String,
    /// Its binary.
    pub binary: PathBuf,
    /// `--kube-api-qps` and `--kube-api-burst`.
    pub qps: u32,
    /// See `qps`.
    pub burst: u32,
    /// `--feature-gates`.
    pub feature_gates: Option<String>,
    /// Arguments before the common flags (taintcheck's own controller: `controller --profile P`).
    pub args: Vec<String>,
    /// The controller reaches the API server through taintcheck's proxy (PROXY-5), whose
    /// exchange log the recording keeps.
    pub through_proxy: bool,
    /// With `through_proxy`: the schedule the proxy holds watch events by (PROXY-8), in the
    /// scenario's names.
    pub schedule: Option<Schedule>,
}

/// What a run left: the files to import and when it ran.
#[derive(Debug)]
pub struct Recording {
    /// The scenario's names on the API server.
    pub names: Names,
    /// The run's audit entries (its namespaces and nodes).
    pub audit: PathBuf,
    /// The watches of pods, nodes and Events, as kubectl writes them.
    pub watches: [PathBuf; 3],
    /// The controller's output.
    pub controller_log: PathBuf,
    /// The wall-clock instant of the scenario's 0.
    pub start: Timestamp,
    /// When the recording ended.
    pub end: Timestamp,
    /// Each `restartController`: when the old controller had stopped.
    pub restarts: Vec<Timestamp>,
    /// How long before the scenario's 0 its cluster began to be created: the controller, already
    /// running, may act on the first objects up to that much before 0 (HARNESS-8).
    pub setup: Duration,
    /// The operations as played.
    pub played: Vec<Played>,
    /// Errors the watches met (they retry; changes may have been missed meanwhile).
    pub watch_errors: Vec<String>,
    /// With [`Release::through_proxy`]: the proxy's exchange log, the run's objects only.
    pub proxy_log: Option<PathBuf>,
}

/// Runs `scenario` on `cluster` with `release`'s controller; the run's files go into `dir`.
pub async fn run(
    cluster: &Cluster,
    client: &Client,
    release: &Release,
    scenario: &Scenario,
    dir: &Path,
    suffix: &str,
) -> Result<Recording, Error> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Error::new(format!("{}: cannot create: {e}", dir.display())))?;
    let mut names = Names::new(&scenario.name, suffix);
    let namespaces: Vec<String> = scenario_namespaces(scenario)
        .iter()
        .map(|ns| names.namespace(ns))
        .collect();
    let audit_from = file_len(&cluster.audit_log);
    let watches = [
        dir.join("pods.json"),
        dir.join("nodes.json"),
        dir.join("events.json"),
    ];
    let [pods, nodes, events] = watches.clone().map(|p| {
        File::create(&p)
            .map(|f| watch::sink(BufWriter::new(f)))
            .map_err(|e| Error::new(format!("{}: cannot write: {e}", p.display())))
    });
    let sinks = Sinks {
        pods: pods?,
        nodes: nodes?,
        events: events?,
    };
    let scope = Scope {
        namespaces,
        node_labels: Some(format!("{RUN_LABEL}={}", names.run())),
    };
    let mut recorder = Recorder::start(client, &scope, sinks).await?;

    let account = identity::ACCOUNT;
    let controller_config = dir.join("controller.kubeconfig");
    identity::controller_kubeconfig(client, &cluster.kubeconfig, account, &controller_config)
        .await?;
    let proxy = if release.through_proxy {
        let upstream = Upstream::from_kubeconfig(&cluster.kubeconfig, None).await?;
        let log = dir.join("proxy-all.ndjson");
        let listen = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
        let schedule = release
            .schedule
            .as_ref()
            .map(|s| crate::proxy::steer::renamed(s, &mut names));
        let proxy = Proxy::start(upstream, listen, &log, Limits::default(), schedule).await?;
        let through = dir.join("controller-proxy.kubeconfig");
        proxy::kubeconfig_through(
            &controller_config,
            &proxy.url(),
            proxy.authority_pem(),
            &through,
        )?;
        Some((proxy, through, log))
    } else {
        None
    };
    let mut args = release.args.clone();
    if proxy.is_some() && args.is_empty() {
        // Upstream's controller speaks protobuf by default, as kube-controller-manager does;
        // the proxy reads JSON (PROXY-5).
        args.extend(["--kube-api-content-type".into(), "application/json".into()]);
    }
    let options = ControllerOptions {
        args,
        kubeconfig: proxy
            .as_ref()
            .map_or(controller_config, |(_, through, _)| through.clone()),
        qps: release.qps,
        burst: release.burst,
        feature_gates: release.feature_gates.clone(),
        log: dir.join("controller.log"),
    };
    let user = format!("system:serviceaccount:kube-system:{account}");
    let controller = Arc::new(Mutex::new(start_synced(
        release,
        &options,
        &cluster.audit_log,
        &user,
    )?));

    let mut player = Player::new(client.clone());
    let setup_began = tokio::time::Instant::now();
    player.setup(scenario, &mut names).await?;
    let begun = tokio::time::Instant::now();
    let setup = begun - setup_began;
    let start = Timestamp::now();
    let restarts = Arc::new(Mutex::new(Vec::new()));
    let mut restart = {
        let (controller, restarts) = (controller.clone(), restarts.clone());
        let (release, options, audit, user) = (
            release.clone(),
            options.clone(),
            cluster.audit_log.clone(),
            user.clone(),
        );
        move || -> Result<(), Error> {
            tokio::task::block_in_place(|| {
                let mut c = lock(&controller);
                c.stop();
                lock(&restarts).push(Timestamp::now());
                *c = start_synced(&release, &options, &audit, &user)?;
                Ok(())
            })
        }
    };
    let faults = proxy.as_ref().map(|(p, _, _)| p);
    let mut fail = |op: &Op, names: &mut Names| -> Result<(), String> {
        let (
            Some(proxy),
            Op::FailRequests {
                verb,
                pod,
                times,
                result,
            },
        ) = (faults, op)
        else {
            return Err("failRequests needs the proxy".into());
        };
        proxy.fail(*verb, pod.as_ref().map(|p| names.pod(p)), *times, *result);
        Ok(())
    };
    let played = player
        .play(scenario, &mut names, begun, faults, &mut restart, &mut fail)
        .await?;
    let until = Duration::from_millis(u64::try_from(scenario.until.millis()).unwrap_or(0));
    tokio::time::sleep_until(begun + until).await;
    lock(&controller).check_running()?;
    lock(&controller).stop();
    // What the watches have in flight arrives within a few milliseconds.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let end = Timestamp::now();
    let proxy_log = match proxy {
        Some((proxy, _, all)) => {
            proxy.stop()?;
            let own = dir.join("proxy.ndjson");
            own_proxy_lines(&all, &names, &own)?;
            Some(own)
        }
        None => None,
    };
    let audit_to = file_len(&cluster.audit_log);
    recorder.stop();
    let mut watch_errors = Vec::new();
    while let Some(e) = recorder.error() {
        watch_errors.push(e);
    }
    drop(recorder);
    let audit = dir.join("audit.log");
    own_audit(&cluster.audit_log, audit_from, audit_to, &names, &audit)?;
    player.clean(&names).await?;
    let restarts = lock(&restarts).clone();
    Ok(Recording {
        names,
        audit,
        watches,
        controller_log: options.log,
        start,
        end,
        restarts,
        setup,
        played,
        watch_errors,
        proxy_log,
    })
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The namespaces a scenario's pods live in (`default` if it has none).
fn scenario_namespaces(scenario: &Scenario) -> Vec<String> {
    let mut out: Vec<String> = scenario
        .pods
        .iter()
        .map(|p| p.pod.key.namespace.to_string())
        .chain(scenario.ops.iter().filter_map(|op| match &op.op {
            Op::CreatePod(p) => Some(p.pod.key.namespace.to_string()),
            Op::RecreatePod { key, .. } => Some(key.namespace.to_string()),
            _ => None,
        }))
        .collect();
    out.push("default".to_string());
    out.sort();
    out.dedup();
    out
}

fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// Starts the controller and waits until its informers have synced: it prints `ready
/// taint-eviction-vX.Y.Z` then (upstream/controller), or the audit log shows its list or watch of
/// both pods and nodes. So the run's objects are created while it runs.
fn start_synced(
    release: &Release,
    options: &ControllerOptions,
    audit_log: &Path,
    user: &str,
) -> Result<Controller, Error> {
    let log_from = file_len(&options.log);
    let mut offset = file_len(audit_log);
    let mut controller = Controller::start(&release.binary, options)?;
    let begun = std::time::Instant::now();
    let (mut pods, mut nodes) = (false, false);
    loop {
        controller.check_running()?;
        if begun.elapsed() > SYNC_TIMEOUT {
            return Err(Error::new(format!(
                "Kubernetes {}'s controller did not sync its caches within {} s: see {}",
                release.version,
                SYNC_TIMEOUT.as_secs(),
                controller.log().display()
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
        let announced = std::fs::read(&options.log).is_ok_and(|text| {
            let text = String::from_utf8_lossy(&text[(log_from as usize).min(text.len())..]);
            text.contains("ready taint-eviction-")
        });
        if announced {
            return Ok(controller);
        }
        let to = file_len(audit_log);
        for entry in audit_entries(audit_log, offset, to)? {
            if entry["user"]["username"] != user
                || !matches!(entry["verb"].as_str(), Some("list" | "watch"))
            {
                continue;
            }
            match entry["objectRef"]["resource"].as_str() {
                Some("pods") => pods = true,
                Some("nodes") => nodes = true,
                _ => {}
            }
        }
        offset = to;
        if pods && nodes {
            // The informers' watches follow their lists at once.
            std::thread::sleep(Duration::from_millis(300));
            return Ok(controller);
        }
    }
}

/// The audit entries between two byte offsets (whole lines only).
fn audit_entries(path: &Path, from: u64, to: u64) -> Result<Vec<serde_json::Value>, Error> {
    let mut out = Vec::new();
    for_audit_lines(path, from, to, |line| {
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(line) {
            out.push(v);
        }
        Ok(())
    })?;
    Ok(out)
}

fn for_audit_lines(
    path: &Path,
    from: u64,
    to: u64,
    mut each: impl FnMut(&str) -> Result<(), Error>,
) -> Result<(), Error> {
    let err = |e: std::io::Error| Error::new(format!("{}: {e}", path.display()));
    let mut file = File::open(path).map_err(err)?;
    file.seek(SeekFrom::Start(from)).map_err(err)?;
    let mut reader = BufReader::new(file.take(to.saturating_sub(from)));
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).map_err(err)? == 0 {
            return Ok(());
        }
        if line.ends_with('\n') {
            each(line.trim_end())?;
        }
    }
}

/// Copies the run's audit entries (about its namespaces and its nodes) to `out`.
fn own_audit(path: &Path, from: u64, to: u64, names: &Names, out: &Path) -> Result<(), Error> {
    let err = |e: std::io::Error| Error::new(format!("{}: {e}", out.display()));
    let mut w = BufWriter::new(File::create(out).map_err(err)?);
    let namespaces: Vec<&str> = names.namespaces().collect();
    for_audit_lines(path, from, to, |line| {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            return Ok(());
        };
        let object = &v["objectRef"];
        let ns = object["namespace"].as_str();
        let own = match object["resource"].as_str() {
            Some("nodes") => object["name"]
                .as_str()
                .is_some_and(|n| names.is_own_node(n)),
            _ => ns.is_some_and(|ns| namespaces.contains(&ns)),
        };
        if own {
            writeln!(w, "{line}").map_err(err)?;
        }
        Ok(())
    })?;
    w.flush().map_err(err)
}

/// Copies the proxy's lines about the run's objects (its namespaces and nodes) to `out`: the
/// controller lists and watches the whole cluster, so a list's items are kept only when they
/// are the run's own, and the proxy's errors are kept whatever they concern.
fn own_proxy_lines(path: &Path, names: &Names, out: &Path) -> Result<(), Error> {
    let err = |e: std::io::Error| Error::new(format!("{}: {e}", out.display()));
    let mut w = BufWriter::new(File::create(out).map_err(err)?);
    let namespaces: Vec<&str> = names.namespaces().collect();
    let own = |namespace: Option<&str>, node: Option<&str>| {
        namespace.is_some_and(|ns| namespaces.contains(&ns))
            || node.is_some_and(|n| names.is_own_node(n))
    };
    let own_object = |o: &serde_json::Value| {
        let s = |p: &str| o.pointer(p).and_then(serde_json::Value::as_str);
        match s("/kind") {
            Some("Node") => own(None, s("/metadata/name")),
            _ => own(s("/metadata/namespace"), None),
        }
    };
    for_audit_lines(path, 0, file_len(path), |line| {
        let Ok(mut v) = serde_json::from_str::<serde_json::Value>(line) else {
            return Ok(());
        };
        let keep = match v["kind"].as_str() {
            Some("WatchEvent") => own_object(&v["object"]),
            Some("Exchange") => {
                let field = |f: &str| {
                    v["objectRef"][f]
                        .as_str()
                        .filter(|s| !s.is_empty())
                        .map(str::to_string)
                };
                let (resource, ns, name) = (
                    field("resource").unwrap_or_default(),
                    field("namespace"),
                    field("name"),
                );
                let (resource, ns, name) = (resource.as_str(), ns.as_deref(), name.as_deref());
                if let Some(items) = v
                    .pointer_mut("/responseObject/items")
                    .and_then(serde_json::Value::as_array_mut)
                {
                    items.retain(|item| {
                        let mut item = item.clone();
                        if let Some(o) = item.as_object_mut() {
                            let kind = if resource == "nodes" { "Node" } else { "Pod" };
                            o.entry("kind").or_insert_with(|| kind.into());
                        }
                        own_object(&item)
                    });
                }
                match resource {
                    "nodes" => name.is_none_or(|n| names.is_own_node(n)),
                    _ => ns.is_none() && resource == "pods" || own(ns, None),
                }
            }
            _ => true,
        };
        if keep {
            serde_json::to_writer(&mut w, &v)
                .map_err(std::io::Error::from)
                .and_then(|()| w.write_all(b"\n"))
                .map_err(err)?;
        }
        Ok(())
    })?;
    w.flush().map_err(err)
}
