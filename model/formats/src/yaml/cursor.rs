//! A located node: a YAML node together with the field path that leads to it.

use super::Node;
use crate::field::FieldPath;
use crate::limits::shorten;
use saphyr::{AnnotatedMapping, Scalar, YamlData};

/// A node of a document and its path from the document root, so that an error about it can
/// name both its line and its field.
#[derive(Clone)]
pub struct Field<'a, 'y> {
    /// The node itself, with its position in the text.
    pub node: &'a Node<'y>,
    /// The field path from the document root (`spec.tolerations[1]`).
    pub path: FieldPath,
}

impl<'a, 'y> Field<'a, 'y> {
    /// The document root (its path is empty).
    pub fn root(node: &'a Node<'y>) -> Field<'a, 'y> {
        Field {
            node,
            path: FieldPath::root(),
        }
    }

    /// 1-based line where the node starts.
    pub fn line(&self) -> usize {
        self.node.span.start.line()
    }

    /// The value of `key` if this is a mapping that has it.
    pub fn get(&self, key: &str) -> Option<Field<'a, 'y>> {
        let (_, node) = self
            .mapping()?
            .iter()
            .find(|(k, _)| matches!(&k.data, YamlData::Value(Scalar::String(s)) if s == key))?;
        Some(Field {
            node,
            path: self.path.child(key),
        })
    }

    /// Whether this is a mapping with `key`.
    pub fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// The line of the field at `path` below this one, or of its nearest existing ancestor (a
    /// missing field is reported where its parent is).
    pub fn line_of(&self, path: &FieldPath) -> usize {
        let mut here = self.clone();
        for segment in path.segments() {
            let next = match segment {
                crate::field::Segment::Child(name) | crate::field::Segment::Key(name) => {
                    here.get(name)
                }
                crate::field::Segment::Index(i) => here.items().nth(*i),
            };
            match next {
                Some(next) => here = next,
                None => break,
            }
        }
        here.line()
    }

    /// The entries of a mapping, keys as text (non-text keys as `""`), in file order.
    pub fn entries(&self) -> impl Iterator<Item = (Field<'a, 'y>, Field<'a, 'y>)> + '_ {
        self.mapping().into_iter().flatten().map(|(k, v)| {
            let name = scalar_text(k).unwrap_or_default();
            let key = Field {
                node: k,
                path: self.path.child(&name),
            };
            let value = Field {
                node: v,
                path: self.path.child(&name),
            };
            (key, value)
        })
    }

    /// The items of a sequence (none if this is not one), with their indexed paths.
    pub fn items(&self) -> impl Iterator<Item = Field<'a, 'y>> + '_ {
        self.sequence()
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(i, node)| Field {
                node,
                path: self.path.index(i),
            })
    }

    /// The entries, if this node is a mapping.
    pub fn mapping(&self) -> Option<&'a AnnotatedMapping<'y, Node<'y>>> {
        match &self.node.data {
            YamlData::Mapping(m) => Some(m),
            _ => None,
        }
    }

    /// The items, if this node is a sequence.
    pub fn sequence(&self) -> Option<&'a Vec<Node<'y>>> {
        match &self.node.data {
            YamlData::Sequence(s) => Some(s),
            _ => None,
        }
    }

    /// The value, if this node is a scalar.
    pub fn scalar(&self) -> Option<&'a Scalar<'y>> {
        match &self.node.data {
            YamlData::Value(v) => Some(v),
            _ => None,
        }
    }

    /// The scalar as text (strings, numbers and booleans alike); `None` for null and
    /// collections.
    pub fn text(&self) -> Option<String> {
        scalar_text(self.node)
    }

    /// Whether this node is `null`, `~` or empty.
    pub fn is_null(&self) -> bool {
        matches!(self.scalar(), Some(Scalar::Null))
    }

    /// How the node is shown in an `Invalid value` message.
    pub fn shown(&self) -> String {
        self.text()
            .map(|t| shorten(&t).into_owned())
            .unwrap_or_else(|| match &self.node.data {
                YamlData::Mapping(_) => "a mapping".into(),
                YamlData::Sequence(_) => "a list".into(),
                _ => "null".into(),
            })
    }
}

fn scalar_text(node: &Node) -> Option<String> {
    Some(match &node.data {
        YamlData::Value(Scalar::String(s)) => s.to_string(),
        YamlData::Value(Scalar::Integer(i)) => i.to_string(),
        YamlData::Value(Scalar::FloatingPoint(f)) => f.to_string(),
        YamlData::Value(Scalar::Boolean(b)) => b.to_string(),
        _ => return None,
    })
}
