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

use crate::field::FieldPath;
use saphyr::{LoadableYamlNode, MarkedYaml, YamlData};
use std::fmt;

pub use cursor::Field;
pub use json::LineIndex;
pub use read::{parse_duration, Read};

/// A YAML node with its source position (saphyr's marked node).
pub type Node<'y> = MarkedYaml<'y>;

/// How deeply collections may nest. Kubernetes objects nest about a dozen levels (a pod's
/// `managedFields` a few more); the limit keeps every recursive walk over a document, ours and
/// the decoder's, far from the stack's end.
pub const MAX_DEPTH: usize = 64;

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
    let docs = MarkedYaml::load_from_str(text).map_err(|e| LoadError {
        line: e.marker().line(),
        message: e.info().to_owned(),
    })?;
    for doc in &docs {
        check_depth(doc)?;
    }
    Ok(docs)
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

/// Rejects a document whose collections nest deeper than [`MAX_DEPTH`], without recursing.
fn check_depth(doc: &Node) -> Result<(), LoadError> {
    // Each node with the number of collections enclosing it.
    let mut stack = vec![(doc, 0)];
    while let Some((node, outer)) = stack.pop() {
        let children: Vec<&Node> = match &node.data {
            YamlData::Sequence(items) => items.iter().collect(),
            YamlData::Mapping(entries) => entries.iter().flat_map(|(k, v)| [k, v]).collect(),
            YamlData::Tagged(_, inner) => {
                stack.push((inner, outer));
                continue;
            }
            _ => continue,
        };
        if outer + 1 > MAX_DEPTH {
            return Err(LoadError {
                line: node.span.start.line(),
                message: format!("nested more than {MAX_DEPTH} levels deep"),
            });
        }
        stack.extend(children.into_iter().map(|n| (n, outer + 1)));
    }
    Ok(())
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
        if self.field.segments().is_empty() {
            write!(f, ": {}", self.message)
        } else {
            write!(f, ": {}: {}", self.field, self.message)
        }
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
