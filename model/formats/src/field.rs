//! Field paths and field errors, rendered exactly as the API server renders them
//! (apimachinery `pkg/util/validation/field`: `Path.String`, `Error.Error`, `ErrorBody`).
//!
//! Paths are built with [`FieldPath::child`], [`FieldPath::index`] and [`FieldPath::key`], never
//! by formatting strings, so that a path can also be looked up in a manifest's line index.

use std::fmt;

/// One step of a [`FieldPath`].
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Segment {
    /// A struct field: `.name`.
    Child(String),
    /// A list element: `[3]`.
    Index(usize),
    /// A map entry: `[key]` (unquoted, as upstream prints it).
    Key(String),
}

/// A path from an object's root to one of its fields, e.g. `spec.tolerations[1].operator`.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FieldPath(Vec<Segment>);

impl FieldPath {
    /// The object root (renders as the empty string).
    pub fn root() -> FieldPath {
        FieldPath(Vec::new())
    }

    /// A top-level field, e.g. `FieldPath::new("spec")`.
    pub fn new(name: &str) -> FieldPath {
        FieldPath::root().child(name)
    }

    /// `self.name`: a struct field below this path.
    pub fn child(&self, name: &str) -> FieldPath {
        self.with(Segment::Child(name.to_owned()))
    }

    /// `self[i]`: element `i` of the list at this path.
    pub fn index(&self, i: usize) -> FieldPath {
        self.with(Segment::Index(i))
    }

    /// `self[key]`: entry `key` of the map at this path.
    pub fn key(&self, key: &str) -> FieldPath {
        self.with(Segment::Key(key.to_owned()))
    }

    /// The steps from the root, for looking the path up in a manifest's line index.
    pub fn segments(&self) -> &[Segment] {
        &self.0
    }

    /// The enclosing path; the root is its own parent.
    pub fn parent(&self) -> FieldPath {
        let mut segments = self.0.clone();
        segments.pop();
        FieldPath(segments)
    }

    /// `self` with `prefix` removed from its front, if it starts with it.
    pub fn strip_prefix(&self, prefix: &FieldPath) -> Option<FieldPath> {
        self.0
            .starts_with(&prefix.0)
            .then(|| FieldPath(self.0[prefix.0.len()..].to_vec()))
    }

    fn with(&self, segment: Segment) -> FieldPath {
        let mut segments = Vec::with_capacity(self.0.len() + 1);
        segments.extend_from_slice(&self.0);
        segments.push(segment);
        FieldPath(segments)
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, segment) in self.0.iter().enumerate() {
            match segment {
                Segment::Child(name) if i == 0 => f.write_str(name)?,
                Segment::Child(name) => write!(f, ".{name}")?,
                Segment::Index(n) => write!(f, "[{n}]")?,
                Segment::Key(key) => write!(f, "[{key}]")?,
            }
        }
        Ok(())
    }
}

/// The value an error complains about, printed as upstream's `ErrorBody` prints a Go value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BadValue {
    /// A Go string (or string-kinded type): printed with `%q`.
    Str(String),
    /// An integer: printed with `%v`.
    Int(i64),
    /// A value upstream prints with `%#v` (structs); the text is already in Go syntax.
    GoSyntax(String),
}

impl fmt::Display for BadValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BadValue::Str(s) => f.write_str(&go_quote(s)),
            BadValue::Int(n) => write!(f, "{n}"),
            BadValue::GoSyntax(s) => f.write_str(s),
        }
    }
}

/// What is wrong with a field (upstream `ErrorType`, minus the kinds taintcheck never reports).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// `Required value`.
    Required,
    /// `Invalid value: <value>`.
    Invalid(BadValue),
    /// `Unsupported value: <value>: supported values: "A", "B"`.
    NotSupported {
        /// The value given.
        value: BadValue,
        /// The values upstream accepts, in its order.
        supported: Vec<&'static str>,
    },
    /// `Duplicate value: <value>`.
    Duplicate(BadValue),
    /// `Forbidden`.
    Forbidden,
}

/// One field error: a path, what is wrong, and an optional detail message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    /// The field at fault.
    pub path: FieldPath,
    /// What is wrong with it.
    pub kind: ErrorKind,
    /// Upstream's detail message (empty for none).
    pub detail: String,
}

impl FieldError {
    /// Upstream `field.Required`.
    pub fn required(path: FieldPath, detail: &str) -> FieldError {
        FieldError::new(path, ErrorKind::Required, detail)
    }

    /// Upstream `field.Invalid`.
    pub fn invalid(path: FieldPath, value: BadValue, detail: &str) -> FieldError {
        FieldError::new(path, ErrorKind::Invalid(value), detail)
    }

    /// Upstream `field.NotSupported`: the detail lists the supported values, quoted.
    pub fn not_supported(
        path: FieldPath,
        value: BadValue,
        supported: &[&'static str],
    ) -> FieldError {
        let detail = if supported.is_empty() {
            String::new()
        } else {
            let quoted: Vec<String> = supported.iter().map(|s| go_quote(s)).collect();
            format!("supported values: {}", quoted.join(", "))
        };
        FieldError {
            path,
            kind: ErrorKind::NotSupported {
                value,
                supported: supported.to_vec(),
            },
            detail,
        }
    }

    /// Upstream `field.Duplicate` (callers may set a detail, as `validateNodeTaints` does).
    pub fn duplicate(path: FieldPath, value: BadValue, detail: &str) -> FieldError {
        FieldError::new(path, ErrorKind::Duplicate(value), detail)
    }

    /// Upstream `field.Forbidden`.
    pub fn forbidden(path: FieldPath, detail: &str) -> FieldError {
        FieldError::new(path, ErrorKind::Forbidden, detail)
    }

    fn new(path: FieldPath, kind: ErrorKind, detail: &str) -> FieldError {
        FieldError {
            path,
            kind,
            detail: detail.to_owned(),
        }
    }

    /// Upstream `ErrorBody`: the message without the field path.
    pub fn body(&self) -> String {
        let mut s = match &self.kind {
            ErrorKind::Required => "Required value".to_owned(),
            ErrorKind::Forbidden => "Forbidden".to_owned(),
            ErrorKind::Invalid(v) => format!("Invalid value: {v}"),
            ErrorKind::NotSupported { value, .. } => format!("Unsupported value: {value}"),
            ErrorKind::Duplicate(v) => format!("Duplicate value: {v}"),
        };
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }
}

impl fmt::Display for FieldError {
    /// `path: body`, as upstream `Error.Error`; just the body for the object root.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.segments().is_empty() {
            f.write_str(&self.body())
        } else {
            write!(f, "{}: {}", self.path, self.body())
        }
    }
}

/// Go's `strconv.Quote` (what `%q` prints): printable characters kept, the usual escapes, other
/// control characters as `\xNN`, `\uNNNN` or `\UNNNNNNNN`.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if c.is_control() || is_go_unprintable(c) => {
                if (c as u32) < 0x10000 {
                    out.push_str(&format!("\\u{:04x}", c as u32));
                } else {
                    out.push_str(&format!("\\U{:08x}", c as u32));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Characters Go's `unicode.IsPrint` rejects beyond control characters: non-ASCII spaces and
/// format characters (zero-width and bidi controls, the BOM).
fn is_go_unprintable(c: char) -> bool {
    (c.is_whitespace() && c != ' ')
        || matches!(c, '\u{ad}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2064}' | '\u{feff}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_render_like_upstream_path_string() {
        let p = FieldPath::new("spec")
            .child("tolerations")
            .index(1)
            .child("operator");
        assert_eq!(p.to_string(), "spec.tolerations[1].operator");
        assert_eq!(
            FieldPath::new("metadata")
                .child("labels")
                .key("a.b/c")
                .to_string(),
            "metadata.labels[a.b/c]"
        );
        assert_eq!(FieldPath::root().to_string(), "");
        assert_eq!(p.parent().to_string(), "spec.tolerations[1]");
    }

    #[test]
    fn error_bodies_render_like_upstream_error_body() {
        let op = FieldPath::new("spec")
            .child("tolerations")
            .index(1)
            .child("operator");
        let e = FieldError::not_supported(
            op.clone(),
            BadValue::Str("Foo".into()),
            &["Equal", "Exists"],
        );
        assert_eq!(
            e.to_string(),
            r#"spec.tolerations[1].operator: Unsupported value: "Foo": supported values: "Equal", "Exists""#
        );
        assert_eq!(
            FieldError::required(
                FieldPath::new("spec")
                    .child("taints")
                    .index(0)
                    .child("effect"),
                ""
            )
            .to_string(),
            "spec.taints[0].effect: Required value"
        );
        assert_eq!(
            FieldError::invalid(op, BadValue::Int(-3), "bad").to_string(),
            "spec.tolerations[1].operator: Invalid value: -3: bad"
        );
        assert_eq!(
            FieldError::forbidden(FieldPath::new("spec").child("tolerations"), "no").to_string(),
            "spec.tolerations: Forbidden: no"
        );
    }

    #[test]
    fn go_quote_escapes_like_strconv_quote() {
        assert_eq!(go_quote("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(go_quote("tab\there\n"), r#""tab\there\n""#);
        assert_eq!(go_quote("\u{1}"), r#""\x01""#);
        assert_eq!(go_quote("héllo"), "\"héllo\"");
        assert_eq!(go_quote("\u{200b}"), r#""\u200b""#);
    }
}
