//! Reading a recording file, line by line, as a stream of JSON values, each with the line it
//! starts on: what `kubectl ... -o json` prints (pretty-printed objects one after another) and
//! what the API server's audit log holds (one object per line) are both such streams. Output
//! kubectl prints in another format gets an error that says how to record it. Spec: IMPORT-1.

use super::RecordingError;
use crate::limits::{Lines, FILE_BYTES};
use serde_json::Value;
use std::collections::VecDeque;
use std::io::BufRead;

/// How to record each kind so that `import` can read it.
pub const HOW_TO_RECORD: &str = "record each kind with `kubectl get pods -A --watch \
     --output-watch-events -o json` (likewise nodes and events), or give an audit log \
     (`--audit-log-path`, one JSON object per line)";

/// The JSON values of a recording, each with the 1-based line its first character is on, read
/// line by line (each line at most [`LINE_BYTES`], one value at most [`FILE_BYTES`]), so that
/// only the value being read is held, however long the recording; stops at the first value
/// that is not a JSON object.
pub fn values<'a, R: BufRead + 'a>(
    file: &'a str,
    input: R,
) -> impl Iterator<Item = Result<(usize, Value), RecordingError>> + 'a {
    Values {
        file,
        lines: Lines::new(input),
        number: 0,
        pending: String::new(),
        first_line: 0,
        nesting: Nesting::default(),
        parsed: VecDeque::new(),
        failed: false,
    }
}

/// The reader behind [`values`].
struct Values<'a, R> {
    file: &'a str,
    lines: Lines<R>,
    /// Lines read so far.
    number: usize,
    /// The text of the values not parsed yet: from `first_line` to a line where every bracket
    /// opened is closed.
    pending: String,
    first_line: usize,
    nesting: Nesting,
    parsed: VecDeque<Result<(usize, Value), RecordingError>>,
    failed: bool,
}

impl<R: BufRead> Iterator for Values<'_, R> {
    type Item = Result<(usize, Value), RecordingError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(value) = self.parsed.pop_front() {
                self.failed = value.is_err();
                return Some(value);
            }
            if self.failed {
                return None;
            }
            match self.lines.next() {
                None if self.pending.is_empty() => return None,
                None => self.parse_pending(),
                Some(Err(e)) => {
                    self.failed = true;
                    return Some(Err(error(self.file, e.line, e.message)));
                }
                Some(Ok(line)) => {
                    self.number += 1;
                    if self.pending.is_empty() {
                        if line.trim().is_empty() {
                            continue;
                        }
                        self.first_line = self.number;
                    }
                    if self.pending.len() + line.len() >= FILE_BYTES.get() {
                        self.failed = true;
                        let message = format!("one value: {}", FILE_BYTES.too_long());
                        return Some(Err(error(self.file, self.first_line, message)));
                    }
                    self.nesting.scan(&line);
                    self.pending.push_str(&line);
                    self.pending.push('\n');
                    if self.nesting.closed() {
                        self.parse_pending();
                    }
                }
            }
        }
    }
}

impl<R> Values<'_, R> {
    /// Parses the pending text (complete values, or the recording's truncated end, whose last
    /// line break is not the recording's: a value cut inside a string is truncated, not a
    /// string with a line break in it).
    fn parse_pending(&mut self) {
        let text = std::mem::take(&mut self.pending);
        self.nesting = Nesting::default();
        let text = text.strip_suffix('\n').unwrap_or(&text);
        self.parsed.extend(parse(self.file, text, self.first_line));
    }
}

/// Where a scan of JSON text is: how many brackets are open, inside a string or not.
#[derive(Default)]
struct Nesting {
    open: i64,
    in_string: bool,
    escaped: bool,
}

impl Nesting {
    fn scan(&mut self, line: &str) {
        for b in line.bytes() {
            match (self.in_string, self.escaped, b) {
                (true, true, _) => self.escaped = false,
                (true, false, b'\\') => self.escaped = true,
                (true, false, b'"') => self.in_string = false,
                (true, false, _) => {}
                (false, _, b'"') => self.in_string = true,
                (false, _, b'{' | b'[') => self.open += 1,
                (false, _, b'}' | b']') => self.open -= 1,
                (false, _, _) => {}
            }
        }
    }

    /// Every bracket opened is closed (or one too many closed: the parser says where).
    fn closed(&self) -> bool {
        self.open <= 0 && !self.in_string
    }
}

/// The JSON values of `text`, whose first line is line `first_line` of the file, up to the
/// first error.
fn parse(file: &str, text: &str, first_line: usize) -> Vec<Result<(usize, Value), RecordingError>> {
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    // Newlines before `counted`: each value's line is found by scanning only the text since
    // the previous value, so parsing is linear in the text.
    let mut counted = 0;
    let mut line = first_line;
    let mut values = Vec::new();
    while let Some(next) = {
        let start = stream.byte_offset();
        stream.next().map(|n| (start, n))
    } {
        let (start, next) = next;
        let skip = text[start..]
            .find(|c: char| !c.is_whitespace())
            .unwrap_or(0);
        line += newlines(&text[counted..start + skip]);
        counted = start + skip;
        let result = match next {
            Ok(Value::Object(map)) => Ok((line, Value::Object(map))),
            Ok(other) => Err(error(file, line, not_an_object(&other))),
            Err(e) => Err(error(
                file,
                line.max((first_line + e.line()).saturating_sub(1)),
                hint(&text[counted..], &e),
            )),
        };
        let failed = result.is_err();
        values.push(result);
        if failed {
            break;
        }
    }
    values
}

fn newlines(s: &str) -> usize {
    s.bytes().filter(|b| *b == b'\n').count()
}

fn error(file: &str, line: usize, message: String) -> RecordingError {
    RecordingError {
        file: file.to_string(),
        line,
        message,
    }
}

fn not_an_object(v: &Value) -> String {
    let what = match v {
        Value::Array(_) => "a JSON array",
        Value::String(_) => "a string",
        Value::Number(_) => "a number",
        Value::Bool(_) => "a boolean",
        Value::Null => "null",
        Value::Object(_) => "an object",
    };
    format!("expected a JSON object (a watch event, an object or a List), found {what}: {HOW_TO_RECORD}")
}

/// The message for text that is not JSON, with a hint when it is another of kubectl's formats.
fn hint(rest: &str, e: &serde_json::Error) -> String {
    let first = rest.lines().next().unwrap_or("").trim_start();
    let yaml = [
        "apiVersion:",
        "kind:",
        "type:",
        "object:",
        "---",
        "metadata:",
    ];
    let table = ["NAME ", "NAMESPACE ", "EVENT ", "LAST SEEN "];
    if yaml.iter().any(|p| first.starts_with(p)) {
        format!("this is YAML (`-o yaml`), not JSON: {HOW_TO_RECORD}")
    } else if table.iter().any(|p| first.starts_with(p)) {
        format!("this is kubectl's table output (`-o wide` or no `-o`), not JSON: {HOW_TO_RECORD}")
    } else if e.is_eof() {
        "truncated JSON: the recording ends inside a value (was kubectl stopped mid-line?)"
            .to_string()
    } else {
        format!(
            "invalid JSON: {}",
            e.to_string().split(" at line ").next().unwrap_or("")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<usize> {
        values("f", text.as_bytes()).map(|r| r.unwrap().0).collect()
    }

    #[test]
    fn each_value_has_the_line_it_starts_on() {
        assert_eq!(lines("{\"a\":1}\n\n  {\n\"b\":2\n}\n{}"), [1, 3, 6]);
    }

    #[test]
    fn brackets_inside_strings_do_not_end_a_value() {
        let text = "{\"a\": \"} \\\" {\",\n \"b\": [\"]\"]\n}\n{\"c\":\n1}";
        assert_eq!(lines(text), [1, 4]);
        let first: Vec<Value> = values("f", text.as_bytes()).map(|r| r.unwrap().1).collect();
        assert_eq!(first[0]["a"], "} \" {");
        assert_eq!(first[0]["b"][0], "]");
    }

    #[test]
    fn other_formats_get_a_hint() {
        let first = |text: &str| {
            values("f", text.as_bytes())
                .next()
                .unwrap()
                .unwrap_err()
                .to_string()
        };
        assert!(first("type: ADDED\nobject: {}\n").contains("this is YAML"));
        assert!(first("NAME    STATUS   ROLES\nn1 Ready\n").contains("table output"));
        assert!(first("[{}]").starts_with("f:1: expected a JSON object"));
        let second = |text: &str| {
            values("f", text.as_bytes())
                .nth(1)
                .unwrap()
                .unwrap_err()
                .to_string()
        };
        let truncated = second("{\"a\":1}\n{\"type\":\"ADDED\",\"obj");
        assert!(truncated.starts_with("f:2: truncated JSON"), "{truncated}");
    }
}
