//! The exchange log of `taintcheck proxy` (PROXY-3): every request a controller sent through the
//! proxy with its answer, in an audit entry's fields and dated when the proxy forwarded it and
//! when the answer came back, and every watch event as the controller received it. The
//! exchanges are read as the controller's audit entries are ([`super::audit::exchange`]); a
//! watch event is a change dated when the controller received it: what the controller saw, when
//! it saw it (IMPORT-11).

use super::kubectl::parse;
use super::{audit, stamp, Change, Collected, Object, Seen, Skip, Stamp};
use serde_json::Value;

/// The API version of the proxy's lines.
pub const VERSION: &str = "proxy.taintcheck.io/v1";

/// Whether a JSON value is a line of the proxy's log.
pub fn is_proxy(v: &Value) -> bool {
    v.get("apiVersion").and_then(Value::as_str) == Some(VERSION)
}

/// Reads one line of the proxy's log.
pub fn line(c: &mut Collected, v: &Value) -> Result<(), String> {
    c.proxy_given = true;
    let time = |field: &str| {
        let text = v
            .get(field)
            .and_then(Value::as_str)
            .ok_or_else(|| format!("{field}: Required value"))?;
        stamp(text).ok_or_else(|| format!("{field}: Invalid value: {text:?}: not RFC 3339"))
    };
    match v.get("kind").and_then(Value::as_str).unwrap_or("") {
        "Exchange" => {
            let received = time("requestReceivedTimestamp")?;
            let done = time("stageTimestamp")?;
            c.saw(done.t);
            spoke_json(v)?;
            audit::exchange(c, v, true, (received, done))
        }
        "WatchEvent" => {
            let received = time("receivedTimestamp")?;
            c.saw(received.t);
            watch_event(c, v, received)
        }
        "Error" => {
            c.saw(time("timestamp")?.t);
            c.skip(Skip::ProxyError);
            Ok(())
        }
        "Steer" => {
            c.saw(time("timestamp")?.t);
            c.skip(Skip::Steered);
            Ok(())
        }
        other => Err(format!(
            "kind: Unsupported value: {other:?}: supported values: \"Exchange\", \
             \"WatchEvent\", \"Error\", \"Steer\""
        )),
    }
}

/// The proxy reads JSON bodies only; an exchange about pods, nodes or Events in another
/// encoding (client-go's protobuf, kube-controller-manager's default) cannot be read.
fn spoke_json(v: &Value) -> Result<(), String> {
    let Some(kind) = v.get("contentType").and_then(Value::as_str) else {
        return Ok(());
    };
    let resource = v
        .pointer("/objectRef/resource")
        .and_then(Value::as_str)
        .unwrap_or("");
    let json = kind.starts_with("application/json") && !kind.contains("coded");
    if json || !matches!(resource, "pods" | "nodes" | "events") {
        return Ok(());
    }
    Err(format!(
        "contentType: Unsupported value: {kind:?}: the proxy reads uncompressed JSON bodies \
         only: run the controller with `--kube-api-content-type=application/json`"
    ))
}

/// A watch event as the controller received it: a pod or node change at that instant. ADDED
/// events that replay what exists (`sendInitialEvents`, marked `initial` by the proxy) show
/// objects as they are, as a list does.
fn watch_event(c: &mut Collected, v: &Value, received: Stamp) -> Result<(), String> {
    let kind = v.get("type").and_then(Value::as_str).unwrap_or("");
    let seen = match kind {
        "ADDED" if v.get("initial").and_then(Value::as_bool) == Some(true) => Seen::Read,
        "ADDED" => Seen::Created,
        "MODIFIED" | "DELETED" => Seen::Changed,
        "BOOKMARK" | "ERROR" => {
            c.skip(Skip::WatchEventType);
            return Ok(());
        }
        other => {
            return Err(format!(
                "type: Unsupported value: {other:?}: supported values: \"ADDED\", \
                 \"MODIFIED\", \"DELETED\", \"BOOKMARK\", \"ERROR\""
            ))
        }
    };
    let object = v
        .get("object")
        .ok_or("object: Required value: a watch event carries its object")?;
    let object = match object.get("kind").and_then(Value::as_str) {
        Some("Pod") => Object::Pod(Box::new(
            parse(object, "Pod").map_err(|e| format!("object.{e}"))?,
        )),
        Some("Node") => Object::Node(Box::new(
            parse(object, "Node").map_err(|e| format!("object.{e}"))?,
        )),
        _ => {
            c.skip(Skip::OtherKind);
            return Ok(());
        }
    };
    c.changes.push(Change {
        object,
        gone: kind == "DELETED",
        seen,
        at: Some(received),
    });
    Ok(())
}
