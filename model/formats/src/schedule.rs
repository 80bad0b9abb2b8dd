//! Steering schedules (specs/proxy.md, PROXY-8): which watch event, request or answer the proxy
//! holds back, and what lets it go. Written by hand or by `taintcheck check --schedule-out` from a
//! counterexample; read by `taintcheck proxy --schedule` and `taintcheck reproduce`. The proxy
//! matches them (taintcheck-cluster); this module only says what a schedule is.

use serde::{Deserialize, Serialize};
use taintcheck_core::time::Time;

/// A schedule: holds, each applied once.
#[derive(Clone, Debug, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Schedule {
    /// The holds, in no particular order: each takes the first thing it matches.
    pub holds: Vec<Hold>,
}

/// Hold the first thing `hold` matches until `until` happens, at most `at_most_ms`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Hold {
    /// What is held.
    pub hold: Held,
    /// What lets it go (latched: if it came before the hold took anything, the hold lets go at
    /// once).
    pub until: Until,
    /// The bound: after it the hold lets go anyway, and the proxy logs that it did.
    pub at_most_ms: u64,
    /// After its release, the hold waits this much longer: a watch event the controller has
    /// received is in its cache, and its handlers have run, only a moment later (the model's
    /// delivery does both at once).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub settle_ms: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What a hold keeps back.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum Held {
    /// A watch event on its way to the controller (and what follows it on that stream).
    Event(WatchMatch),
    /// A request of the controller on its way to the API server.
    Request(RequestMatch),
    /// The API server's answer to a request, on its way to the controller.
    Answer(RequestMatch),
    /// The scenario's operations due at this instant (milliseconds on the scenario's clock), on
    /// their way to the API server: a counterexample's environment change that comes after
    /// the controller's act waits for that act, not only for a fixed instant after it.
    Operations(u64),
}

/// What lets a hold go.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum Until {
    /// The controller sends a request.
    Request(RequestMatch),
    /// The controller receives a watch event.
    Event(WatchMatch),
    /// The controller receives the answer to a request.
    Answer(RequestMatch),
    /// The API server sends a watch event (it has applied the change), whether or not the
    /// controller has received it yet.
    Arrives(WatchMatch),
}

/// Which kind of object a rule is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Resource {
    /// Pods.
    Pods,
    /// Nodes.
    Nodes,
    /// Events (core/v1).
    Events,
}

impl Resource {
    /// The resource's name in a request path.
    pub fn as_str(self) -> &'static str {
        match self {
            Resource::Pods => "pods",
            Resource::Nodes => "nodes",
            Resource::Events => "events",
        }
    }
}

/// A watch event: of this object, of this `type` if given, of a pod bound to `node` if given
/// (a successor, told from its predecessor by where it runs), and, with `removes_taint`, a
/// node's change that takes away the NoExecute taint with that key (the node had it before on
/// the same stream).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WatchMatch {
    /// The object's resource.
    pub resource: Resource,
    /// Its namespace (pods).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Its name.
    pub name: String,
    /// The event's type: `ADDED`, `MODIFIED`, `DELETED`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// A pod's node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// A node's change that removes the NoExecute taint with this key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub removes_taint: Option<String>,
    /// A pod's successor: an event of a pod whose name another UID held earlier on the same
    /// stream (the API server makes the UIDs, so a schedule cannot name one).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub successor: bool,
}

/// A request of the controller: its verb (`get`, `patch`, `delete`, `create`, ...), its object
/// (a subresource only when `subresource` names it), and for Events, a text their `message`
/// contains (an Event's name is made up by the client, so it is not matched).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RequestMatch {
    /// The verb, lower-case.
    pub verb: String,
    /// The resource.
    pub resource: Resource,
    /// The object's namespace (an Event's: its object's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// The object's name (required but for Events).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The subresource (`status`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subresource: Option<String>,
    /// Text an Event's message contains.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl RequestMatch {
    /// In words, as the proxy's log and `reproduce` print it.
    pub fn describe(&self) -> String {
        let mut out = format!("{} {}", self.verb, self.resource.as_str());
        if let Some(name) = &self.name {
            out.push(' ');
            if let Some(ns) = &self.namespace {
                out.push_str(&format!("{ns}/"));
            }
            out.push_str(name);
        }
        if let Some(sub) = &self.subresource {
            out.push_str(&format!("/{sub}"));
        }
        if let Some(m) = &self.message {
            out.push_str(&format!(" saying {m:?}"));
        }
        out
    }
}

impl WatchMatch {
    /// In words.
    pub fn describe(&self) -> String {
        let mut out = match &self.kind {
            Some(kind) => format!("{kind} event of {} ", self.resource.as_str()),
            None => format!("an event of {} ", self.resource.as_str()),
        };
        if let Some(ns) = &self.namespace {
            out.push_str(&format!("{ns}/"));
        }
        out.push_str(&self.name);
        if let Some(node) = &self.node {
            out.push_str(&format!(" on {node}"));
        }
        if let Some(key) = &self.removes_taint {
            out.push_str(&format!(" removing taint {key}"));
        }
        if self.successor {
            out.push_str(" (a successor)");
        }
        out
    }
}

impl Hold {
    /// What the hold keeps back and what it waits for, in words: `(kind, what, until)`.
    pub fn describe(&self) -> (&'static str, String, String) {
        let (kind, what) = match &self.hold {
            Held::Event(w) => ("event", w.describe()),
            Held::Request(r) => ("request", r.describe()),
            Held::Answer(r) => ("answer", format!("the answer to {}", r.describe())),
            Held::Operations(ms) => (
                "operations",
                format!(
                    "the scenario's operations at {}",
                    Time(i64::try_from(*ms).unwrap_or(i64::MAX))
                ),
            ),
        };
        let until = match &self.until {
            Until::Request(r) => r.describe(),
            Until::Event(w) => format!("the controller receiving {}", w.describe()),
            Until::Answer(r) => format!("the controller receiving the answer to {}", r.describe()),
            Until::Arrives(w) => format!("the API server sending {}", w.describe()),
        };
        (kind, what, until)
    }
}

impl Schedule {
    /// Reads a schedule (JSON); an error names the file, line and field.
    pub fn parse(file: &str, text: &str) -> Result<Schedule, String> {
        let limit = &crate::limits::FILE_BYTES;
        if text.len() > limit.get() {
            return Err(format!("{file}: {}", limit.too_many(text.len())));
        }
        let mut de = serde_json::Deserializer::from_str(text);
        let schedule: Schedule = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let (line, path) = (e.inner().line(), e.path().to_string());
            format!("{file}:{line}: {path}: {}", e.into_inner())
        })?;
        for (i, h) in schedule.holds.iter().enumerate() {
            let mut watches = Vec::new();
            if let Held::Event(w) = &h.hold {
                watches.push(("hold.event", w));
            }
            match &h.until {
                Until::Event(u) => watches.push(("until.event", u)),
                Until::Arrives(u) => watches.push(("until.arrives", u)),
                Until::Request(_) | Until::Answer(_) => {}
            }
            for (field, w) in watches {
                if w.removes_taint.is_some() && w.resource != Resource::Nodes {
                    return Err(format!(
                        "{file}: holds[{i}].{field}.removes_taint: only a node's event removes a \
                         taint"
                    ));
                }
                if w.successor && w.resource != Resource::Pods {
                    return Err(format!(
                        "{file}: holds[{i}].{field}.successor: only a pod has successors"
                    ));
                }
            }
            let mut requests = Vec::new();
            if let Held::Request(r) | Held::Answer(r) = &h.hold {
                requests.push(r);
            }
            if let Until::Request(u) | Until::Answer(u) = &h.until {
                requests.push(u);
            }
            for r in requests {
                if r.resource != Resource::Events && r.name.is_none() {
                    return Err(format!(
                        "{file}: holds[{i}]: a request of {} needs its `name`",
                        r.resource.as_str()
                    ));
                }
            }
        }
        Ok(schedule)
    }

    /// The schedule as a file (pretty JSON, one hold per block).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a schedule serializes") + "\n"
    }
}
