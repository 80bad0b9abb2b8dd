//! Kubernetes manifests as `kubectl get -o json|yaml` prints them: single objects, `kind: List`
//! (and `PodList`/`NodeList`), multi-document YAML. Read through k8s-openapi, validated as the API
//! server would, converted into the compact types ([`convert`]), and printed back ([`to_yaml`]).
//!
//! Bad input never panics: every problem becomes a [`Diagnostic`] that reads
//! `file:line: field.path: message`, the line taken from the source text.

pub mod convert;
mod entry;
mod print;

use crate::field::{BadValue, FieldError, FieldPath, Segment};
use crate::limits::{self, shorten, shorten_message};
use crate::validate;
use crate::yaml::{self, json};
use k8s_openapi::api::core::v1 as k8s;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::fmt;
use std::path::Path;
use taintcheck_core::api;

pub use entry::read_entry;

pub use crate::yaml::LineIndex;
pub use print::to_yaml;

/// A problem in a manifest, located in its file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// The file as the user named it.
    pub file: String,
    /// 1-based; `None` when the file could not be read at all.
    pub line: Option<usize>,
    /// The field at fault (`spec.tolerations[1].operator`); empty for the document itself.
    pub path: String,
    /// What is wrong, as the API server would say it.
    pub message: String,
}

impl Diagnostic {
    fn field(file: &str, line: usize, e: &FieldError) -> Diagnostic {
        Diagnostic {
            file: file.to_owned(),
            line: Some(line),
            path: e.path.to_string(),
            message: e.body(),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if !self.path.is_empty() {
            write!(f, ": {}", shorten(&self.path))?;
        }
        write!(f, ": {}", shorten_message(&self.message))
    }
}

/// The kinds taintcheck reads.
#[derive(Clone, Debug, PartialEq)]
pub enum Object {
    /// A pod (boxed: the decoded object is large).
    Pod(Box<k8s::Pod>),
    /// A node.
    Node(Box<k8s::Node>),
}

/// An object and where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Located {
    /// The decoded object.
    pub object: Object,
    /// The file it was read from.
    pub file: String,
    /// Lines of the object's fields, paths relative to the object (also for `List` items).
    pub lines: LineIndex,
}

impl Located {
    /// API-server validation of the object (see [`validate`]), located in the source.
    pub fn validate(&self, comparison_operators: bool) -> Vec<Diagnostic> {
        let errors = match &self.object {
            Object::Pod(p) => validate::pod(p, comparison_operators),
            Object::Node(n) => validate::node(n),
        };
        errors.iter().map(|e| self.locate(e)).collect()
    }

    /// `e` as a diagnostic at the line of its field.
    pub fn locate(&self, e: &FieldError) -> Diagnostic {
        Diagnostic::field(&self.file, self.lines.line(&e.path), e)
    }

    /// The line of the object's first field (its document or list item).
    pub fn line(&self) -> usize {
        self.lines.line(&FieldPath::root())
    }

    /// `Pod` or `Node`, as `kind:` says.
    pub fn kind(&self) -> &'static str {
        match self.object {
            Object::Pod(_) => "Pod",
            Object::Node(_) => "Node",
        }
    }

    /// The pod as the controller reads it, if this is a pod.
    pub fn compact_pod(&self) -> Option<api::Pod> {
        match &self.object {
            Object::Pod(p) => Some(convert::pod_from_k8s(p)),
            Object::Node(_) => None,
        }
    }

    /// The node as the controller reads it, if this is a node.
    pub fn compact_node(&self) -> Option<api::Node> {
        match &self.object {
            Object::Node(n) => Some(convert::node_from_k8s(n)),
            Object::Pod(_) => None,
        }
    }
}

/// What reading some files produced: the objects that decoded, and every problem found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Manifests {
    /// The objects that decoded, in file order.
    pub objects: Vec<Located>,
    /// Every problem met while reading them.
    pub errors: Vec<Diagnostic>,
}

/// Read one file from disk (see [`read_str`]); `display` names it in diagnostics.
pub fn read_file(path: &Path) -> Manifests {
    match limits::read_file(path) {
        Ok(text) => read_str(&path.display().to_string(), &text),
        Err(e) => Manifests {
            objects: Vec::new(),
            errors: vec![Diagnostic {
                file: e.file,
                line: e.line,
                path: String::new(),
                message: e.message,
            }],
        },
    }
}

/// Read every object of a YAML or JSON text. Empty documents are skipped, as kubectl does.
pub fn read_str(file: &str, text: &str) -> Manifests {
    let mut out = Manifests::default();
    let docs = match json::documents(text) {
        Ok(docs) => docs,
        Err(e) => {
            out.errors.push(Diagnostic {
                file: file.to_owned(),
                line: Some(e.line),
                path: String::new(),
                message: e.message,
            });
            return out;
        }
    };
    for (value, lines) in docs {
        if !value.is_null() {
            read_object(file, value, lines, None, &mut out);
        }
    }
    out
}

/// Read the objects of one node of a larger YAML document: a manifest inlined in a scenario
/// (`file` names that document; lines are its own).
pub fn read_yaml(file: &str, node: &yaml::Node) -> Manifests {
    let mut out = Manifests::default();
    match json::node(node) {
        Ok((value, lines)) => read_object(file, value, lines, None, &mut out),
        Err(e) => out.errors.push(Diagnostic {
            file: file.to_owned(),
            line: Some(e.line),
            path: String::new(),
            message: e.message,
        }),
    }
    out
}

const LIST_KINDS: [&str; 5] = ["List", "Node", "NodeList", "Pod", "PodList"];

/// Dispatch one document (or list item) on `apiVersion` and `kind`. `implied_kind` is the item
/// kind of a typed list, whose items carry no `kind` of their own.
fn read_object(
    file: &str,
    mut value: Value,
    lines: LineIndex,
    implied_kind: Option<&'static str>,
    out: &mut Manifests,
) {
    let at = |path: FieldPath, e: FieldError| Diagnostic::field(file, lines.line(&path), &e);
    let root = FieldPath::root();
    if !value.is_object() {
        let e = FieldError::invalid(root.clone(), bad_value(&value), "must be an object");
        out.errors.push(at(root, e));
        return;
    }
    let text = |field: &str| value.get(field).and_then(Value::as_str).map(str::to_owned);
    let (api_version, kind) = (text("apiVersion"), text("kind"));
    let kind = match (kind.as_deref(), implied_kind) {
        (None | Some(""), Some(implied)) => implied.to_owned(),
        (None | Some(""), None) => {
            let path = FieldPath::new("kind");
            out.errors
                .push(at(path.clone(), FieldError::required(path, "")));
            return;
        }
        (Some(k), _) => k.to_owned(),
    };
    if implied_kind.is_none() && api_version.as_deref() != Some("v1") {
        let path = FieldPath::new("apiVersion");
        let e = match api_version {
            None => FieldError::required(path.clone(), ""),
            Some(v) => FieldError::not_supported(path.clone(), BadValue::Str(v), &["v1"]),
        };
        out.errors.push(at(path, e));
        return;
    }
    if let Value::Object(map) = &mut value {
        // Typed-list items carry neither; k8s-openapi checks both.
        map.insert("apiVersion".to_owned(), Value::String("v1".to_owned()));
        map.insert("kind".to_owned(), Value::String(kind.clone()));
    }
    match kind.as_str() {
        "List" | "PodList" | "NodeList" => {
            let item_kind = match kind.as_str() {
                "PodList" => Some("Pod"),
                "NodeList" => Some("Node"),
                _ => None,
            };
            let items = FieldPath::new("items");
            match value.get("items") {
                None | Some(Value::Null) => {}
                Some(Value::Array(list)) => {
                    for (i, item) in list.iter().enumerate() {
                        let item_lines = lines.subtree(&items.index(i));
                        read_object(file, item.clone(), item_lines, item_kind, out);
                    }
                }
                Some(other) => {
                    let e = FieldError::invalid(items.clone(), bad_value(other), "must be a list");
                    out.errors.push(at(items, e));
                }
            }
        }
        "Pod" | "Node" => {
            // Checked before decoding: validation then stays within the limit.
            let list = if kind == "Pod" {
                "tolerations"
            } else {
                "taints"
            };
            let limit = &limits::TAINTS;
            let path = FieldPath::new("spec").child(list);
            let count = value
                .get("spec")
                .and_then(|spec| spec.get(list))
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            if count > limit.get() {
                out.errors.push(Diagnostic {
                    file: file.to_owned(),
                    line: Some(lines.line(&path)),
                    path: path.to_string(),
                    message: limit.too_many(count),
                });
                return;
            }
            let decoded = if kind == "Pod" {
                decode::<k8s::Pod>(value).map(|p| Object::Pod(Box::new(p)))
            } else {
                decode::<k8s::Node>(value).map(|n| Object::Node(Box::new(n)))
            };
            match decoded {
                Ok(object) => out.objects.push(Located {
                    object,
                    file: file.to_owned(),
                    lines,
                }),
                Err(e) => out.errors.push(at(e.path.clone(), e)),
            }
        }
        other => {
            let path = FieldPath::new("kind");
            let e = FieldError::not_supported(
                path.clone(),
                BadValue::Str(other.to_owned()),
                &LIST_KINDS,
            );
            out.errors.push(at(path, e));
        }
    }
}

/// Decode through k8s-openapi, reporting the first failure as a field error. A missing required
/// string (k8s-openapi's `Taint.key`, `Taint.effect`) is decoded as `""`, as Go does, so that
/// validation reports it the API server's way. Decoded from a borrowed `Value`, as a recording's
/// objects are (`recording::kubectl::parse`): one deserializer type instantiates k8s-openapi's
/// Pod and Node trees once in this crate, not twice (a fifth of its build).
fn decode<T: DeserializeOwned>(mut value: Value) -> Result<T, FieldError> {
    let mut defaulted: Vec<FieldPath> = Vec::new();
    loop {
        let err = match serde_path_to_error::deserialize::<_, T>(&value) {
            Ok(t) => return Ok(t),
            Err(err) => err,
        };
        let path = field_path(err.path());
        let message = err.inner().to_string();
        if let Some(field) = missing_field(&message) {
            let missing = path.child(field);
            if defaulted.contains(&missing) {
                return Err(FieldError::required(missing, ""));
            }
            match lookup_mut(&mut value, &path) {
                Some(Value::Object(map)) => {
                    map.insert(field.to_owned(), Value::String(String::new()));
                    defaulted.push(missing);
                    continue;
                }
                _ => return Err(FieldError::required(missing, "")),
            }
        }
        let bad =
            lookup_mut(&mut value, &path).map_or(BadValue::Str(String::new()), |v| bad_value(v));
        let detail = match message.split_once(", expected ") {
            Some((head, expected)) if head.starts_with("invalid type") => {
                format!("expected {expected}")
            }
            _ => message,
        };
        if defaulted.contains(&path) {
            return Err(FieldError::required(path, ""));
        }
        return Err(FieldError::invalid(path, bad, &detail));
    }
}

fn missing_field(message: &str) -> Option<&str> {
    message.strip_prefix("missing field `")?.strip_suffix('`')
}

fn field_path(p: &serde_path_to_error::Path) -> FieldPath {
    p.iter().fold(FieldPath::root(), |path, seg| match seg {
        serde_path_to_error::Segment::Seq { index } => path.index(*index),
        serde_path_to_error::Segment::Map { key } => path.child(key),
        serde_path_to_error::Segment::Enum { variant } => path.child(variant),
        serde_path_to_error::Segment::Unknown => path,
    })
}

fn lookup_mut<'v>(value: &'v mut Value, path: &FieldPath) -> Option<&'v mut Value> {
    path.segments().iter().try_fold(value, |v, seg| match seg {
        Segment::Child(name) | Segment::Key(name) => v.get_mut(name.as_str()),
        Segment::Index(i) => v.get_mut(*i),
    })
}

/// A JSON value as upstream would print the Go value it decodes to.
fn bad_value(v: &Value) -> BadValue {
    match v {
        Value::String(s) => BadValue::Str(s.clone()),
        Value::Number(n) if n.is_i64() => BadValue::Int(n.as_i64().unwrap_or_default()),
        Value::Null => BadValue::GoSyntax("null".to_owned()),
        other => BadValue::GoSyntax(other.to_string()),
    }
}

/// A compact pod as a manifest (`apiVersion: v1`, `kind: Pod`), YAML.
pub fn pod_yaml(p: &api::Pod) -> String {
    object_yaml(&convert::pod_to_k8s(p))
}

/// A compact node as a manifest (`apiVersion: v1`, `kind: Node`), YAML.
pub fn node_yaml(n: &api::Node) -> String {
    object_yaml(&convert::node_to_k8s(n))
}

fn object_yaml<T: serde::Serialize>(object: &T) -> String {
    match serde_json::to_value(object) {
        Ok(v) => to_yaml(&v),
        Err(e) => unreachable!("k8s-openapi objects always serialize: {e}"),
    }
}

#[cfg(test)]
mod tests;
