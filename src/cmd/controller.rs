//! `taintcheck controller`: the reference runtime as a real controller. The core's one
//! controller on the runtime's threads and timers, with a real API server as its world
//! (kube-rs: watches of every node and pod, GET, the `DisruptionTarget` status PATCH, DELETE,
//! Events), under any profile (`fixed` by default); `/healthz` and `/metrics` on 127.0.0.1; a
//! graceful stop on SIGTERM or Ctrl-C. Prints one trace line per request, answer, Event and
//! decision on stdout. Exit 0 after a stop, 2 if it cannot start (kubeconfig, RBAC, address).
//! Spec: RT-WORLD-1..RT-WORLD-7; deployment: docs/deploy.md.

use super::args::profile_parser;
use super::failure::{Failure, Outcome};
use super::output;
use clap::Args;
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use taintcheck_model::core::throttle::RateLimit;
use taintcheck_model::core::Config;
use taintcheck_model::profile::Profile;
use taintcheck_model::time::Duration as Millis;
use taintcheck_model::trace::to_line;
use taintcheck_runtime::clock::{Clock, SystemClock};
use taintcheck_runtime::controller::{Controller, InformerLags};
use taintcheck_runtime::health::{self, Status};
use taintcheck_runtime::kube_world::KubeWorld;
use taintcheck_runtime::metrics::Metrics;
use taintcheck_runtime::recorder::Recorder;
use taintcheck_runtime::timers::TimerService;

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
}

/// Serves the world's health and the metrics.
struct Served {
    world: Arc<KubeWorld>,
    metrics: Arc<Metrics>,
}

impl Status for Served {
    fn health(&self) -> Result<(), String> {
        self.world.health()
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
    let kubeconfig = args.kubeconfig.clone();
    let world = KubeWorld::connect(
        || async move {
            taintcheck_cluster::client(kubeconfig.as_deref())
                .await
                .map_err(|e| e.to_string())
        },
        &args.component,
        Duration::from_secs(args.sync_timeout),
    )
    .map_err(|e| Failure::usage(format!("cannot start: {e}")))?;
    let world = Arc::new(world);

    let metrics = Arc::new(Metrics::new());
    let clock: Arc<dyn Clock> = Arc::new(SystemClock::new());
    let sink_metrics = metrics.clone();
    let recorder = Recorder::new(clock.clone(), args.profile.name, None)
        .rate_limited(Some(rate_limit))
        .streamed(Box::new(move |record| {
            sink_metrics.take(&record.event);
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(to_line(&record).as_bytes());
            let _ = out.flush();
        }));
    let served = Arc::new(Served {
        world: world.clone(),
        metrics,
    });
    let bound = health::serve(args.bind_address, served)
        .map_err(|e| Failure::usage(format!("--bind-address {}: {e}", args.bind_address)))?;

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
    // The handlers are in place before "ready": a SIGTERM right after it stops gracefully.
    let stop = Stop::install().map_err(|e| Failure::usage(format!("cannot catch signals: {e}")))?;
    output::eprint(&format!(
        "ready taint-eviction-controller: taintcheck controller, profile {}; /healthz and \
         /metrics on http://{bound}\n",
        args.profile.name
    ));

    stop.wait();
    output::eprint("stopping: no new requests; waiting for those in flight\n");
    controller.stop();
    world.drain(Duration::from_secs(5));
    timers.stop();
    let _ = timer_thread.join();
    Ok(ExitCode::SUCCESS)
}

/// SIGTERM and SIGINT, caught.
struct Stop {
    runtime: tokio::runtime::Runtime,
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
}

impl Stop {
    fn install() -> std::io::Result<Stop> {
        use tokio::signal::unix::{signal, SignalKind};
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let (term, int) = {
            let _inside = runtime.enter();
            (
                signal(SignalKind::terminate())?,
                signal(SignalKind::interrupt())?,
            )
        };
        Ok(Stop { runtime, term, int })
    }

    /// Blocks until one of them arrives.
    fn wait(mut self) {
        self.runtime.block_on(async {
            tokio::select! {
                _ = self.term.recv() => {}
                _ = self.int.recv() => {}
            }
        });
    }
}
