//! The input limits (specs/limits.md): how much one file, line, document, list or run may hold.
//! Every reader applies them through this module, so a hostile or mistaken input is refused the
//! same way everywhere, `file:line: field.path: Too long: …` or `Too many: …` and exit 2, before
//! it can exhaust the stack, the memory or the time of a run.
//!
//! A limit a user may legitimately need to raise reads its value from an environment variable
//! (`TAINTCHECK_MAX_FILE_BYTES=…`); the others bound resources of the machine itself (threads,
//! workers, the model's budget) and are fixed.

use std::borrow::Cow;
use std::fmt;
use std::io::{self, BufRead, Read};
use std::path::Path;
use std::sync::OnceLock;

/// One limit: its default, and the environment variable that overrides it (if any).
#[derive(Debug)]
pub struct Limit {
    /// What is counted, as the documentation and `Too many` messages say it.
    pub what: &'static str,
    /// Used when the variable is unset.
    pub default: usize,
    /// The overriding environment variable; `None` for a fixed limit.
    pub env: Option<&'static str>,
    value: OnceLock<usize>,
}

impl Limit {
    const fn new(what: &'static str, default: usize, env: Option<&'static str>) -> Limit {
        Limit {
            what,
            default,
            env,
            value: OnceLock::new(),
        }
    }

    /// The limit in force: the environment's value if it is set and a positive integer, else
    /// the default (read once per process).
    pub fn get(&self) -> usize {
        *self.value.get_or_init(|| {
            self.env
                .and_then(|name| std::env::var(name).ok())
                .and_then(|v| v.trim().parse::<usize>().ok())
                .filter(|&v| v > 0)
                .unwrap_or(self.default)
        })
    }

    /// How a message tells the user to raise the limit, when it can be raised.
    pub fn hint(&self) -> String {
        match self.env {
            Some(name) => format!(" (set {name} to raise the limit)"),
            None => String::new(),
        }
    }

    /// `Too many: N: must have at most M <what>` (the API server's wording), with the hint.
    pub fn too_many(&self, n: impl fmt::Display) -> String {
        format!(
            "Too many: {n}: must have at most {} {}{}",
            self.get(),
            self.what,
            self.hint()
        )
    }
}

/// Bytes in one input file (manifests, scenarios, configurations, recordings).
pub static FILE_BYTES: Limit = Limit::new("bytes", 64 << 20, Some("TAINTCHECK_MAX_FILE_BYTES"));
/// Bytes in one line of a trace (NDJSON); a trace itself may be any length, as it is streamed.
pub static LINE_BYTES: Limit = Limit::new("bytes", 1 << 20, Some("TAINTCHECK_MAX_LINE_BYTES"));
/// How deeply YAML collections may nest: Kubernetes objects nest about a dozen levels (a pod's
/// `managedFields` a few more). Fixed: it keeps every recursive walk far from the stack's end.
pub static YAML_DEPTH: Limit = Limit::new("levels of nesting", 64, None);
/// Nodes (scalars and collections) in one YAML file.
pub static YAML_NODES: Limit =
    Limit::new("YAML nodes", 4_000_000, Some("TAINTCHECK_MAX_YAML_NODES"));
/// Items in one YAML list (a `kind: List`'s items, a scenario's operations).
pub static LIST_ITEMS: Limit = Limit::new("items", 100_000, Some("TAINTCHECK_MAX_LIST_ITEMS"));
/// Taints of one node, tolerations of one pod.
pub static TAINTS: Limit = Limit::new("items", 10_000, Some("TAINTCHECK_MAX_TAINTS"));
/// Operations of one scenario.
pub static OPERATIONS: Limit = Limit::new("operations", 10_000, Some("TAINTCHECK_MAX_OPERATIONS"));
/// Controller workers (each a thread in the runtime), in a scenario's runtime, a model
/// configuration or `bench runtime`.
pub const WORKERS: usize = 64;
/// Checker threads of `check`.
pub const THREADS: usize = 256;
/// Environment operations of one model behaviour (`check --budget`, a configuration's budget).
pub const BUDGET: u8 = 16;
/// The model's horizon, and a scenario's `until`, in ms (one day).
pub const HORIZON_MS: i64 = 86_400_000;

/// Every limit a user can raise (with its variable), as specs/limits.md documents them.
pub fn adjustable() -> [&'static Limit; 6] {
    [
        &FILE_BYTES,
        &LINE_BYTES,
        &YAML_NODES,
        &LIST_ITEMS,
        &TAINTS,
        &OPERATIONS,
    ]
}

/// Why a file could not be read: `line` is set for text that is not UTF-8.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadError {
    /// The file as the user named it.
    pub file: String,
    /// 1-based line of the first invalid byte, for text that is not UTF-8.
    pub line: Option<usize>,
    /// What went wrong (`cannot read file: …`, `Too long: …`).
    pub message: String,
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.file, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

impl std::error::Error for ReadError {}

/// The one way a whole input file is read: at most [`FILE_BYTES`], UTF-8, and a directory or an
/// unreadable file named in the error.
pub fn read_file(path: &Path) -> Result<String, ReadError> {
    let error = |line, message: String| ReadError {
        file: path.display().to_string(),
        line,
        message,
    };
    read_bounded(open_file(path)?).map_err(|e| match e {
        Bounded::Io(e) => error(None, format!("cannot read file: {e}")),
        Bounded::TooLong => error(None, FILE_BYTES.too_long()),
        Bounded::Utf8 { line, byte } => error(Some(line), format!("invalid UTF-8 at byte {byte}")),
    })
}

/// An input file opened for streaming (recordings, read with [`Lines`]); a directory or an
/// unreadable file named in the error as [`read_file`] names it.
pub fn open_file(path: &Path) -> Result<io::BufReader<std::fs::File>, ReadError> {
    let error = |message: String| ReadError {
        file: path.display().to_string(),
        line: None,
        message,
    };
    if path.is_dir() {
        return Err(error("cannot read file: it is a directory".into()));
    }
    std::fs::File::open(path)
        .map(io::BufReader::new)
        .map_err(|e| error(format!("cannot read file: {e}")))
}

impl Limit {
    /// `Too long: must have at most N <what>`, with the hint.
    pub fn too_long(&self) -> String {
        format!(
            "Too long: must have at most {} {}{}",
            self.get(),
            self.what,
            self.hint()
        )
    }
}

enum Bounded {
    Io(io::Error),
    TooLong,
    Utf8 { line: usize, byte: usize },
}

fn read_bounded(input: impl Read) -> Result<String, Bounded> {
    let max = FILE_BYTES.get();
    let mut bytes = Vec::new();
    input
        .take(max as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(Bounded::Io)?;
    if bytes.len() > max {
        return Err(Bounded::TooLong);
    }
    utf8(bytes).map_err(|(line, byte)| Bounded::Utf8 { line, byte })
}

/// `bytes` as text, or the 1-based line and 0-based offset of the first invalid byte.
fn utf8(bytes: Vec<u8>) -> Result<String, (usize, usize)> {
    String::from_utf8(bytes).map_err(|e| {
        let byte = e.utf8_error().valid_up_to();
        let line = 1 + e.as_bytes()[..byte].iter().filter(|&&b| b == b'\n').count();
        (line, byte)
    })
}

/// A line of a stream that could not be read; `line` is its 1-based number.
#[derive(Debug)]
pub struct LineError {
    /// 1-based number of the line.
    pub line: usize,
    /// What went wrong (`Too long: …`, `invalid UTF-8 …`).
    pub message: String,
}

/// The lines of a stream (a trace, `-` for stdin), each at most [`LINE_BYTES`] and UTF-8, read
/// without ever holding more than one line: `/dev/zero` is an error, not an allocation failure.
pub struct Lines<R> {
    input: R,
    number: usize,
    failed: bool,
}

impl<R: BufRead> Lines<R> {
    /// The lines of `input`, numbered from 1.
    pub fn new(input: R) -> Lines<R> {
        Lines {
            input,
            number: 0,
            failed: false,
        }
    }

    fn next_line(&mut self) -> Result<Option<String>, String> {
        let max = LINE_BYTES.get();
        let mut line = Vec::new();
        loop {
            let chunk = match self.input.fill_buf() {
                Ok(chunk) => chunk,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(format!("cannot read file: {e}")),
            };
            if chunk.is_empty() {
                return (!line.is_empty()).then_some(line).map(text).transpose();
            }
            let (taken, done) = match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (chunk.len(), false),
            };
            let content = if done { taken - 1 } else { taken };
            if line.len() + content > max {
                self.input.consume(taken);
                return Err(LINE_BYTES.too_long());
            }
            line.extend_from_slice(&chunk[..content]);
            self.input.consume(taken);
            if done {
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return text(line).map(Some);
            }
        }
    }
}

fn text(bytes: Vec<u8>) -> Result<String, String> {
    utf8(bytes).map_err(|(_, byte)| format!("invalid UTF-8 at column {}", byte + 1))
}

impl<R: BufRead> Iterator for Lines<R> {
    type Item = Result<String, LineError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        self.number += 1;
        match self.next_line() {
            Ok(line) => line.map(Ok),
            Err(message) => {
                self.failed = true;
                Some(Err(LineError {
                    line: self.number,
                    message,
                }))
            }
        }
    }
}

/// How many characters of one value a message shows.
const SHOWN_CHARS: usize = 120;

/// `s` as a message shows it: whole if short, else its start, an ellipsis and how much was left
/// out, so that a 100 kB key does not become a 100 kB error.
pub fn shorten(s: &str) -> Cow<'_, str> {
    match s.char_indices().nth(SHOWN_CHARS) {
        None => Cow::Borrowed(s),
        Some((cut, _)) => {
            let rest = s.len() - cut;
            Cow::Owned(format!("{}… ({rest} more bytes)", &s[..cut]))
        }
    }
}

/// How many characters of one message are shown whole.
const MESSAGE_CHARS: usize = 600;

/// A message as stderr shows it: whole if short, else its start and its end (where the
/// `supported values` or the reason usually are) around what was left out.
pub fn shorten_message(s: &str) -> Cow<'_, str> {
    let count = s.chars().count();
    if count <= MESSAGE_CHARS {
        return Cow::Borrowed(s);
    }
    let head = s
        .char_indices()
        .nth(MESSAGE_CHARS - 200)
        .map_or(0, |(i, _)| i);
    let tail = s
        .char_indices()
        .nth(count - 200)
        .map_or(s.len(), |(i, _)| i);
    let left_out = tail - head;
    Cow::Owned(format!(
        "{}… ({left_out} bytes left out) …{}",
        &s[..head],
        &s[tail..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8]) -> Vec<Result<String, String>> {
        Lines::new(input)
            .map(|l| l.map_err(|e| format!("{}: {}", e.line, e.message)))
            .collect()
    }

    /// LIMIT-1: every limit a user can raise is in the documentation's table, with its
    /// variable and its default as the table writes it.
    #[test]
    fn every_adjustable_limit_is_documented() {
        let doc = include_str!("../../../specs/limits.md");
        for limit in adjustable() {
            let env = limit.env.expect("an adjustable limit has a variable");
            let row = doc
                .lines()
                .find(|l| l.starts_with('|') && l.contains(&format!("`{env}`")))
                .unwrap_or_else(|| panic!("specs/limits.md has no row for {env}"));
            let default = match limit.default {
                d if d % (1 << 20) == 0 => format!("{} MiB", d >> 20),
                d => {
                    let digits = d.to_string();
                    let mut grouped = String::new();
                    for (i, c) in digits.chars().enumerate() {
                        if i > 0 && (digits.len() - i) % 3 == 0 {
                            grouped.push(',');
                        }
                        grouped.push(c);
                    }
                    grouped
                }
            };
            assert!(row.contains(&format!("| {default} |")), "{env}: {row}");
        }
    }

    #[test]
    fn lines_are_split_and_capped() {
        assert_eq!(
            lines(b"a\r\nb\n\nc"),
            [
                Ok("a".into()),
                Ok("b".into()),
                Ok(String::new()),
                Ok("c".into())
            ]
        );
        let max = LINE_BYTES.get();
        let mut long = vec![b'x'; max];
        long.push(b'\n');
        assert_eq!(lines(&long).len(), 1, "a line of exactly the limit is read");
        long.insert(0, b'x');
        let got = lines(&long);
        assert_eq!(got.len(), 1);
        assert!(
            got[0]
                .as_ref()
                .unwrap_err()
                .starts_with("1: Too long: must have at most"),
            "{got:?}"
        );
        assert_eq!(
            lines(b"ok\n\xff\n"),
            [Ok("ok".into()), Err("2: invalid UTF-8 at column 1".into())]
        );
    }

    #[test]
    fn files_are_capped_and_their_bad_bytes_located() {
        let dir = std::env::temp_dir().join(format!("tc-limits-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let e = read_file(&dir).unwrap_err();
        assert_eq!(e.message, "cannot read file: it is a directory");
        assert!(e.to_string().starts_with(&dir.display().to_string()));
        let bad = dir.join("bad.yaml");
        std::fs::write(&bad, b"a: 1\nb: \xc3\x28\n").unwrap();
        let e = read_file(&bad).unwrap_err();
        assert_eq!(
            (e.line, e.message.as_str()),
            (Some(2), "invalid UTF-8 at byte 8")
        );
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(matches!(read_bounded(io::repeat(0)), Err(Bounded::TooLong)));
    }

    #[test]
    fn long_values_are_shortened() {
        assert_eq!(shorten("short"), "short");
        let long = "k".repeat(100_000);
        let shown = shorten(&long);
        assert!(shown.len() < 200, "{shown}");
        assert!(shown.ends_with("… (99880 more bytes)"), "{shown}");
        let message = format!("Invalid value: {long:?}: supported values: \"a\"");
        let shown = shorten_message(&message);
        assert!(shown.len() < 700, "{shown}");
        assert!(shown.starts_with("Invalid value: \"kkk"), "{shown}");
        assert!(shown.ends_with("kkk\": supported values: \"a\""), "{shown}");
    }
}
