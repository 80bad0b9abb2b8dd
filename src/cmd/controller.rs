//! `taintcheck controller`: the reference runtime as a real controller. The core's one
//! controller on the runtime's threads and timers, with a real API server as its world
//! (kube-rs: watches of every node and pod, GET, the `DisruptionTarget` status PATCH, DELETE,
//! Events), under any profile (`fixed` by default); leader election on a Lease as
//! kube-controller-manager elects itself; `/healthz` and `/metrics` on 127.0.0.1; a graceful stop
//! on SIGTERM or Ctrl-C. Prints one trace line per request, answer, Event and decision on stdout.
//! Exit 0 after a stop, 1 when the lease is lost to another instance, 2 if it cannot start
//! (kubeconfig, RBAC, address). Spec: RT-WORLD-1..RT-WORLD-8; deployment: docs/deploy.md.

use super::args::profile_parser;
use super::failure::{Failure, Outcome};
use super::output;
use clap::Args;
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use taintcheck_core::profile::Profile;
use taintcheck_core::throttle::RateLimit;
use taintcheck_core::time::Duration as Millis;
use taintcheck_core::Config;
use taintcheck_formats::trace::to_line;
use taintcheck_runtime::clock::{Clock, SystemClock};
use taintcheck_runtime::controller::{Controller, InformerLags};
use taintcheck_runtime::health::{self, Status};
use taintcheck_runtime::kube_world::lease::LeaseOptions;
use taintcheck_runtime::kube_world::{Connection, Ended, KubeWorld};
use taintcheck_runtime::metrics::Metrics;
use taintcheck_runtime::recorder::Recorder;
use taintcheck_runtime::timers::TimerService;
use tokio::sync::watch;

#[derive(Args)]
pub struct ControllerArgs {
    /// The cluster's kubeconfig (default: `$KUBECONFIG`, `~/.kube/config`, or in-cluster).
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,
    /// The design the controller follows: `fixed`, or a release's (`latest`, `1.31`, ...), as in
    /// `check` and `run`.
    #[arg(long, default_value = "fixed", value_parser = profile_parser())]
    profile: Profile,
    /// Requests per second to the API server (kube-controller-manager's default).
    #[arg(long, default_value_t = 20, value_name = "QPS")]
    kube_api_qps: u32,
    /// Requests at once above the rate (kube-controller-manager's default).
    #[arg(long, default_value_t = 30, value_name = "N")]
    kube_api_burst: u32,
    /// Workers of the pod and node update queues (upstream's `UpdateWorkerSize`).
    #[arg(long, default_value_t = 8, value_name = "N")]
    workers: usize,
    /// Where `/healthz` and `/metrics` are served (port 0: a free one, printed at start).
    #[arg(long, default_value = "127.0.0.1:10259", value_name = "ADDR:PORT")]
    bind_address: SocketAddr,
    /// The Events' source component.
    #[arg(long, default_value = "taint-eviction-controller", value_name = "NAME")]
    component: String,
    /// How long the first list of nodes and pods may take.
    #[arg(long, default_value_t = 30, value_name = "SECONDS")]
    sync_timeout: u64,
    /// Run only while holding the Lease `--leader-elect-resource-namespace`/`-name`, as
    /// kube-controller-manager does; `--leader-elect=false` runs at once.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true", value_name = "BOOL")]
    leader_elect: bool,
    /// How long the lease holds without renewal: a standby takes over this long after the
    /// leader stopped renewing (`15s`; whole seconds).
    #[arg(long, default_value = "15s", value_parser = seconds, value_name = "DURATION")]
    leader_elect_lease_duration: Duration,
    /// The leader renews the lease at the latest this long after the last renewal (`10s`).
    #[arg(long, default_value = "10s", value_parser = seconds, value_name = "DURATION")]
    leader_elect_renew_deadline: Duration,
    /// The Lease's name (not kube-controller-manager's own: that one is held by it).
    #[arg(long, default_value = "taintcheck-controller", value_name = "NAME")]
    leader_elect_resource_name: String,
    /// The Lease's namespace.
    #[arg(long, default_value = "kube-system", value_name = "NAMESPACE")]
    leader_elect_resource_namespace: String,
}

/// `15s` or `15`: whole seconds.
fn seconds(text: &str) -> Result<Duration, String> {
    text.strip_suffix('s')
        .unwrap_or(text)
        .parse::<u64>()
        .map(Duration::from_secs)
        .map_err(|_| format!("{text:?} is not a whole number of seconds (`15s`)"))
}

/// Serves the world's health (healthy while waiting for the lease, as a standby) and the
/// metrics.
struct Served {
    world: OnceLock<Arc<KubeWorld>>,
    metrics: Arc<Metrics>,
}

impl Status for Served {
    fn health(&self) -> Result<(), String> {
        self.world.get().map_or(Ok(()), |w| w.health())
    }

    fn metrics(&self) -> String {
        self.metrics.render()
    }
}

pub fn run(args: &ControllerArgs) -> Outcome {
    if args.workers == 0 || args.workers > 64 {
        return Err(Failure::usage("--workers: Invalid value: must be 1 to 64"));
    }
    let rate_limit = RateLimit::qps(args.kube_api_qps, args.kube_api_burst).ok_or_else(|| {
        Failure::usage("--kube-api-qps, --kube-api-burst: Invalid value: both must be positive")
    })?;
    let lease = LeaseOptions {
        namespace: args.leader_elect_resource_namespace.clone(),
        name: args.leader_elect_resource_name.clone(),
        identity: identity(),
        duration: args.leader_elect_lease_duration,
        renew_deadline: args.leader_elect_renew_deadline,
    };
    lease.check().map_err(|e| {
        Failure::usage(format!(
            "--leader-elect-lease-duration, --leader-elect-renew-deadline: Invalid value: {e}"
        ))
    })?;
    // Caught from the start: a SIGTERM while waiting for the lease or listing stops too.
    let stop = Stop::install().map_err(|e| Failure::usage(format!("cannot catch signals: {e}")))?;
    let kubeconfig = args.kubeconfig.clone();
    let connection = Connection::open(|| async move {
        taintcheck_cluster::client(kubeconfig.as_deref())
            .await
            .map_err(|e| e.to_string())
    })
    .map_err(|e| Failure::usage(format!("cannot start: {e}")))?;

    let metrics = Arc::new(Metrics::new());
    let served = Arc::new(Served {
        world: OnceLock::new(),
        metrics: metrics.clone(),
    });
    let bound = health::serve(args.bind_address, served.clone())
        .map_err(|e| Failure::usage(format!("--bind-address {}: {e}", args.bind_address)))?;

    let mut leadership = None;
    if args.leader_elect {
        output::eprint(&format!(
            "waiting for the lease {}/{} as {}\n",
            lease.namespace, lease.name, lease.identity
        ));
        match connection
            .lead(&lease, stop.stopped())
            .map_err(|e| Failure::usage(format!("cannot start: {e}")))?
        {
            Some(held) => leadership = Some(held),
            None => return Ok(ExitCode::SUCCESS),
        }
        output::eprint(&format!(
            "leading: the lease {}/{} is held as {}\n",
            lease.namespace, lease.name, lease.identity
        ));
    }
    let world = Arc::new(
        connection
            .watch(&args.component, Duration::from_secs(args.sync_timeout))
            .map_err(|e| Failure::usage(format!("cannot start: {e}")))?,
    );
    let _ = served.world.set(world.clone());

    let clock: Arc<dyn Clock> = Arc::new(SystemClock::new());
    let recorder = Recorder::new(clock.clone(), args.profile.name, None)
        .rate_limited(Some(rate_limit))
        .streamed(Box::new(move |record| {
            metrics.take(&record.event);
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(to_line(&record).as_bytes());
            let _ = out.flush();
        }));
    let timers = TimerService::new(clock);
    let config = Config {
        workers: args.workers,
        rate_limit: Some(rate_limit),
        ..Config::new(args.profile)
    };
    let lags = InformerLags {
        nodes: Millis::ZERO,
        pods: Millis::ZERO,
    };
    let controller = Controller::start_in(config, world.clone(), &timers, &recorder, lags);
    let runner = timers.clone();
    let timer_thread = std::thread::Builder::new()
        .name("timers".into())
        .spawn(move || runner.run())
        .map_err(|e| Failure::usage(format!("cannot start the timer thread: {e}")))?;
    output::eprint(&format!(
        "ready taint-eviction-controller: taintcheck controller, profile {}; /healthz and \
         /metrics on http://{bound}\n",
        args.profile.name
    ));

    let ended = world.wait(stop.stopped(), leadership.as_mut());
    match ended {
        Ended::Stopped => {
            output::eprint("stopping: no new requests; waiting for those in flight\n")
        }
        Ended::LeaseLost => output::eprint(&format!(
            "lost the lease {}/{}: another instance leads; stopping\n",
            lease.namespace, lease.name
        )),
    }
    controller.stop();
    world.drain(Duration::from_secs(5));
    timers.stop();
    let _ = timer_thread.join();
    if let (Ended::Stopped, Some(held)) = (ended, leadership) {
        // Only once nothing is in flight: the standby that takes over acts alone.
        world.release(held, Duration::from_secs(5));
    }
    Ok(match ended {
        Ended::Stopped => ExitCode::SUCCESS,
        Ended::LeaseLost => ExitCode::from(1),
    })
}

/// A holder identity as kube-controller-manager makes one (`{hostname}_{unique}`).
fn identity() -> String {
    let host = taintcheck_runtime::kube_world::hostname();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!("{host}_{}-{nanos:08x}", std::process::id())
}

/// SIGTERM and SIGINT, caught on a thread of their own: [`Stop::stopped`] turns true at the
/// first.
struct Stop {
    stopped: watch::Receiver<bool>,
}

impl Stop {
    fn install() -> std::io::Result<Stop> {
        use tokio::signal::unix::{signal, SignalKind};
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let (mut term, mut int) = {
            let _inside = runtime.enter();
            (
                signal(SignalKind::terminate())?,
                signal(SignalKind::interrupt())?,
            )
        };
        let (tx, stopped) = watch::channel(false);
        std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                runtime.block_on(async {
                    tokio::select! {
                        _ = term.recv() => {}
                        _ = int.recv() => {}
                    }
                });
                let _ = tx.send(true);
            })?;
        Ok(Stop { stopped })
    }

    fn stopped(&self) -> watch::Receiver<bool> {
        self.stopped.clone()
    }
}
