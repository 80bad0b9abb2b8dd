//! The fuzz targets' bodies, one function per reader of untrusted input. Each takes the bytes
//! of one input file, calls the library entry the CLI calls for that input, and panics only
//! when a reader breaks its contract: the reader itself must never panic, every error it
//! returns names its file and a line inside the input, and what the readers write (a trace
//! line) reads back as it was.
//!
//! Two callers share these bodies: the `cargo fuzz` targets (`fuzz/fuzz_targets/`, nightly)
//! and `tests/fuzz_corpus.rs`, which replays `fuzz/corpus/<target>/` on stable on every
//! `cargo test`, so each crash found becomes a regression input.

use taintcheck_core::profile::Profile;
use taintcheck_core::time::Duration;
use taintcheck_formats::limits::Lines;
use taintcheck_formats::manifest;
use taintcheck_formats::recording::{import_with, Settings};
use taintcheck_formats::scenario::parse_scenario;
use taintcheck_formats::trace::{to_line, TraceReader, TraceRecord};
use taintcheck_formats::yaml;
use taintcheck_model::check::config::CheckConfig;
use taintcheck_oracle::{Options, Oracle};

/// Larger inputs are ignored: the readers' own limits (specs/limits.md, 64 MiB per file, 1 MiB
/// per line) are tested in tests/cli_hostile.rs; fuzzing looks for shapes, not sizes.
pub const MAX_INPUT: usize = 64 << 10;

/// The name every input is read under; errors must start with it.
const FILE: &str = "fuzz.yaml";

/// A target's body: one input's bytes, a panic if a reader breaks its contract.
pub type Target = fn(&[u8]);

/// The targets by name, as `cargo fuzz` and the corpus directories name them.
pub const TARGETS: [(&str, Target); 5] = [
    ("manifests", manifests),
    ("scenario", scenario),
    ("config", config),
    ("trace", trace),
    ("import", import),
];

/// `validate`/`explain` manifests (kubectl YAML or JSON, multi-document, `List`/`PodList`):
/// [`manifest::read_str`], then validation of every object as the API server would, with the
/// comparison-operators feature gate off and on.
pub fn manifests(data: &[u8]) {
    let Some(text) = text(data) else { return };
    let read = manifest::read_str(FILE, text);
    for d in &read.errors {
        assert_located(&d.file, d.line, text, &d.message);
    }
    for object in &read.objects {
        assert_line(object.line(), text, "object");
        for gate in [false, true] {
            for d in object.validate(gate) {
                assert_located(&d.file, d.line, text, &d.message);
            }
        }
    }
}

/// `run`/`expect` scenarios: [`parse_scenario`].
pub fn scenario(data: &[u8]) {
    let Some(text) = text(data) else { return };
    if let Err(errors) = parse_scenario(FILE, text) {
        assert_errors(&errors, text);
    }
}

/// `check --config FILE.yaml`: [`CheckConfig::parse`].
pub fn config(data: &[u8]) {
    let Some(text) = text(data) else { return };
    if let Err(errors) = CheckConfig::parse(FILE, "fuzz", text) {
        assert_errors(&errors, text);
    }
}

/// `conform` traces: the bounded line reader and [`TraceReader`] as `conform` runs them, each
/// record written back by [`to_line`] reading as itself, then the oracle (profile `latest`,
/// latency bound 1 s, a small frontier limit) over the whole trace.
pub fn trace(data: &[u8]) {
    if data.len() > MAX_INPUT {
        return;
    }
    let mut reader = TraceReader::new(FILE);
    let mut records = Vec::new();
    for (i, line) in Lines::new(data).enumerate() {
        let n = i + 1;
        let text = match line {
            Ok(text) => text,
            Err(e) => {
                assert_eq!(e.line, n, "a line error names its own line: {}", e.message);
                return;
            }
        };
        match reader.push_line(n, &text) {
            Ok(Some(record)) => records.push(record),
            Ok(None) => {}
            Err(e) => {
                let shown = e.to_string();
                let prefix = format!("{FILE}:{n}: ");
                assert!(shown.starts_with(&prefix), "not at line {n}: {shown}");
                return;
            }
        }
    }
    assert_reads_back(&records);
    let mut options = Options::new(Profile::latest(), Duration(1000));
    options.max_states = 2_000;
    let _ = Oracle::check(options, &records, None);
}

/// `import` recordings (kubectl watch JSON with pods, nodes and Events; audit logs), read as
/// the CLI streams them through [`import_with`]; the trace it makes must read back through
/// [`TraceReader`] line by line, header first and in order, as `conform` reads it.
pub fn import(data: &[u8]) {
    if data.len() > MAX_INPUT {
        return;
    }
    match import_with([(FILE, data)], &Settings::default()) {
        Ok(imported) => assert_reads_back(&imported.trace),
        Err(e) => assert_line(e.line, &String::from_utf8_lossy(data), &e.message),
    }
}

/// The input as the CLI's whole-file reader hands it on: UTF-8 (other bytes are refused
/// before any reader sees them) and within [`MAX_INPUT`].
fn text(data: &[u8]) -> Option<&str> {
    (data.len() <= MAX_INPUT)
        .then(|| std::str::from_utf8(data).ok())
        .flatten()
}

/// Every record, written as a trace line, reads back as itself through a fresh reader.
fn assert_reads_back(records: &[TraceRecord]) {
    let mut reader = TraceReader::new(FILE);
    for (i, record) in records.iter().enumerate() {
        let line = to_line(record);
        match reader.push_line(i + 1, line.trim_end()) {
            Ok(Some(back)) => assert_eq!(&back, record, "line {} reads back differently", i + 1),
            other => panic!("line {} does not read back: {other:?}\n{line}", i + 1),
        }
    }
}

fn assert_errors(errors: &yaml::Errors, text: &str) {
    assert!(!errors.0.is_empty(), "an error without a problem");
    for e in &errors.0 {
        assert_located(&e.file, e.line, text, &e.message);
    }
}

/// An error names the file it came from and, when it has a line, one inside the input.
/// Errors without a line are about something other than the text: a manifest file a
/// scenario names, which the fuzzer's scenario cannot provide.
fn assert_located(file: &str, line: Option<usize>, text: &str, message: &str) {
    if file != FILE {
        return;
    }
    if let Some(line) = line {
        assert_line(line, text, message);
    }
}

/// `line` within the text, counting a lone `\r` as YAML does (a line past the last for an
/// error at the end of the input).
fn assert_line(line: usize, text: &str, message: &str) {
    let lines = 2 + text.bytes().filter(|&b| b == b'\n' || b == b'\r').count();
    assert!(
        (1..=lines).contains(&line),
        "line {line} outside 1..={lines}: {message}"
    );
}
