//! API server audit logs (`--audit-log-path`): `audit.k8s.io/v1` `Event` objects, one per line.
//! From `ResponseComplete` entries: writes to pods and nodes whose response carries the object
//! (level RequestResponse) become changes dated by `requestReceivedTimestamp` (the earliest
//! instant a watch can show them: a watcher may see the change before its writer sees the
//! response); Event objects go to
//! [`super::events`]; the controller's own GET, status PATCH and DELETE of pods (recognised by
//! its user) become `request` and `response` lines at `requestReceivedTimestamp` and
//! `stageTimestamp`. Spec: IMPORT-4, IMPORT-5.

use super::kubectl::parse;
use super::node_reads::NodeGet;
use super::{events, stamp, Change, Collected, Object, Rank, Seen, Settings, Skip, Stamp};
use crate::trace::{RequestVerb, ResponseResult, TraceEvent};
use serde_json::Value;
use taintcheck_core::api::{ResourceVersion, Uid};

/// The audit API version read (`audit.k8s.io/v1beta1` was removed in Kubernetes 1.24).
const VERSION: &str = "audit.k8s.io/v1";

/// Whether a JSON value is an audit entry rather than a watch event or an object.
pub fn is_audit(v: &Value) -> bool {
    v.get("auditID").is_some()
        || v.get("apiVersion")
            .and_then(Value::as_str)
            .is_some_and(|a| a.starts_with("audit.k8s.io/"))
}

/// Reads one audit entry.
pub fn entry(c: &mut Collected, settings: &Settings, v: &Value) -> Result<(), String> {
    let s = |path: &str| v.pointer(path).and_then(Value::as_str);
    match s("/apiVersion") {
        Some(VERSION) => {}
        other => {
            return Err(format!(
                "apiVersion: Unsupported value: {:?}: supported values: \"{VERSION}\"",
                other.unwrap_or("")
            ))
        }
    }
    if s("/kind") != Some("Event") {
        return Err("kind: Unsupported value: an audit entry is an \"Event\"".into());
    }
    if s("/stage") != Some("ResponseComplete") {
        c.skip(Skip::AuditStage);
        return Ok(());
    }
    let time = |field: &str| {
        let text = s(&format!("/{field}")).ok_or_else(|| format!("{field}: Required value"))?;
        stamp(text).ok_or_else(|| format!("{field}: Invalid value: {text:?}: not RFC 3339"))
    };
    let received = time("requestReceivedTimestamp")?;
    let done = time("stageTimestamp")?;
    c.saw(done.t);
    let id = s("/auditID").ok_or("auditID: Required value")?;
    if !c.audit_ids.insert(id.to_string()) {
        c.skip(Skip::Duplicate);
        return Ok(());
    }
    let user = s("/user/username").unwrap_or("");
    let controller = settings.controller_users.contains(user);
    exchange(c, v, controller, (received, done))
}

/// One request and its answer, in an audit entry's fields (`verb`, `objectRef`,
/// `requestObject`, `responseObject`, `responseStatus.code`), received and answered at the
/// given instants; `controller` says whether the taint eviction controller sent it. The proxy's
/// exchanges (PROXY-3) are read here too.
pub(super) fn exchange(
    c: &mut Collected,
    v: &Value,
    controller: bool,
    (received, done): (Stamp, Stamp),
) -> Result<(), String> {
    let s = |path: &str| v.pointer(path).and_then(Value::as_str);
    let resource = s("/objectRef/resource").unwrap_or("");
    let group = s("/objectRef/apiGroup").unwrap_or("");
    let verb = s("/verb").unwrap_or("");
    let code = v
        .pointer("/responseStatus/code")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if controller {
        c.requests_given = true;
    }
    let subresource = s("/objectRef/subresource").unwrap_or("");
    match (group, resource) {
        ("", "pods") if subresource == "binding" => {
            // A bind's response is a Status: the pod's change is known from elsewhere (a
            // watch), and is dated here.
            if verb == "create" && (200..300).contains(&code) {
                let name = |f: &str| s(&format!("/objectRef/{f}")).unwrap_or("").to_string();
                c.binds
                    .entry((name("namespace"), name("name")))
                    .or_default()
                    .push(received);
            }
            c.skip(Skip::NoObject);
            Ok(())
        }
        ("", "pods") if controller => request(c, v, verb, code, (received, done)),
        ("", "nodes") if controller && verb == "get" => node_read(c, v, code, (received, done)),
        ("", "pods") | ("", "nodes") => write(c, v, verb, code, (received, done)),
        ("", "events") | ("events.k8s.io", "events") => {
            c.events_given = true;
            if matches!(verb, "create" | "patch" | "update") {
                events::write(c, v, verb, received);
            }
            let object = ["/responseObject", "/requestObject"]
                .into_iter()
                .filter_map(|p| v.pointer(p))
                .find(|o| o.get("kind").and_then(Value::as_str) == Some("Event"));
            match object {
                Some(o) if (200..300).contains(&code) => {
                    events::event(c, o, Some(done.t)).map_err(|e| format!("responseObject.{e}"))
                }
                Some(_) => {
                    c.skip(Skip::FailedWrite);
                    Ok(())
                }
                None => {
                    c.skip(Skip::NoObject);
                    Ok(())
                }
            }
        }
        _ => {
            c.skip(Skip::OtherKind);
            Ok(())
        }
    }
}

/// A write to a pod or a node by anyone: a change, when the entry carries the stored object,
/// dated when the request was received (it is stored, and watchers may see it, from some instant
/// between that and the response). A read makes no change, but the object it returns may be one
/// the recording shows first (IMPORT-9).
fn write(
    c: &mut Collected,
    v: &Value,
    verb: &str,
    code: i64,
    (received, done): (Stamp, Stamp),
) -> Result<(), String> {
    if matches!(verb, "get" | "list") {
        c.skip(Skip::Read);
        return read(c, v, code, done);
    }
    if !matches!(verb, "create" | "update" | "patch" | "delete") {
        c.skip(Skip::Read);
        return Ok(());
    }
    if !(200..300).contains(&code) {
        c.skip(Skip::FailedWrite);
        return Ok(());
    }
    let mut response = v.get("responseObject").cloned().unwrap_or(Value::Null);
    // The API server may answer a DELETE that removed the pod at once with the object as it
    // was, without a resourceVersion: the deletion comes after every version logged before it.
    if verb == "delete" && response.pointer("/metadata/resourceVersion").is_none() {
        if let Some(meta) = response.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.insert(
                "resourceVersion".into(),
                Value::String(c.max_version.to_string()),
            );
        }
    }
    let Some(object) = object(&response).map_err(|e| format!("responseObject.{e}"))? else {
        c.skip(Skip::NoObject);
        return Ok(());
    };
    c.max_version = c.max_version.max(object.resource_version());
    // A DELETE's response is the object: still there (Terminating) while a grace period runs.
    let gone = verb == "delete"
        && match &object {
            Object::Pod(p) => p.metadata.deletion_grace_period_seconds.unwrap_or(0) == 0,
            Object::Node(_) => true,
        };
    let seen = if verb == "create" {
        Seen::Created
    } else {
        Seen::Changed
    };
    c.changes.push(Change {
        object,
        gone,
        seen,
        at: Some(received),
    });
    Ok(())
}

/// A successful `get` or `list` of pods or nodes whose response is logged: each object it
/// returns, as stored when it was read.
fn read(c: &mut Collected, v: &Value, code: i64, done: Stamp) -> Result<(), String> {
    let Some(response) = v
        .get("responseObject")
        .filter(|_| (200..300).contains(&code))
    else {
        return Ok(());
    };
    let kind = response.get("kind").and_then(Value::as_str).unwrap_or("");
    let items: Vec<(String, Value)> = match kind {
        "PodList" | "NodeList" => {
            let Some(items) = response.get("items").and_then(Value::as_array) else {
                return Err(
                    "responseObject.items: Required value: a List holds its objects in \
                            `items`"
                        .into(),
                );
            };
            // A list's items carry neither kind nor apiVersion: the list's own say what they are.
            let api_version = response.get("apiVersion").cloned().unwrap_or(Value::Null);
            let item_kind = Value::from(kind.trim_end_matches("List"));
            items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    let mut item = item.clone();
                    if let Some(o) = item.as_object_mut() {
                        o.entry("kind").or_insert_with(|| item_kind.clone());
                        o.entry("apiVersion").or_insert_with(|| api_version.clone());
                    }
                    (format!("responseObject.items[{i}]"), item)
                })
                .collect()
        }
        _ => vec![("responseObject".to_string(), response.clone())],
    };
    for (path, item) in items {
        if let Some(object) = object(&item).map_err(|e| format!("{path}.{e}"))? {
            c.max_version = c.max_version.max(object.resource_version());
            c.changes.push(Change {
                object,
                gone: false,
                seen: Seen::Read,
                at: Some(done),
            });
        }
    }
    Ok(())
}

/// The Pod or Node a logged object is, checked (IMPORT-1); `None` for anything else (a
/// `Status`, another kind).
fn object(v: &Value) -> Result<Option<Object>, String> {
    Ok(match v.get("kind").and_then(Value::as_str) {
        Some("Pod") => Some(Object::Pod(Box::new(parse(v, "Pod")?))),
        Some("Node") => Some(Object::Node(Box::new(parse(v, "Node")?))),
        _ => None,
    })
}

/// One of the controller's requests on a pod, and the API server's answer; its write, if it
/// stored something, is a change as anyone's.
fn request(
    c: &mut Collected,
    v: &Value,
    verb: &str,
    code: i64,
    (received, done): (Stamp, Stamp),
) -> Result<(), String> {
    let s = |path: &str| v.pointer(path).and_then(Value::as_str);
    let subresource = s("/objectRef/subresource").unwrap_or("");
    let body = v.get("requestObject");
    let trace_verb = match (verb, subresource) {
        ("get", "") => RequestVerb::Get,
        ("delete", "") => RequestVerb::Delete,
        // The node lifecycle controller (the taint manager's user before 1.29) also patches
        // pods' Ready condition; the taint manager's patch sets DisruptionTarget.
        ("patch", "status") if body.is_none_or(|b| b.to_string().contains("DisruptionTarget")) => {
            RequestVerb::Patch
        }
        // Its other writes (the node lifecycle controller's `Ready` condition) are changes as
        // anyone's; its informers' lists may show pods first.
        ("create" | "update" | "patch" | "delete", _) => {
            return write(c, v, verb, code, (received, done))
        }
        ("list", _) => {
            c.skip(Skip::OtherRequest);
            return read(c, v, code, done);
        }
        _ => {
            c.skip(Skip::OtherRequest);
            return Ok(());
        }
    };
    let (Some(namespace), Some(name)) = (s("/objectRef/namespace"), s("/objectRef/name")) else {
        return Err("objectRef: Required value: namespace and name of the pod".into());
    };
    let uid_at = |path: &str| {
        v.pointer(path)
            .and_then(Value::as_str)
            .map(|u| Uid(u.into()))
    };
    let request_uid = match trace_verb {
        RequestVerb::Delete => uid_at("/requestObject/preconditions/uid"),
        RequestVerb::Patch => uid_at("/requestObject/metadata/uid"),
        _ => None,
    };
    // The fixed design's resourceVersion preconditions.
    let version_at = |path: &str| {
        v.pointer(path)
            .and_then(Value::as_str)
            .and_then(|rv| rv.parse().ok())
            .map(ResourceVersion)
    };
    let request_version = match trace_verb {
        RequestVerb::Delete => version_at("/requestObject/preconditions/resourceVersion"),
        RequestVerb::Patch => version_at("/requestObject/metadata/resourceVersion"),
        _ => None,
    };
    let found = v
        .get("responseObject")
        .filter(|o| o.get("kind").and_then(Value::as_str) == Some("Pod"));
    let result = match code {
        200..=299 => ResponseResult::Ok,
        404 => ResponseResult::NotFound,
        409 => ResponseResult::PreconditionFailed,
        _ => ResponseResult::Failed,
    };
    let response_rv = found
        .and_then(|o| o.pointer("/metadata/resourceVersion"))
        .and_then(Value::as_str)
        .and_then(|rv| rv.parse().ok())
        .filter(|_| trace_verb != RequestVerb::Delete)
        .map(ResourceVersion);
    c.next_request += 1;
    let id = c.next_request;
    c.outputs.push((
        received,
        Rank::Request,
        TraceEvent::Request {
            id,
            verb: trace_verb,
            namespace: namespace.to_string(),
            name: name.to_string(),
            uid: request_uid,
            node: None,
            resource_version: request_version,
        },
    ));
    c.outputs.push((
        done,
        Rank::Response,
        TraceEvent::Response {
            id,
            result,
            uid: found.and_then(|_| uid_at("/responseObject/metadata/uid")),
            resource_version: response_rv,
        },
    ));
    if trace_verb == RequestVerb::Get {
        let node = found
            .and_then(|o| o.pointer("/spec/nodeName"))
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty());
        if let Some(node) = node {
            c.node_reads.entry(node.to_string()).or_default().push((
                done,
                namespace.to_string(),
                name.to_string(),
            ));
        }
        return read(c, v, code, done);
    }
    write(c, v, verb, code, (received, done))
}

/// The controller's GET of a node: the fixed design's live re-check of a pod it has just read on
/// that node. The audit entry does not say which pod: its lines are made here without one, and
/// [`super::node_reads::attribute`] names it once every entry is read.
fn node_read(
    c: &mut Collected,
    v: &Value,
    code: i64,
    (received, answered): (Stamp, Stamp),
) -> Result<(), String> {
    let node = v
        .pointer("/objectRef/name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let result = match code {
        200..=299 => ResponseResult::Ok,
        404 => ResponseResult::NotFound,
        _ => ResponseResult::Failed,
    };
    c.next_request += 1;
    let id = c.next_request;
    c.node_gets.push(NodeGet {
        node: node.clone(),
        received,
        answered,
        request: c.outputs.len(),
    });
    c.outputs.push((
        received,
        Rank::Request,
        TraceEvent::Request {
            id,
            verb: RequestVerb::GetNode,
            namespace: String::new(),
            name: String::new(),
            uid: None,
            node: Some(node.as_str().into()),
            resource_version: None,
        },
    ));
    c.outputs.push((
        answered,
        Rank::Response,
        TraceEvent::Response {
            id,
            result,
            uid: None,
            resource_version: None,
        },
    ));
    read(c, v, code, answered)
}
