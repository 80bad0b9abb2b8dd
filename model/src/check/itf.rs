//! The Informal Trace Format (ITF), the JSON trace format of Apalache and Quint: a document with
//! `#meta`, `vars` and `states`, each state a record of the variables. Values are JSON booleans,
//! strings, arrays (lists) and objects (records), and the tagged forms `{"#bigint": "n"}`,
//! `{"#tup": [..]}`, `{"#set": [..]}`, `{"#map": [[k, v], ..]}`, Quint's variants
//! `{"tag": .., "value": ..}` and `{"#unserializable": ".."}`. This module writes and reads
//! that encoding; what the model's states become is `itf_state`'s concern. Spec: CHECK-3.

use serde_json::{json, Map, Value as Json};
use std::collections::BTreeMap;
use std::fmt;

/// The format description every written trace names in `#meta`.
pub const FORMAT_DESCRIPTION: &str = "https://apalache-mc.org/docs/adr/015adr-trace.html";

/// An ITF value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// A boolean.
    Bool(bool),
    /// An integer, written as `#bigint` whatever its size.
    Int(i128),
    /// A string.
    Str(String),
    /// A sequence (JSON array).
    List(Vec<Value>),
    /// A record (JSON object), fields in name order.
    Record(BTreeMap<String, Value>),
    /// A tuple.
    Tup(Vec<Value>),
    /// A set, in the order written.
    Set(Vec<Value>),
    /// A map as key-value pairs, in the order written.
    Map(Vec<(Value, Value)>),
    /// A Quint variant: the tag and its value (an empty record when it carries none).
    Variant(String, Box<Value>),
    /// A value the writer could not express.
    Unserializable(String),
}

impl Value {
    /// A string value.
    pub fn str(s: impl fmt::Display) -> Value {
        Value::Str(s.to_string())
    }

    /// An integer value.
    pub fn int(n: impl Into<i128>) -> Value {
        Value::Int(n.into())
    }

    /// A record of `fields`.
    pub fn record<'a>(fields: impl IntoIterator<Item = (&'a str, Value)>) -> Value {
        Value::Record(
            fields
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        )
    }

    /// A variant without a value.
    pub fn tag(tag: &str) -> Value {
        Value::Variant(tag.to_string(), Box::new(Value::Record(BTreeMap::new())))
    }

    /// A variant carrying `value`.
    pub fn variant(tag: &str, value: Value) -> Value {
        Value::Variant(tag.to_string(), Box::new(value))
    }

    /// `None` as the variant `None`, `Some(v)` as `Some` carrying `v` (Quint's `Option`).
    pub fn option<T>(v: Option<T>, f: impl FnOnce(T) -> Value) -> Value {
        match v {
            None => Value::tag("None"),
            Some(v) => Value::variant("Some", f(v)),
        }
    }

    /// The JSON encoding.
    pub fn to_json(&self) -> Json {
        match self {
            Value::Bool(b) => Json::Bool(*b),
            Value::Int(n) => json!({ "#bigint": n.to_string() }),
            Value::Str(s) => Json::String(s.clone()),
            Value::List(items) => Json::Array(items.iter().map(Value::to_json).collect()),
            Value::Record(fields) => Json::Object(
                fields
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_json()))
                    .collect(),
            ),
            Value::Tup(items) => {
                json!({ "#tup": items.iter().map(Value::to_json).collect::<Vec<_>>() })
            }
            Value::Set(items) => {
                json!({ "#set": items.iter().map(Value::to_json).collect::<Vec<_>>() })
            }
            Value::Map(pairs) => json!({
                "#map": pairs.iter().map(|(k, v)| json!([k.to_json(), v.to_json()])).collect::<Vec<_>>()
            }),
            Value::Variant(tag, value) => json!({ "tag": tag, "value": value.to_json() }),
            Value::Unserializable(s) => json!({ "#unserializable": s }),
        }
    }

    /// Decodes `j`; `at` locates it in the document for the error.
    pub fn from_json(j: &Json, at: &str) -> Result<Value, ItfError> {
        let err = |message: &str| ItfError(format!("{at}: {message}"));
        Ok(match j {
            Json::Bool(b) => Value::Bool(*b),
            // Small integers may be written as plain numbers.
            Json::Number(n) => Value::Int(
                n.as_i64()
                    .map(i128::from)
                    .ok_or_else(|| err("not an integer"))?,
            ),
            Json::String(s) => Value::Str(s.clone()),
            Json::Array(items) => Value::List(list(items, at)?),
            Json::Null => return Err(err("null is not an ITF value")),
            Json::Object(o) => return object(o, at),
        })
    }
}

fn list(items: &[Json], at: &str) -> Result<Vec<Value>, ItfError> {
    items
        .iter()
        .enumerate()
        .map(|(i, v)| Value::from_json(v, &format!("{at}[{i}]")))
        .collect()
}

/// An object: one of the tagged forms, a variant, or a record.
fn object(o: &Map<String, Json>, at: &str) -> Result<Value, ItfError> {
    let err = |message: &str| ItfError(format!("{at}: {message}"));
    let items = |key: &str| match &o[key] {
        Json::Array(items) => Ok(items),
        _ => Err(err(&format!("{key} is not an array"))),
    };
    if o.len() == 1 {
        if let Some(n) = o.get("#bigint") {
            let n = n.as_str().ok_or_else(|| err("#bigint is not a string"))?;
            return n
                .parse()
                .map(Value::Int)
                .map_err(|_| err(&format!("#bigint \"{n}\" is not an integer")));
        }
        if o.contains_key("#tup") {
            return Ok(Value::Tup(list(items("#tup")?, &format!("{at}.#tup"))?));
        }
        if o.contains_key("#set") {
            return Ok(Value::Set(list(items("#set")?, &format!("{at}.#set"))?));
        }
        if o.contains_key("#map") {
            let pairs = items("#map")?
                .iter()
                .enumerate()
                .map(|(i, pair)| {
                    let at = format!("{at}.#map[{i}]");
                    match pair.as_array().map(Vec::as_slice) {
                        Some([k, v]) => Ok((
                            Value::from_json(k, &format!("{at}[0]"))?,
                            Value::from_json(v, &format!("{at}[1]"))?,
                        )),
                        _ => Err(ItfError(format!("{at}: not a [key, value] pair"))),
                    }
                })
                .collect::<Result<_, _>>()?;
            return Ok(Value::Map(pairs));
        }
        if let Some(s) = o.get("#unserializable") {
            let s = s
                .as_str()
                .ok_or_else(|| err("#unserializable is not a string"))?;
            return Ok(Value::Unserializable(s.to_string()));
        }
    }
    if o.len() == 2 {
        if let (Some(Json::String(tag)), Some(value)) = (o.get("tag"), o.get("value")) {
            let value = Value::from_json(value, &format!("{at}.value"))?;
            return Ok(Value::Variant(tag.clone(), Box::new(value)));
        }
    }
    o.iter()
        .map(|(k, v)| Ok((k.clone(), Value::from_json(v, &format!("{at}.{k}"))?)))
        .collect::<Result<_, _>>()
        .map(Value::Record)
}

/// A malformed ITF document: where, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ItfError(pub String);

impl fmt::Display for ItfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ItfError {}

/// One ITF trace: its description, the variable names, and one record of them per state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trace {
    /// `#meta.source`: what produced the trace.
    pub source: String,
    /// `#meta.description`.
    pub description: String,
    /// `vars`, in order.
    pub vars: Vec<String>,
    /// `states`: each maps every variable to its value.
    pub states: Vec<BTreeMap<String, Value>>,
}

impl Trace {
    /// The document.
    pub fn to_json(&self) -> Json {
        let states: Vec<Json> = self
            .states
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let mut o = Map::new();
                o.insert("#meta".into(), json!({ "index": i }));
                for (k, v) in s {
                    o.insert(k.clone(), v.to_json());
                }
                Json::Object(o)
            })
            .collect();
        json!({
            "#meta": {
                "format": "ITF",
                "format-description": FORMAT_DESCRIPTION,
                "source": self.source,
                "description": self.description,
            },
            "vars": self.vars,
            "states": states,
        })
    }

    /// Reads a document: `vars` must be strings and every state must give exactly those
    /// variables (its `#meta` aside).
    pub fn from_json(j: &Json) -> Result<Trace, ItfError> {
        let meta = j.get("#meta");
        let text = |key: &str| {
            meta.and_then(|m| m.get(key))
                .and_then(Json::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let vars: Vec<String> = j
            .get("vars")
            .and_then(Json::as_array)
            .ok_or_else(|| ItfError("vars: missing or not an array".into()))?
            .iter()
            .enumerate()
            .map(|(i, v)| {
                v.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| ItfError(format!("vars[{i}]: not a string")))
            })
            .collect::<Result<_, _>>()?;
        let states = j
            .get("states")
            .and_then(Json::as_array)
            .ok_or_else(|| ItfError("states: missing or not an array".into()))?
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let at = format!("states[{i}]");
                let o = s
                    .as_object()
                    .ok_or_else(|| ItfError(format!("{at}: not an object")))?;
                let mut state = BTreeMap::new();
                for (k, v) in o.iter().filter(|(k, _)| *k != "#meta") {
                    if !vars.contains(k) {
                        return Err(ItfError(format!("{at}.{k}: not a declared variable")));
                    }
                    state.insert(k.clone(), Value::from_json(v, &format!("{at}.{k}"))?);
                }
                if let Some(missing) = vars.iter().find(|v| !state.contains_key(*v)) {
                    return Err(ItfError(format!("{at}: variable {missing} missing")));
                }
                Ok(state)
            })
            .collect::<Result<_, _>>()?;
        Ok(Trace {
            source: text("source"),
            description: text("description"),
            vars,
            states,
        })
    }

    /// Parses a document from text.
    pub fn parse(text: &str) -> Result<Trace, ItfError> {
        let j: Json = serde_json::from_str(text).map_err(|e| ItfError(e.to_string()))?;
        Trace::from_json(&j)
    }
}
