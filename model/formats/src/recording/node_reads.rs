//! Which pod's work a controller's GET of a node was (IMPORT-5): the fixed design reads a pod,
//! then its node, then writes the pod; the audit entry of the node's GET names no pod.
//!
//! Each pod GET answered with the pod on a node opens a window on that node: from its answer to
//! the pod's next request (the PATCH or DELETE the re-check let through; none when the work
//! gave up). A node GET belongs to a window open when it was received and still open when it was
//! answered. Where several are (a storm: many works waiting for the client's tokens), the
//! window that closes first gets it, which is the most node GETs any assignment can explain;
//! among windows that never close, the earliest opened, as the client's token bucket serves
//! its waiters in the order they asked. A node GET no window explains is a read as anyone's.

use super::{Collected, Rank, Skip, Stamp};
use crate::trace::{RequestVerb, TraceEvent};
use std::collections::BTreeMap;

/// A controller's GET of a node, its request and response lines already in `outputs` (at
/// `request` and `request + 1`) without a pod.
pub(crate) struct NodeGet {
    pub node: String,
    pub received: Stamp,
    pub answered: Stamp,
    pub request: usize,
}

/// A pod GET that opened a window on its node.
struct Window {
    opened: Stamp,
    closed: Option<Stamp>,
    namespace: String,
    name: String,
}

/// Names the pod of every node GET in `c.node_gets`, in `c.outputs`; drops the lines of those no
/// window explains (counted as reads).
pub(crate) fn attribute(c: &mut Collected) {
    let mut windows = windows(c);
    let mut gets = std::mem::take(&mut c.node_gets);
    gets.sort_by_key(|g| g.received);
    let mut unexplained = Vec::new();
    for get in gets {
        let open = windows.get_mut(&get.node).and_then(|ws| {
            let fits = |w: &Window| {
                w.opened <= get.received && w.closed.is_none_or(|end| end >= get.answered)
            };
            let i = (0..ws.len())
                .filter(|&i| fits(&ws[i]))
                .min_by_key(|&i| (ws[i].closed.is_none(), ws[i].closed, ws[i].opened))?;
            Some(ws.remove(i))
        });
        match open {
            Some(w) => {
                if let (
                    _,
                    _,
                    TraceEvent::Request {
                        namespace, name, ..
                    },
                ) = &mut c.outputs[get.request]
                {
                    *namespace = w.namespace;
                    *name = w.name;
                }
            }
            None => unexplained.push(get.request),
        }
    }
    // Back to front, so the indices still to remove stay valid.
    unexplained.sort_unstable();
    for request in unexplained.into_iter().rev() {
        c.outputs.drain(request..request + 2);
        c.skip(Skip::Read);
    }
}

/// Per node, the windows the controller's pod GETs opened: each closes at the pod's first
/// request received after the GET's answer, other than a node GET.
fn windows(c: &Collected) -> BTreeMap<String, Vec<Window>> {
    let mut sent: BTreeMap<(&str, &str), Vec<Stamp>> = BTreeMap::new();
    for (at, rank, e) in &c.outputs {
        if let (
            Rank::Request,
            TraceEvent::Request {
                namespace,
                name,
                node: None,
                verb,
                ..
            },
        ) = (rank, e)
        {
            if *verb != RequestVerb::GetNode {
                sent.entry((namespace, name)).or_default().push(*at);
            }
        }
    }
    for stamps in sent.values_mut() {
        stamps.sort_unstable();
    }
    let mut windows: BTreeMap<String, Vec<Window>> = BTreeMap::new();
    for (node, reads) in &c.node_reads {
        for (opened, namespace, name) in reads {
            let closed = sent
                .get(&(namespace.as_str(), name.as_str()))
                .and_then(|s| s.iter().find(|at| *at > opened).copied());
            windows.entry(node.clone()).or_default().push(Window {
                opened: *opened,
                closed,
                namespace: namespace.clone(),
                name: name.clone(),
            });
        }
    }
    windows
}

#[cfg(test)]
mod tests {
    use crate::recording::import;
    use crate::trace::TraceEvent;
    use serde_json::{json, Value};

    const CONTROLLER: &str = "system:serviceaccount:kube-system:node-controller";

    /// An audit entry of the controller's: `verb` of `resource`/`name`, received at
    /// 10:00:`at` and answered 2 ms later.
    fn entry(id: &str, verb: &str, resource: &str, name: &str, at: &str, object: Value) -> String {
        let answered = format!("{}", at.parse::<f64>().unwrap() + 0.002);
        let mut e = json!({
            "apiVersion": "audit.k8s.io/v1", "kind": "Event", "stage": "ResponseComplete",
            "auditID": id, "verb": verb, "user": {"username": CONTROLLER},
            "objectRef": {"resource": resource, "name": name, "apiVersion": "v1"},
            "requestReceivedTimestamp": format!("2026-01-01T10:00:{at}Z"),
            "stageTimestamp": format!("2026-01-01T10:00:{answered:0>6}Z"),
            "responseStatus": {"code": 200},
            "responseObject": object,
        });
        if resource == "pods" {
            e["objectRef"]["namespace"] = json!("default");
        }
        if verb == "patch" {
            e["objectRef"]["subresource"] = json!("status");
        }
        e.to_string()
    }

    fn pod(name: &str) -> Value {
        json!({"kind": "Pod", "apiVersion": "v1",
               "metadata": {"name": name, "namespace": "default", "uid": format!("{name}-1"),
                            "resourceVersion": "5", "creationTimestamp": "2026-01-01T09:00:00Z"},
               "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "i"}]}})
    }

    fn node() -> Value {
        json!({"kind": "Node", "apiVersion": "v1",
               "metadata": {"name": "n1", "uid": "n1-1", "resourceVersion": "4",
                            "creationTimestamp": "2026-01-01T09:00:00Z"}})
    }

    /// The pods the node GETs are attributed to, in trace order.
    fn node_gets(lines: &[String]) -> Vec<String> {
        let text = lines.join("\n");
        let trace = import(&[("audit.log", &text)]).unwrap();
        trace
            .iter()
            .filter_map(|r| match &r.event {
                TraceEvent::Request {
                    node: Some(_),
                    name,
                    ..
                } => Some(name.clone()),
                _ => None,
            })
            .collect()
    }

    /// Two works read their pods of `n1` before either reads the node, as under a client rate
    /// limit: each node GET goes to the work whose next request comes first after it, not to
    /// the pod read latest (which would put `a`'s PATCH before its own node GET).
    #[test]
    fn a_node_get_goes_to_the_work_that_writes_next() {
        let lines = [
            entry("1", "get", "pods", "a", "01.000", pod("a")),
            entry("2", "get", "pods", "b", "01.010", pod("b")),
            entry("3", "get", "nodes", "n1", "01.050", node()),
            entry("4", "patch", "pods", "a", "01.060", pod("a")),
            entry("5", "get", "nodes", "n1", "01.100", node()),
            entry("6", "patch", "pods", "b", "01.110", pod("b")),
        ];
        assert_eq!(node_gets(&lines), ["a", "b"]);
        // The other way round, the other way round.
        let lines = [
            entry("1", "get", "pods", "a", "01.000", pod("a")),
            entry("2", "get", "pods", "b", "01.010", pod("b")),
            entry("3", "get", "nodes", "n1", "01.050", node()),
            entry("4", "patch", "pods", "b", "01.060", pod("b")),
            entry("5", "get", "nodes", "n1", "01.100", node()),
            entry("6", "patch", "pods", "a", "01.110", pod("a")),
        ];
        assert_eq!(node_gets(&lines), ["b", "a"]);
    }

    /// A node GET no pod GET before it explains is a read as anyone's: no request line.
    #[test]
    fn a_node_get_without_a_pod_read_is_no_request() {
        let lines = [
            entry("1", "get", "nodes", "n1", "01.000", node()),
            entry("2", "get", "pods", "a", "01.010", pod("a")),
            entry("3", "get", "nodes", "n1", "01.050", node()),
        ];
        assert_eq!(node_gets(&lines), ["a"]);
    }
}
