//! `taintcheck run SCENARIO`: runs a scenario on the reference runtime, prints the timeline and
//! checks the scenario's expectations for the profile (exit 1 if one fails, 2 on bad input).

use super::args::ProfileArg;
use super::failure::{Failure, Outcome};
use crate::cmd::output::{self, outln, stdout_failed, OutFile};
use clap::{Args, ValueEnum};
use serde::ser::{Error as _, SerializeSeq, Serializer};
use serde::Serialize;
use std::cell::RefCell;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};
use taintcheck_formats::scenario::RunCheck;
use taintcheck_formats::trace::{to_line, TraceRecord};
use taintcheck_runtime::driver::{run_scenario_streamed, ClockKind};
use taintcheck_runtime::timeline;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

#[derive(Args)]
pub struct RunArgs {
    /// The scenario file (YAML, see specs/scenario-format.md).
    scenario: PathBuf,
    #[command(flatten)]
    behaviour: ProfileArg,
    /// Virtual time (deterministic, instant) or the real clock (the run lasts as long as the
    /// scenario).
    #[arg(long, value_enum, default_value_t = ClockArg::Virtual)]
    clock: ClockArg,
    /// Write the observable trace (NDJSON, specs/trace-format.md) to this file.
    #[arg(long)]
    trace: Option<PathBuf>,
    /// Print a JSON report instead of the timeline.
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum ClockArg {
    Virtual,
    Real,
}

#[derive(Serialize)]
struct JsonReport<'a> {
    scenario: &'a str,
    profile: &'a str,
    passed: bool,
    failures: Vec<JsonFailure>,
    deletions: Vec<JsonDeletion>,
    trace: Spooled,
}

#[derive(Serialize)]
struct JsonFailure {
    line: usize,
    message: String,
}

#[derive(Serialize)]
struct JsonDeletion {
    t: i64,
    pod: String,
    uid: Option<String>,
}

pub fn run(args: RunArgs) -> Outcome {
    let scenario = super::load_scenario(&args.scenario)?;
    let profile = args.behaviour.profile()?;
    let clock = match args.clock {
        ClockArg::Virtual => ClockKind::Virtual,
        ClockArg::Real => ClockKind::Real,
    };
    let trace = match &args.trace {
        Some(path) => Some(OutFile::create(
            "--trace",
            path,
            &[args.scenario.as_path()],
        )?),
        None => None,
    };
    if !args.json {
        outln!("scenario {} under profile {}", scenario.name, profile.name);
    }
    let spool = if args.json {
        Some(Spool::new().map_err(|e| spooling_failed(&e)))
    } else {
        None
    }
    .transpose()?;
    let streaming = Arc::new(Mutex::new(Some(Streaming {
        check: RunCheck::new(scenario.expectations_for(profile.name)),
        trace,
        spool,
        timeline: !args.json,
        broken: None,
    })));
    let sink = streaming.clone();
    run_scenario_streamed(
        &scenario,
        profile,
        clock,
        Box::new(move |record| {
            if let Some(s) = lock(&sink).as_mut() {
                s.take(&record);
            }
        }),
    );
    let Streaming {
        check,
        trace,
        spool,
        broken,
        ..
    } = lock(&streaming)
        .take()
        .expect("the run leaves its streaming state");
    match broken {
        Some(Broken::Stdout(e)) => {
            // The temporary trace file goes before the process ends.
            drop(trace);
            stdout_failed(&e)
        }
        Some(Broken::File(failure)) => return Err(failure),
        None => {}
    }
    if let Some(trace) = trace {
        trace.finish()?;
    }
    let total = check.total();
    let deletions = check.deletions().to_vec();
    let failures = check.failures();
    if let Some(spool) = spool {
        let json = JsonReport {
            scenario: &scenario.name,
            profile: profile.name,
            passed: failures.is_empty(),
            failures: failures
                .iter()
                .map(|f| JsonFailure {
                    line: f.line,
                    message: f.message.clone(),
                })
                .collect(),
            deletions: deletions
                .into_iter()
                .map(|d| JsonDeletion {
                    t: d.at.millis(),
                    pod: d.pod.to_string(),
                    uid: d.uid.map(|u| u.to_string()),
                })
                .collect(),
            trace: spool.done().map_err(|e| spooling_failed(&e))?,
        };
        let mut stdout = io::stdout().lock();
        let written = serde_json::to_writer_pretty(&mut stdout, &json)
            .map_err(io::Error::from)
            .and_then(|()| stdout.write_all(b"\n"))
            .and_then(|()| stdout.flush());
        if let Err(e) = written {
            stdout_failed(&e);
        }
    } else if failures.is_empty() {
        outln!("expectations: {total} checked, all met");
    } else {
        for f in &failures {
            outln!("FAILED {}:{f}", args.scenario.display());
        }
        outln!("expectations: {total} checked, {} failed", failures.len());
    }
    Ok(if failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// What the run does with each record as it is made (the trace is never kept whole: each node
/// version carries all the node's taints, so a run's trace outgrows what the run holds live).
struct Streaming {
    /// The expectations, checked as the records come.
    check: RunCheck,
    /// `--trace`'s file.
    trace: Option<OutFile>,
    /// `--json`: the trace, until the report that ends with it can be written.
    spool: Option<Spool>,
    /// Print each record's timeline line.
    timeline: bool,
    /// The first output that could not be written; nothing more is written after it.
    broken: Option<Broken>,
}

enum Broken {
    Stdout(io::Error),
    /// The trace file or the spool.
    File(Failure),
}

impl Streaming {
    fn take(&mut self, record: &TraceRecord) {
        self.check.record(record);
        if self.broken.is_some() {
            return;
        }
        let line = (self.trace.is_some() || self.spool.is_some()).then(|| to_line(record));
        if let (Some(trace), Some(line)) = (&mut self.trace, &line) {
            if let Err(e) = trace.write(line) {
                self.broken = Some(Broken::File(trace.failed(e)));
            }
        }
        if let (Some(spool), Some(line)) = (&mut self.spool, &line) {
            if let Err(e) = spool.file.write_all(line.as_bytes()) {
                self.broken = Some(Broken::File(spooling_failed(&e)));
            }
        }
        if let Some(text) = self.timeline.then(|| timeline::line(record)).flatten() {
            if let Err(e) = output::try_print(format_args!("{text}")) {
                self.broken = Some(Broken::Stdout(e));
            }
        }
    }
}

fn spooling_failed(e: &io::Error) -> Failure {
    Failure::usage(format!("the trace's spool file: {e}"))
}

/// The trace as NDJSON in an unnamed temporary file, for the JSON report that ends with it.
struct Spool {
    file: BufWriter<File>,
}

impl Spool {
    fn new() -> io::Result<Spool> {
        let path =
            std::env::temp_dir().join(format!("taintcheck-run-{}.ndjson", std::process::id()));
        let file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)?;
        // Unnamed from here on: the file goes with its handle, whatever happens.
        std::fs::remove_file(&path)?;
        Ok(Spool {
            file: BufWriter::new(file),
        })
    }

    /// The spooled trace, to read back from its start.
    fn done(self) -> io::Result<Spooled> {
        let mut file = self
            .file
            .into_inner()
            .map_err(io::IntoInnerError::into_error)?;
        file.seek(SeekFrom::Start(0))?;
        Ok(Spooled(RefCell::new(BufReader::new(file))))
    }
}

/// A spooled trace, serialized as the array of its records, read back one line at a time.
struct Spooled(RefCell<BufReader<File>>);

impl Serialize for Spooled {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(None)?;
        let mut reader = self.0.borrow_mut();
        let mut line = String::new();
        loop {
            line.clear();
            if reader.read_line(&mut line).map_err(S::Error::custom)? == 0 {
                break;
            }
            let record: TraceRecord = serde_json::from_str(&line).map_err(S::Error::custom)?;
            seq.serialize_element(&record)?;
        }
        seq.end()
    }
}
