//! kubectl recordings: what `kubectl get KIND -A --watch --output-watch-events -o json` prints
//! (`{"type":"ADDED","object":{...}}` per change), bare objects and `List`s (`kubectl get -o
//! json`). Pods and nodes become changes, Events go to [`super::events`], other kinds are
//! skipped. Within one file an object's resourceVersion only grows, as a watch delivers it; an
//! older one is out of order (IMPORT-1).

use super::{events, Change, Collected, Object, Seen, Skip};
use k8s_openapi::api::core::v1 as k8s;
use serde_json::Value;
use std::collections::HashMap;

/// One recording file's watch streams: the last resourceVersion of each object.
#[derive(Default)]
pub struct Watch {
    seen: HashMap<(char, String, String), u64>,
}

impl Watch {
    /// Reads one JSON value of the file. A watch event has a `type` and no `kind`; an object
    /// has a `kind` (an Event object's own `type` is `Normal` or `Warning`).
    pub fn value(&mut self, c: &mut Collected, v: &Value) -> Result<(), String> {
        if let Some(kind) = v.get("type").filter(|_| v.get("kind").is_none()) {
            let kind = kind.as_str().unwrap_or("");
            return match kind {
                "ADDED" | "MODIFIED" | "DELETED" => {
                    let object = v
                        .get("object")
                        .ok_or("object: Required value: a watch event carries its object")?;
                    let seen = if kind == "ADDED" {
                        Seen::Created
                    } else {
                        Seen::Changed
                    };
                    self.object(c, object, kind == "DELETED", seen)
                        .map_err(|e| format!("object.{e}"))
                }
                "BOOKMARK" | "ERROR" => {
                    c.skip(Skip::WatchEventType);
                    Ok(())
                }
                other => Err(format!(
                    "type: Unsupported value: {other:?}: supported values: \"ADDED\", \
                     \"MODIFIED\", \"DELETED\", \"BOOKMARK\", \"ERROR\""
                )),
            };
        }
        let kind = v.get("kind").and_then(Value::as_str).unwrap_or("");
        if kind == "List" || kind.ends_with("List") {
            let items = v
                .get("items")
                .and_then(Value::as_array)
                .ok_or("items: Required value: a List holds its objects in `items`")?;
            for (i, item) in items.iter().enumerate() {
                self.object(c, item, false, Seen::Created)
                    .map_err(|e| format!("items[{i}].{e}"))?;
            }
            return Ok(());
        }
        self.object(c, v, false, Seen::Created)
    }

    fn object(
        &mut self,
        c: &mut Collected,
        v: &Value,
        gone: bool,
        seen: Seen,
    ) -> Result<(), String> {
        let object = match v.get("kind").and_then(Value::as_str) {
            Some("Node") => Object::Node(Box::new(parse(v, "Node")?)),
            Some("Pod") => Object::Pod(Box::new(parse(v, "Pod")?)),
            Some("Event") => return events::event(c, v, None),
            _ => {
                c.skip(Skip::OtherKind);
                return Ok(());
            }
        };
        let rv = object.resource_version();
        let (kind, namespace, name) = object.key();
        let key = (kind, namespace.to_string(), name.to_string());
        match self.seen.insert(key, rv) {
            Some(previous) if previous > rv => Err(format!(
                "metadata.resourceVersion: {rv} is older than {previous}, which an earlier entry \
                 of this file showed for the same object: the entries are out of order"
            )),
            _ => {
                c.changes.push(Change {
                    object,
                    gone,
                    seen,
                    at: None,
                });
                Ok(())
            }
        }
    }
}

/// Parses a Pod or a Node and checks what the trace needs of it: API version `v1`, a name (and
/// a namespace for a pod), a resourceVersion, and taints and tolerations the API server would
/// accept.
pub(crate) fn parse<T>(v: &Value, kind: &str) -> Result<T, String>
where
    T: serde::de::DeserializeOwned + Checked,
{
    match v.get("apiVersion").and_then(Value::as_str) {
        Some("v1") => {}
        other => {
            return Err(format!(
                "apiVersion: Unsupported value: {:?}: supported values: \"v1\" ({kind})",
                other.unwrap_or("")
            ))
        }
    }
    let object: T = serde_path_to_error::deserialize(v).map_err(|e| {
        let path = e.path().to_string();
        format!("{path}: {}", e.into_inner())
    })?;
    object.check()?;
    Ok(object)
}

/// What an object must have for a trace line.
pub(crate) trait Checked {
    fn check(&self) -> Result<(), String>;
}

fn required_meta(
    meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    namespaced: bool,
) -> Result<(), String> {
    if meta.name.as_deref().unwrap_or("").is_empty() {
        return Err("metadata.name: Required value".into());
    }
    if namespaced && meta.namespace.as_deref().unwrap_or("").is_empty() {
        return Err("metadata.namespace: Required value".into());
    }
    match meta.resource_version.as_deref().map(str::parse::<u64>) {
        Some(Ok(_)) => Ok(()),
        Some(Err(_)) => Err("metadata.resourceVersion: Invalid value: expected an integer".into()),
        None => Err(
            "metadata.resourceVersion: Required value: the API server always sets it; \
             the recording orders changes by it"
                .into(),
        ),
    }
}

impl Checked for k8s::Node {
    fn check(&self) -> Result<(), String> {
        required_meta(&self.metadata, false)?;
        match crate::validate::node(self).first() {
            Some(e) => Err(e.to_string()),
            None => Ok(()),
        }
    }
}

impl Checked for k8s::Pod {
    fn check(&self) -> Result<(), String> {
        required_meta(&self.metadata, true)?;
        match crate::validate::pod(self, true).first() {
            Some(e) => Err(e.to_string()),
            None => Ok(()),
        }
    }
}
