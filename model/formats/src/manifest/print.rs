//! `serde_json::Value` to YAML in the layout `kubectl get -o yaml` uses: keys sorted, two-space
//! indentation, list items at their key's indentation. Strings that YAML could read as anything
//! else are double-quoted.

use serde_json::Value;

/// One YAML document (no leading `---`), ending in a newline.
pub fn to_yaml(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Object(m) if !m.is_empty() => write_map(&mut out, value, 0),
        Value::Array(a) if !a.is_empty() => write_seq(&mut out, value, 0),
        scalar => {
            out.push_str(&scalar_text(scalar));
            out.push('\n');
        }
    }
    out
}

fn write_map(out: &mut String, value: &Value, indent: usize) {
    let Value::Object(map) = value else { return };
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort();
    for (i, key) in keys.into_iter().enumerate() {
        // The first key of a list item shares the `- ` line.
        if i > 0 || !out.ends_with("- ") {
            pad(out, indent);
        }
        out.push_str(&string_text(key));
        out.push(':');
        write_after_key(out, &map[key], indent);
    }
}

fn write_after_key(out: &mut String, value: &Value, indent: usize) {
    match value {
        Value::Object(m) if !m.is_empty() => {
            out.push('\n');
            write_map(out, value, indent + 2);
        }
        Value::Array(a) if !a.is_empty() => {
            out.push('\n');
            write_seq(out, value, indent);
        }
        scalar => {
            out.push(' ');
            out.push_str(&scalar_text(scalar));
            out.push('\n');
        }
    }
}

fn write_seq(out: &mut String, value: &Value, indent: usize) {
    let Value::Array(items) = value else { return };
    for item in items {
        pad(out, indent);
        out.push_str("- ");
        match item {
            Value::Object(m) if !m.is_empty() => write_map(out, item, indent + 2),
            Value::Array(a) if !a.is_empty() => {
                out.push('\n');
                write_seq(out, item, indent + 2);
            }
            scalar => {
                out.push_str(&scalar_text(scalar));
                out.push('\n');
            }
        }
    }
}

fn pad(out: &mut String, indent: usize) {
    out.extend(std::iter::repeat_n(' ', indent));
}

fn scalar_text(v: &Value) -> String {
    match v {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => string_text(s),
        Value::Object(_) => "{}".to_owned(),
        Value::Array(_) => "[]".to_owned(),
    }
}

/// A string, plain when that is unambiguous in both YAML 1.1 and 1.2, else double-quoted.
fn string_text(s: &str) -> String {
    let plain_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '/' | '-');
    let starts_safely = s
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '/' || c == '_');
    let reserved = matches!(
        s.to_ascii_lowercase().as_str(),
        "true" | "false" | "yes" | "no" | "on" | "off" | "y" | "n" | "null"
    );
    if starts_safely && !reserved && s.chars().all(plain_char) {
        return s.to_owned();
    }
    // Go's `%q` escapes are all valid YAML double-quoted escapes.
    crate::field::go_quote(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn prints_in_kubectl_layout() {
        let v = json!({
            "kind": "Node",
            "apiVersion": "v1",
            "metadata": {"name": "n1"},
            "spec": {"taints": [{"key": "k", "value": "950", "effect": "NoExecute"}, {"key": "true", "effect": "NoSchedule"}]},
            "empty": {},
        });
        assert_eq!(
            to_yaml(&v),
            "apiVersion: v1\nempty: {}\nkind: Node\nmetadata:\n  name: n1\nspec:\n  taints:\n  - effect: NoExecute\n    key: k\n    value: \"950\"\n  - effect: NoSchedule\n    key: \"true\"\n"
        );
    }

    #[test]
    fn quoting_survives_a_reparse() {
        for s in [
            "",
            "950",
            "-1",
            "1e5",
            "yes",
            "a: b",
            "x #y",
            " lead",
            "tab\there",
            "quote\"",
            "0x1F",
            "\u{1}\u{7}\u{b}\u{c}\u{8}",
            "héllo\u{200b}",
            "back\\slash",
            "~",
            "ok.name/x-1",
        ] {
            let text = to_yaml(&json!({ "v": s }));
            let docs = crate::yaml::json::documents(&text).unwrap();
            assert_eq!(docs[0].0["v"], Value::String(s.to_owned()), "{text}");
        }
    }
}
