//! The one YAML reading layer: scenarios, model configurations and Kubernetes manifests are all
//! read through it, so that every input gets the same limits and every error the same shape,
//! `file:line: field.path: message`, in the API server's words.
//!
//! [`load`] is the single entry point that turns text into saphyr's marked nodes (each with its
//! source line); it is where input limits are applied. On top of it, [`Field`] is a node with
//! the path that led to it, [`Read`] collects errors and offers typed accessors (string, bool,
//! integer, count, duration, list, mapping with known keys), and [`json`] turns a node into a
//! `serde_json::Value` with a line per field for the k8s-openapi decoder.

mod cursor;
pub mod json;
mod read;
mod scan;

use crate::field::FieldPath;
use crate::limits::{shorten, shorten_message};
use saphyr::{LoadableYamlNode, MarkedYaml};
use std::fmt;

pub use cursor::Field;
pub use json::LineIndex;
pub use read::{parse_duration, Read};

/// A YAML node with its source position (saphyr's marked node).
pub type Node<'y> = MarkedYaml<'y>;

/// Text that is not a YAML stream taintcheck accepts: bad syntax, or past a limit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadError {
    /// 1-based line where the problem starts.
    pub line: usize,
    /// What is wrong, in the API server's words.
    pub message: String,
}

/// Every document of a YAML stream (`---`-separated; a JSON text is one document), checked
/// against the input limits. The only place text becomes nodes.
pub fn load(text: &str) -> Result<Vec<Node<'_>>, LoadError> {
    scan::check(text)?;
    MarkedYaml::load_from_str(text).map_err(|e| LoadError {
        line: e.marker().line(),
        message: e.info().to_owned(),
    })
}

/// The one document of a file that must hold exactly one (a scenario, a configuration).
pub fn load_one<'y>(file: &str, text: &'y str) -> Result<Node<'y>, Errors> {
    let error = |line, message: String| {
        Errors(vec![Error {
            file: file.to_owned(),
            line: Some(line),
            field: FieldPath::root(),
            message,
        }])
    };
    let docs = load(text).map_err(|e| error(e.line, format!("invalid YAML: {}", e.message)))?;
    match <[_; 1]>::try_from(docs) {
        Ok([doc]) => Ok(doc),
        Err(_) => Err(error(1, "expected exactly one YAML document".to_owned())),
    }
}

/// One problem in an input file; displays as `file:line: field.path: message`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct Error {
    /// The input file, as the user named it.
    pub file: String,
    /// 1-based; `None` when the problem is not tied to a line (a command-line value).
    pub line: Option<usize>,
    /// The field at fault; the root when the message names its own.
    pub field: FieldPath,
    /// What is wrong, in the API server's words.
    pub message: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if !self.field.segments().is_empty() {
            write!(f, ": {}", shorten(&self.field.to_string()))?;
        }
        write!(f, ": {}", shorten_message(&self.message))
    }
}

/// All problems of one input, in file order; displays one per line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
pub struct Errors(pub Vec<Error>);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_errors_and_document_counts_are_located() {
        let e = load_one("f.yaml", "a: [1,\nb: 2\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("f.yaml:2: invalid YAML: "), "{e}");
        let e = load_one("f.yaml", "a: 1\n---\nb: 2\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "f.yaml:1: expected exactly one YAML document"
        );
        assert!(
            load_one("f.yaml", "").is_err(),
            "an empty file holds no document"
        );
    }

    #[test]
    fn documents_nested_past_the_limit_are_rejected() {
        const MAX_DEPTH: usize = 64;
        let nested = |depth: usize| "[".repeat(depth) + &"]".repeat(depth);
        assert!(load(&nested(MAX_DEPTH)).is_ok());
        let e = load(&nested(MAX_DEPTH + 1)).unwrap_err();
        assert_eq!(e.message, "nested more than 64 levels deep");
        let block: String = (0..=MAX_DEPTH)
            .map(|i| format!("{}k{i}:\n", "  ".repeat(i)))
            .collect();
        let e = load(&block).unwrap_err();
        assert_eq!(
            (e.line, e.message.as_str()),
            (MAX_DEPTH + 1, "nested more than 64 levels deep")
        );
    }

    /// Deep *block* nesting is refused before a tree exists: building or dropping one 20,000
    /// levels deep overflows the stack.
    #[test]
    fn deep_block_nesting_is_refused_without_recursing() {
        let e = load(&("- ".repeat(20_000) + "1")).unwrap_err();
        assert_eq!(
            (e.line, e.message.as_str()),
            (1, "nested more than 64 levels deep")
        );
        let block: String = (0..6_000)
            .map(|i| format!("{}k:\n", " ".repeat(i)))
            .collect();
        assert_eq!(load(&block).unwrap_err().line, 65);
    }

    #[test]
    fn lists_and_aliases_past_the_limits_are_refused_at_their_field() {
        let items = crate::limits::LIST_ITEMS.get();
        let list = format!("spec:\n  items: [{}]\n", "1,".repeat(items + 1));
        let e = load(&list).unwrap_err();
        assert_eq!(e.line, 2);
        assert!(
            e.message.starts_with(&format!(
                "spec.items: Too many: {}: must have at most",
                items + 1
            )),
            "{}",
            e.message
        );
        // Each level doubles what an alias expands to: 2^40 nodes from a few lines.
        let mut bomb = String::from("a0: &a0 [x, x]\n");
        for i in 1..40 {
            bomb.push_str(&format!("a{i}: &a{i} [*a{}, *a{0}]\n", i - 1));
        }
        let e = load(&bomb).unwrap_err();
        assert!(e.message.starts_with("Too many: "), "{}", e.message);
        assert!(e.message.contains("YAML nodes"), "{}", e.message);
    }

    #[test]
    fn errors_without_a_line_or_field_leave_them_out() {
        let e = Error {
            file: "--config".into(),
            line: None,
            field: FieldPath::root(),
            message: "Unsupported value".into(),
        };
        assert_eq!(e.to_string(), "--config: Unsupported value");
        let e = Error {
            line: Some(3),
            field: FieldPath::new("pods").index(0),
            ..e
        };
        assert_eq!(e.to_string(), "--config:3: pods[0]: Unsupported value");
    }
}
