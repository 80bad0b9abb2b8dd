//! Reading a recording file as a stream of JSON values, each with the line it starts on: what
//! `kubectl ... -o json` prints (pretty-printed objects one after another) and what the API
//! server's audit log holds (one object per line) are both such streams. Output kubectl prints
//! in another format gets an error that says how to record it. Spec: IMPORT-1.

use super::RecordingError;
use serde_json::Value;

/// How to record each kind so that `import` can read it.
pub const HOW_TO_RECORD: &str = "record each kind with `kubectl get pods -A --watch \
     --output-watch-events -o json` (likewise nodes and events), or give an audit log \
     (`--audit-log-path`, one JSON object per line)";

/// The JSON values of `text`, each with the 1-based line its first character is on; stops at
/// the first value that is not a JSON object.
pub fn values<'a>(
    file: &'a str,
    text: &'a str,
) -> impl Iterator<Item = Result<(usize, Value), RecordingError>> + 'a {
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    // Newlines before `counted`: each value's line is found by scanning only the text since
    // the previous value, so reading is linear in the file.
    let mut counted = 0;
    let mut line = 1;
    let mut failed = false;
    std::iter::from_fn(move || {
        if failed {
            return None;
        }
        let start = stream.byte_offset();
        let next = stream.next()?;
        let skip = text[start..]
            .find(|c: char| !c.is_whitespace())
            .unwrap_or(0);
        line += newlines(&text[counted..start + skip]);
        counted = start + skip;
        let result = match next {
            Ok(Value::Object(map)) => Ok((line, Value::Object(map))),
            Ok(other) => Err(error(file, line, not_an_object(&other))),
            Err(e) => Err(error(file, line.max(e.line()), hint(&text[counted..], &e))),
        };
        failed = result.is_err();
        Some(result)
    })
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
        values("f", text).map(|r| r.unwrap().0).collect()
    }

    #[test]
    fn each_value_has_the_line_it_starts_on() {
        assert_eq!(lines("{\"a\":1}\n\n  {\n\"b\":2\n}\n{}"), [1, 3, 6]);
    }

    #[test]
    fn other_formats_get_a_hint() {
        let first = |text: &str| values("f", text).next().unwrap().unwrap_err().to_string();
        assert!(first("type: ADDED\nobject: {}\n").contains("this is YAML"));
        assert!(first("NAME    STATUS   ROLES\nn1 Ready\n").contains("table output"));
        assert!(first("[{}]").starts_with("f:1: expected a JSON object"));
        let second = |text: &str| values("f", text).nth(1).unwrap().unwrap_err().to_string();
        let truncated = second("{\"a\":1}\n{\"type\":\"ADDED\",\"obj");
        assert!(truncated.starts_with("f:2: truncated JSON"), "{truncated}");
    }
}
