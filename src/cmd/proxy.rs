//! `taintcheck proxy`: stands between a controller and its API server, forwards everything, and
//! at the end (`--until`, Ctrl-C) turns what the controller sent and saw into a trace
//! (specs/proxy.md, PROXY-*; the import: IMPORT-11).

use super::failure::{Failure, Outcome};
use super::output::{self, out};
use clap::Args;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use taintcheck_cluster::proxy::steer::Schedule;
use taintcheck_cluster::proxy::{self, Limits, Proxy, Upstream};
use taintcheck_formats::recording::{import_with, Settings};
use taintcheck_formats::scenario::parse_duration;
use taintcheck_formats::trace::{to_line, TraceEvent};

#[derive(Args)]
pub struct ProxyArgs {
    /// The API server to forward to and its certificate authority: this kubeconfig's current
    /// context (its credentials are not used: the controller's go through as sent).
    #[arg(long, value_name = "FILE")]
    kubeconfig: PathBuf,
    /// Forward to this URL instead of the kubeconfig's server (same certificate authority).
    #[arg(long, value_name = "URL")]
    upstream: Option<String>,
    /// Where to listen for the controller (TLS with the proxy's own authority, which
    /// `--kubeconfig-out` carries; HTTP/2 or HTTP/1.1).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8001")]
    listen: SocketAddr,
    /// Write here a copy of `--kubeconfig` whose server is the proxy, for the controller.
    #[arg(long, value_name = "FILE")]
    kubeconfig_out: Option<PathBuf>,
    /// The trace (NDJSON), or `-` for stdout, written when the proxy stops.
    #[arg(long, value_name = "TRACE")]
    trace: String,
    /// The exchange log (PROXY-3); default: the trace's path with `.exchanges` before its
    /// extension, or a temporary file for `--trace -`.
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    /// Hold watch events back from the controller as this schedule says (JSON; specs/proxy.md,
    /// PROXY-8).
    #[arg(long, value_name = "FILE")]
    schedule: Option<PathBuf>,
    /// Stop after this long (`90s`, `10m`); default: at Ctrl-C.
    #[arg(long, value_name = "DURATION")]
    until: Option<String>,
    /// The controller's `--kube-api-qps`, written into the trace's header.
    #[arg(long, value_name = "QPS", requires = "kube_api_burst",
          value_parser = clap::value_parser!(u32).range(1..))]
    kube_api_qps: Option<u32>,
    /// The controller's `--kube-api-burst`, written into the trace's header.
    #[arg(long, value_name = "BURST", requires = "kube_api_qps",
          value_parser = clap::value_parser!(u32).range(1..))]
    kube_api_burst: Option<u32>,
}

pub fn run(args: &ProxyArgs) -> Outcome {
    let until = match &args.until {
        Some(text) => Some(parse_duration(text).ok_or_else(|| {
            Failure::usage(format!("--until: {text:?}: expected a duration (90s, 10m)"))
        })?),
        None => None,
    };
    let (log, temporary) = match (&args.log, args.trace.as_str()) {
        (Some(log), _) => (log.clone(), false),
        (None, "-") => (
            std::env::temp_dir().join(format!("taintcheck-proxy-{}.ndjson", std::process::id())),
            true,
        ),
        (None, trace) => {
            let trace = PathBuf::from(trace);
            let stem = trace.file_stem().unwrap_or_default().to_string_lossy();
            (
                trace.with_file_name(format!("{stem}.exchanges.ndjson")),
                false,
            )
        }
    };
    let schedule = match &args.schedule {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| Failure::usage(format!("{}: {e}", path.display())))?;
            Some(Schedule::parse(&path.display().to_string(), &text).map_err(Failure::input)?)
        }
        None => None,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Failure::usage(format!("an async runtime: {e}")))?;
    let served = runtime.block_on(async {
        let upstream =
            Upstream::from_kubeconfig(&args.kubeconfig, args.upstream.as_deref()).await?;
        let proxy = Proxy::start(
            upstream.clone(),
            args.listen,
            &log,
            Limits::default(),
            schedule,
        )
        .await?;
        if let Some(out) = &args.kubeconfig_out {
            proxy::kubeconfig_through(&args.kubeconfig, &proxy.url(), proxy.authority_pem(), out)?;
        }
        output::eprint(&format!(
            "forwarding {} to {}; exchanges in {}; Ctrl-C ends it\n",
            proxy.url(),
            upstream.url(),
            log.display()
        ));
        let wait = until.map(|d| std::time::Duration::from_millis(d.millis().max(0) as u64));
        match wait {
            Some(d) => tokio::select! {
                _ = tokio::time::sleep(d) => {}
                _ = tokio::signal::ctrl_c() => {}
            },
            None => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
        let errors = proxy.errors();
        proxy.stop()?;
        Ok::<_, taintcheck_cluster::Error>(errors)
    });
    drop(runtime);
    let errors = served.map_err(Failure::usage)?;
    if errors > 0 {
        output::eprint(&format!(
            "warning: the proxy logged {errors} error(s) (kind \"Error\" in {})\n",
            log.display()
        ));
    }
    let name = log.display().to_string();
    let reader = taintcheck_formats::limits::open_file(&log).map_err(Failure::usage)?;
    let settings = Settings {
        end: Some(taintcheck_cluster::Timestamp::now()),
        ..Settings::default()
    };
    let imported = import_with([(name.as_str(), reader)], &settings);
    if temporary {
        let _ = std::fs::remove_file(&log);
    }
    let mut imported = imported.map_err(Failure::input)?;
    if let TraceEvent::Header { qps, burst, .. } = &mut imported.trace[0].event {
        *qps = args.kube_api_qps;
        *burst = args.kube_api_burst;
    }
    let text: String = imported.trace.iter().map(to_line).collect();
    if args.trace == "-" {
        out!("{text}");
    } else {
        output::write_file("--trace", &PathBuf::from(&args.trace), &text, &[])?;
        output::eprint(&format!("{} lines\n", imported.trace.len()));
    }
    Ok(ExitCode::SUCCESS)
}
