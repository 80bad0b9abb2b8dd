//! `taintcheck record`: a live recording of a cluster through kube-rs, one command instead of
//! three `kubectl --watch` pipes and `import` (specs/import.md, IMPORT-10). Pods, nodes and Events
//! are watched as kubectl watches them, until `--until` has passed or Ctrl-C, then imported into
//! a trace by `import`'s reader; the controller client's `--kube-api-qps`/`--kube-api-burst`,
//! when given, go into the header (TRACE-THROTTLE) so `conform` checks the trace against them.

use super::failure::{Failure, Outcome};
use super::output::{self, out};
use clap::Args;
use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;
use std::process::ExitCode;
use taintcheck_cluster::watch::{self, Recorder, Scope, Sinks};
use taintcheck_formats::recording::{import_with, Settings};
use taintcheck_formats::scenario::parse_duration;
use taintcheck_formats::trace::{to_line, TraceEvent};

#[derive(Args)]
pub struct RecordArgs {
    /// The cluster's kubeconfig (default: `$KUBECONFIG`, `~/.kube/config`, or in-cluster).
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,
    /// Record pods and Events of this namespace only (repeatable; default: every namespace).
    #[arg(long = "namespace", short = 'n', value_name = "NAMESPACE")]
    namespaces: Vec<String>,
    /// The controller's `--kube-api-qps`, written into the trace's header.
    #[arg(long, value_name = "QPS", requires = "kube_api_burst",
          value_parser = clap::value_parser!(u32).range(1..))]
    kube_api_qps: Option<u32>,
    /// The controller's `--kube-api-burst`, written into the trace's header.
    #[arg(long, value_name = "BURST", requires = "kube_api_qps",
          value_parser = clap::value_parser!(u32).range(1..))]
    kube_api_burst: Option<u32>,
    /// The trace (NDJSON), or `-` for stdout.
    #[arg(short, long, value_name = "TRACE")]
    output: String,
    /// Stop after this long (`90s`, `10m`); default: at Ctrl-C.
    #[arg(long, value_name = "DURATION")]
    until: Option<String>,
    /// Keep the watches (kubectl's format) in this folder.
    #[arg(long, value_name = "DIR")]
    keep_watches: Option<PathBuf>,
}

pub fn run(args: &RecordArgs) -> Outcome {
    let until = match &args.until {
        Some(text) => Some(parse_duration(text).ok_or_else(|| {
            Failure::usage(format!("--until: {text:?}: expected a duration (90s, 10m)"))
        })?),
        None => None,
    };
    let (dir, temporary) = match &args.keep_watches {
        Some(dir) => (dir.clone(), false),
        None => (
            std::env::temp_dir().join(format!("taintcheck-record-{}", std::process::id())),
            true,
        ),
    };
    std::fs::create_dir_all(&dir)
        .map_err(|e| Failure::usage(format!("{}: cannot create: {e}", dir.display())))?;
    let result = record(args, until, &dir);
    if temporary {
        let _ = std::fs::remove_dir_all(&dir);
    }
    result
}

fn record(
    args: &RecordArgs,
    until: Option<taintcheck_core::time::Duration>,
    dir: &std::path::Path,
) -> Outcome {
    let files = [
        dir.join("pods.json"),
        dir.join("nodes.json"),
        dir.join("events.json"),
    ];
    let mut sinks = Vec::new();
    for path in &files {
        let file = File::create(path)
            .map_err(|e| Failure::usage(format!("{}: cannot write: {e}", path.display())))?;
        sinks.push(watch::sink(BufWriter::new(file)));
    }
    let [pods, nodes, events]: [watch::Sink; 3] = sinks.try_into().ok().expect("three sinks");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Failure::usage(format!("an async runtime: {e}")))?;
    let scope = Scope {
        namespaces: args.namespaces.clone(),
        node_labels: None,
    };
    let errors = runtime.block_on(async {
        let client = taintcheck_cluster::client(args.kubeconfig.as_deref()).await?;
        let mut recorder = Recorder::start(
            &client,
            &scope,
            Sinks {
                pods,
                nodes,
                events,
            },
        )
        .await?;
        output::eprint("recording; Ctrl-C ends it\n");
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
        recorder.stop();
        let mut errors = Vec::new();
        while let Some(e) = recorder.error() {
            errors.push(e);
        }
        Ok::<_, taintcheck_cluster::Error>(errors)
    });
    let errors = errors.map_err(Failure::usage)?;
    drop(runtime);
    for e in &errors {
        output::eprint(&format!(
            "warning: {e} (the watch resumed; changes may be missing)\n"
        ));
    }
    let names: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
    let mut readers = Vec::new();
    for (path, name) in files.iter().zip(&names) {
        readers.push((
            name.as_str(),
            taintcheck_formats::limits::open_file(path).map_err(Failure::usage)?,
        ));
    }
    let settings = Settings {
        end: Some(taintcheck_cluster::Timestamp::now()),
        ..Settings::default()
    };
    let mut imported = import_with(readers, &settings).map_err(Failure::input)?;
    if let TraceEvent::Header { qps, burst, .. } = &mut imported.trace[0].event {
        *qps = args.kube_api_qps;
        *burst = args.kube_api_burst;
    }
    let text: String = imported.trace.iter().map(to_line).collect();
    if args.output == "-" {
        out!("{text}");
    } else {
        let path = PathBuf::from(&args.output);
        output::write_file("-o", &path, &text, &[])?;
        output::eprint(&format!("{} lines\n", imported.trace.len()));
    }
    Ok(ExitCode::SUCCESS)
}
