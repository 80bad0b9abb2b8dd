//! Steering (PROXY-8): a schedule holds back from the controller a chosen watch event, or the
//! answer to one of its requests, or holds a request back from the API server, until the
//! controller has sent a chosen request or received a chosen watch event, so that a race the
//! model found happens in the order its counterexample gives, on the real controller, whose
//! timers run on the real clock. A hold that nothing releases within its bound is let go and
//! logged: the controller did not do what the counterexample did (the schedule diverged there).

use super::log::{Body, Log, Steered};
use super::route::ObjectRef;
use crate::names::Names;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use taintcheck_core::api::PodKey;

/// A schedule: holds, each applied once.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Schedule {
    pub holds: Vec<Hold>,
}

/// Hold the first thing `hold` matches until `until` happens, at most `at_most_ms`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hold {
    pub hold: Held,
    pub until: Until,
    pub at_most_ms: u64,
}

/// What a hold keeps back.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum Held {
    /// A watch event on its way to the controller (and what follows it on that stream).
    Event(WatchMatch),
    /// A request of the controller on its way to the API server.
    Request(RequestMatch),
    /// The API server's answer to a request, on its way to the controller.
    Answer(RequestMatch),
}

/// What lets a hold go.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum Until {
    /// The controller sends a request.
    Request(RequestMatch),
    /// The controller receives a watch event.
    Event(WatchMatch),
}

/// Which kind of object a rule is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Resource {
    Pods,
    Nodes,
    Events,
}

impl Resource {
    fn as_str(self) -> &'static str {
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
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WatchMatch {
    pub resource: Resource,
    #[serde(default)]
    pub namespace: Option<String>,
    pub name: String,
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    #[serde(default)]
    pub node: Option<String>,
    #[serde(default)]
    pub removes_taint: Option<String>,
}

/// A request of the controller: its verb (`get`, `patch`, `delete`, `create`, ...), its object
/// (a subresource only when `subresource` names it), and for Events, a text their `message`
/// contains (an Event's name is made up by the client, so it is not matched).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestMatch {
    pub verb: String,
    pub resource: Resource,
    #[serde(default)]
    pub namespace: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub subresource: Option<String>,
    #[serde(default)]
    pub message: Option<String>,
}

impl RequestMatch {
    fn matches(&self, verb: &str, object: &ObjectRef, body: &Body) -> bool {
        self.verb == verb
            && object.resource == self.resource.as_str()
            && object.subresource == self.subresource.as_deref().unwrap_or("")
            && self.name.as_deref().is_none_or(|n| n == object.name)
            && self
                .namespace
                .as_deref()
                .is_none_or(|ns| ns == object.namespace)
            && self.message.as_deref().is_none_or(|m| {
                matches!(body, Body::Json(v)
                    if v["message"].as_str().is_some_and(|text| text.contains(m)))
            })
    }

    fn describe(&self) -> String {
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
    /// Whether `event` is this rule's; `had` keeps the nodes seen with `removes_taint`.
    fn matches(&self, event: &Value, had: &Mutex<BTreeSet<String>>) -> bool {
        let s = |p: &str| event.pointer(p).and_then(Value::as_str);
        let (Some(kind), Some(name), Some(object_kind)) =
            (s("/type"), s("/object/metadata/name"), s("/object/kind"))
        else {
            return false;
        };
        let resource = match object_kind {
            "Pod" => Resource::Pods,
            "Node" => Resource::Nodes,
            "Event" => Resource::Events,
            _ => return false,
        };
        if self.resource != resource
            || self.name != name
            || self
                .namespace
                .as_deref()
                .is_some_and(|ns| Some(ns) != s("/object/metadata/namespace"))
            || self.kind.as_deref().is_some_and(|k| k != kind)
            || self
                .node
                .as_deref()
                .is_some_and(|n| Some(n) != s("/object/spec/nodeName"))
        {
            return false;
        }
        let Some(key) = &self.removes_taint else {
            return true;
        };
        let has = event
            .pointer("/object/spec/taints")
            .and_then(Value::as_array)
            .is_some_and(|taints| {
                taints
                    .iter()
                    .any(|t| t["key"].as_str() == Some(key) && t["effect"] == "NoExecute")
            });
        let mut had = had.lock().unwrap_or_else(|e| e.into_inner());
        if has {
            had.insert(name.to_string());
            return false;
        }
        had.contains(name)
    }

    fn describe(&self) -> String {
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
        out
    }
}

impl Schedule {
    /// Reads a schedule (JSON); an error names the line and the field.
    pub fn parse(file: &str, text: &str) -> Result<Schedule, String> {
        let mut de = serde_json::Deserializer::from_str(text);
        let schedule: Schedule = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let (line, path) = (e.inner().line(), e.path().to_string());
            format!("{file}:{line}: {path}: {}", e.into_inner())
        })?;
        for (i, h) in schedule.holds.iter().enumerate() {
            let requests = match (&h.hold, &h.until) {
                (Held::Request(r) | Held::Answer(r), Until::Request(u)) => vec![r, u],
                (Held::Request(r) | Held::Answer(r), Until::Event(_)) => vec![r],
                (Held::Event(_), Until::Request(u)) => vec![u],
                (Held::Event(_), Until::Event(_)) => vec![],
            };
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

    /// The schedule with a scenario's names replaced by a run's real ones.
    pub fn renamed(&self, names: &mut Names) -> Schedule {
        let mut out = self.clone();
        for hold in &mut out.holds {
            match &mut hold.hold {
                Held::Event(w) => rename_watch(names, w),
                Held::Request(r) | Held::Answer(r) => rename_request(names, r),
            }
            match &mut hold.until {
                Until::Event(w) => rename_watch(names, w),
                Until::Request(r) => rename_request(names, r),
            }
        }
        out
    }
}

fn rename_watch(names: &mut Names, w: &mut WatchMatch) {
    if let Some(node) = w.node.as_mut() {
        *node = names.node(node);
    }
    let mut name = Some(std::mem::take(&mut w.name));
    rename(names, w.resource, &mut w.namespace, &mut name);
    w.name = name.unwrap_or_default();
}

fn rename_request(names: &mut Names, r: &mut RequestMatch) {
    rename(names, r.resource, &mut r.namespace, &mut r.name);
}

fn rename(
    names: &mut Names,
    resource: Resource,
    namespace: &mut Option<String>,
    name: &mut Option<String>,
) {
    match (resource, name.as_mut()) {
        (Resource::Nodes, Some(name)) => *name = names.node(name),
        (Resource::Pods, Some(name)) => {
            let ns = namespace.clone().unwrap_or_else(|| "default".into());
            let key = names.pod(&PodKey::new(&ns, name));
            *namespace = Some(key.namespace.to_string());
            *name = key.name.to_string();
        }
        // An Event's namespace is its object's.
        (_, _) => {
            if let Some(ns) = namespace.as_mut() {
                *ns = names.namespace(ns);
            }
        }
    }
}

/// A schedule being applied.
pub struct Steering {
    holds: Vec<Hold>,
    released: Vec<tokio::sync::watch::Sender<bool>>,
    used: Vec<AtomicBool>,
    /// Per hold, the nodes seen with its held event's `removes_taint`.
    had_taint: Vec<Mutex<BTreeSet<String>>>,
    /// Per hold, the same for its `until` event.
    until_had_taint: Vec<Mutex<BTreeSet<String>>>,
}

impl Steering {
    pub fn new(schedule: Schedule) -> Steering {
        let n = schedule.holds.len();
        let sets = || (0..n).map(|_| Mutex::new(BTreeSet::new())).collect();
        Steering {
            holds: schedule.holds,
            released: (0..n)
                .map(|_| tokio::sync::watch::Sender::new(false))
                .collect(),
            used: (0..n).map(|_| AtomicBool::new(false)).collect(),
            had_taint: sets(),
            until_had_taint: sets(),
        }
    }

    /// The controller sent a request: releases the holds it is the awaited request of.
    pub fn request(&self, verb: &str, object: Option<&ObjectRef>, body: &Body) {
        let Some(object) = object else {
            return;
        };
        for (hold, released) in self.holds.iter().zip(&self.released) {
            if let Until::Request(until) = &hold.until {
                if until.matches(verb, object, body) {
                    released.send_replace(true);
                }
            }
        }
    }

    /// The controller received a watch event: releases the holds awaiting it.
    pub fn delivered(&self, event: &Value) {
        for (i, hold) in self.holds.iter().enumerate() {
            if let Until::Event(until) = &hold.until {
                if until.matches(event, &self.until_had_taint[i]) {
                    self.released[i].send_replace(true);
                }
            }
        }
    }

    /// The hold a watch event falls under, if any (each hold takes one event).
    pub fn holds_event(&self, event: &Value) -> Option<usize> {
        (0..self.holds.len()).find(|&i| match &self.holds[i].hold {
            Held::Event(w) => {
                !self.used[i].load(Ordering::SeqCst)
                    && w.matches(event, &self.had_taint[i])
                    && !self.used[i].swap(true, Ordering::SeqCst)
            }
            _ => false,
        })
    }

    /// The hold a request (`answer` false) or its answer (`answer` true) falls under, if any.
    pub fn holds_request(
        &self,
        answer: bool,
        verb: &str,
        object: Option<&ObjectRef>,
        body: &Body,
    ) -> Option<usize> {
        let object = object?;
        (0..self.holds.len()).find(|&i| match &self.holds[i].hold {
            Held::Request(r) if !answer => {
                r.matches(verb, object, body) && !self.used[i].swap(true, Ordering::SeqCst)
            }
            Held::Answer(r) if answer => {
                r.matches(verb, object, body) && !self.used[i].swap(true, Ordering::SeqCst)
            }
            _ => false,
        })
    }

    /// Writes a `Steer` line for each hold that never took what it holds: the controller
    /// never did what the counterexample has it do there.
    pub fn log_unused(&self, log: &Log) {
        for i in 0..self.holds.len() {
            if !self.used[i].load(Ordering::SeqCst) {
                let (kind, what, until) = self.describe(i);
                log.steer(&Steered {
                    hold: i,
                    kind,
                    id: 0,
                    what,
                    held: Duration::ZERO,
                    released: false,
                    engaged: false,
                    awaited: until,
                });
            }
        }
    }

    fn describe(&self, i: usize) -> (&'static str, String, String) {
        let hold = &self.holds[i];
        let (kind, what) = match &hold.hold {
            Held::Event(w) => ("event", w.describe()),
            Held::Request(r) => ("request", r.describe()),
            Held::Answer(r) => ("answer", format!("the answer to {}", r.describe())),
        };
        let until = match &hold.until {
            Until::Request(r) => r.describe(),
            Until::Event(w) => format!("the controller receiving {}", w.describe()),
        };
        (kind, what, until)
    }

    /// Holds until hold `i`'s release has come, or its bound has passed; logs which. `at` is
    /// the watch or the exchange it holds.
    pub async fn wait(&self, i: usize, at: u64, log: &Log) {
        let hold = &self.holds[i];
        let begun = Instant::now();
        let mut released = self.released[i].subscribe();
        let bound = Duration::from_millis(hold.at_most_ms);
        let came = tokio::time::timeout(bound, released.wait_for(|r| *r))
            .await
            .is_ok_and(|r| r.is_ok());
        let (held, what, until) = self.describe(i);
        log.steer(&Steered {
            hold: i,
            kind: held,
            id: at,
            what,
            held: begun.elapsed(),
            released: came,
            engaged: true,
            awaited: until,
        });
    }
}
