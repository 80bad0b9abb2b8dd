//! YAML nodes as `serde_json::Value`s, for the k8s-openapi decoder, remembering the source line
//! of every field so errors can say `file:line:`.

use super::{load, LoadError, Node};
use crate::field::FieldPath;
use saphyr::{Scalar, YamlData};
use serde_json::{Map, Number, Value};
use std::collections::BTreeMap;

/// Source line (1-based) of each field of one document, keyed by its path from the document
/// root. A mapping entry's line is its key's line, so `spec:` blocks point at `spec:`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineIndex(BTreeMap<FieldPath, usize>);

impl LineIndex {
    /// The line of `path`, or of its nearest recorded ancestor (a missing field is reported
    /// where its parent is); 1 if nothing is known.
    pub fn line(&self, path: &FieldPath) -> usize {
        let mut p = path.clone();
        loop {
            if let Some(line) = self.0.get(&p) {
                return *line;
            }
            if p.segments().is_empty() {
                return 1;
            }
            p = p.parent();
        }
    }

    /// The index of the subtree at `prefix`, re-rooted there (for `List` items).
    pub fn subtree(&self, prefix: &FieldPath) -> LineIndex {
        // Paths order by their segments, so a subtree's paths follow its root's contiguously:
        // reading them costs the subtree, not the document (a `List` of n items stays linear).
        LineIndex(
            self.0
                .range(prefix.clone()..)
                .map_while(|(p, l)| p.strip_prefix(prefix).map(|p| (p, *l)))
                .collect(),
        )
    }
}

/// Every document of a YAML stream (`---`-separated; a JSON text is one document).
pub fn documents(text: &str) -> Result<Vec<(Value, LineIndex)>, LoadError> {
    load(text)?.iter().map(node).collect()
}

/// One node of a larger YAML document (a manifest inlined in a scenario): lines are those of the
/// enclosing text, paths start at the node.
pub fn node(node: &Node) -> Result<(Value, LineIndex), LoadError> {
    let mut lines = LineIndex::default();
    lines.0.insert(FieldPath::root(), node.span.start.line());
    let value = to_json(node, &FieldPath::root(), &mut lines)?;
    Ok((value, lines))
}

fn to_json(node: &Node, path: &FieldPath, lines: &mut LineIndex) -> Result<Value, LoadError> {
    let err = |message: &str| LoadError {
        line: node.span.start.line(),
        message: message.to_owned(),
    };
    Ok(match &node.data {
        YamlData::Value(scalar) => scalar_to_json(scalar),
        YamlData::Representation(raw, _, _) => Value::String(raw.to_string()),
        YamlData::Sequence(items) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let p = path.index(i);
                lines.0.insert(p.clone(), item.span.start.line());
                out.push(to_json(item, &p, lines)?);
            }
            Value::Array(out)
        }
        YamlData::Mapping(entries) => {
            let mut out = Map::new();
            for (k, v) in entries {
                let key = match &k.data {
                    YamlData::Value(s) => scalar_key(s),
                    YamlData::Representation(raw, _, _) => raw.to_string(),
                    _ => return Err(err("mapping keys must be scalars")),
                };
                let p = path.child(&key);
                lines.0.insert(p.clone(), k.span.start.line());
                out.insert(key, to_json(v, &p, lines)?);
            }
            Value::Object(out)
        }
        YamlData::Tagged(_, inner) => to_json(inner, path, lines)?,
        YamlData::Alias(_) => return Err(err("unresolved alias")),
        YamlData::BadValue => return Err(err("value does not match its tag")),
    })
}

fn scalar_to_json(s: &Scalar) -> Value {
    match s {
        Scalar::Null => Value::Null,
        Scalar::Boolean(b) => Value::Bool(*b),
        Scalar::Integer(i) => Value::Number((*i).into()),
        Scalar::FloatingPoint(f) => Number::from_f64(f.into_inner())
            .map(Value::Number)
            .unwrap_or_else(|| Value::String(f.to_string())),
        Scalar::String(s) => Value::String(s.to_string()),
    }
}

/// A non-string scalar key as text (JSON only has string keys; `sigs.k8s.io/yaml` does the same).
fn scalar_key(s: &Scalar) -> String {
    match scalar_to_json(s) {
        Value::String(s) => s,
        Value::Null => "null".to_owned(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_recorded_per_field_and_fall_back_to_the_parent() {
        let text = "kind: Pod\nspec:\n  tolerations:\n  - key: a\n    operator: Foo\n  - key: b\n";
        let docs = documents(text).unwrap();
        let (value, lines) = &docs[0];
        assert_eq!(value["spec"]["tolerations"][1]["key"], "b");
        let tol = FieldPath::new("spec").child("tolerations");
        assert_eq!(lines.line(&tol.index(0).child("operator")), 5);
        assert_eq!(lines.line(&tol.index(1)), 6);
        assert_eq!(
            lines.line(&tol.index(1).child("effect")),
            6,
            "missing field: parent's line"
        );
        assert_eq!(lines.line(&FieldPath::new("spec")), 2);
    }

    #[test]
    fn multi_document_streams_keep_absolute_lines() {
        let docs = documents("kind: Node\n---\nkind: Pod\nmetadata:\n  name: x\n").unwrap();
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[1].1.line(&FieldPath::new("metadata").child("name")), 5);
    }

    #[test]
    fn json_is_yaml_and_quoted_numbers_stay_strings() {
        let docs =
            documents(r#"{"value": "950", "n": 3, "f": 1.5, "b": true, "z": null}"#).unwrap();
        let v = &docs[0].0;
        assert_eq!(v["value"], Value::String("950".into()));
        assert_eq!(v["n"], 3);
        assert_eq!(v["f"], 1.5);
        assert_eq!(v["b"], true);
        assert!(v["z"].is_null());
    }

    #[test]
    fn syntax_errors_carry_a_line() {
        let e = documents("a: [1,\nb: 2\n").unwrap_err();
        assert_eq!(e.line, 2);
        let e = documents("a: 1\na: 2\n").unwrap_err();
        assert_eq!(
            (e.line, e.message.as_str()),
            (2, "duplicated key in mapping")
        );
    }
}
