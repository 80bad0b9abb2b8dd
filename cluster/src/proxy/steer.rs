//! Steering (PROXY-8): a schedule holds back from the controller a chosen watch event, or the
//! answer to one of its requests, or holds a request back from the API server, until the
//! controller has sent a chosen request or received a chosen watch event, so that a race the
//! model found happens in the order its counterexample gives, on the real controller, whose
//! timers run on the real clock. A hold that nothing releases within its bound is let go and
//! logged: the controller did not do what the counterexample did (the schedule diverged there).

use super::log::{Body, Log, Steered};
use super::route::ObjectRef;
use crate::names::Names;
use serde_json::Value;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use taintcheck_core::api::PodKey;
pub use taintcheck_formats::schedule::{
    Held, Hold, RequestMatch, Resource, Schedule, Until, WatchMatch,
};

/// Whether a request of the controller is `r`'s.
fn request_matches(r: &RequestMatch, verb: &str, object: &ObjectRef, body: &Body) -> bool {
    r.verb == verb
        && object.resource == r.resource.as_str()
        && object.subresource == r.subresource.as_deref().unwrap_or("")
        && r.name.as_deref().is_none_or(|n| n == object.name)
        && r.namespace
            .as_deref()
            .is_none_or(|ns| ns == object.namespace)
        && r.message.as_deref().is_none_or(|m| {
            matches!(body, Body::Json(v)
                if v["message"].as_str().is_some_and(|text| text.contains(m)))
        })
}

/// Whether `event` is `w`'s; `had` keeps the nodes seen with `removes_taint`, or with
/// `successor`, the UIDs seen under the pod's name.
fn watch_matches(w: &WatchMatch, event: &Value, had: &Mutex<BTreeSet<String>>) -> bool {
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
    if w.resource != resource
        || w.name != name
        || w.namespace
            .as_deref()
            .is_some_and(|ns| Some(ns) != s("/object/metadata/namespace"))
    {
        return false;
    }
    if w.successor {
        let uid = s("/object/metadata/uid").unwrap_or_default();
        let mut had = had.lock().unwrap_or_else(|e| e.into_inner());
        let earlier = had.iter().any(|u| u != uid);
        had.insert(uid.to_string());
        if !earlier {
            return false;
        }
    }
    if w.kind.as_deref().is_some_and(|k| k != kind)
        || w.node
            .as_deref()
            .is_some_and(|n| Some(n) != s("/object/spec/nodeName"))
    {
        return false;
    }
    let Some(key) = &w.removes_taint else {
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

/// The schedule with a scenario's names replaced by a run's real ones.
pub fn renamed(schedule: &Schedule, names: &mut Names) -> Schedule {
    let mut out = schedule.clone();
    for hold in &mut out.holds {
        match &mut hold.hold {
            Held::Event(w) => rename_watch(names, w),
            Held::Request(r) | Held::Answer(r) => rename_request(names, r),
            Held::Operations(_) => {}
        }
        match &mut hold.until {
            Until::Event(w) | Until::Arrives(w) => rename_watch(names, w),
            Until::Request(r) | Until::Answer(r) => rename_request(names, r),
        }
    }
    out
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
    /// Whether a harness plays a scenario through this proxy (it asks before each operation).
    played: AtomicBool,
    /// Per hold, the nodes seen with its held event's `removes_taint`.
    had_taint: Vec<Mutex<BTreeSet<String>>>,
    /// Per hold, the same for its `until` event (received or arriving).
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
            played: AtomicBool::new(false),
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
                if request_matches(until, verb, object, body) {
                    released.send_replace(true);
                }
            }
        }
    }

    /// The holds awaiting the answer to this request, to be released once the controller has
    /// it (`release`).
    pub fn awaiting_answer(
        &self,
        verb: &str,
        object: Option<&ObjectRef>,
        body: &Body,
    ) -> Vec<usize> {
        let Some(object) = object else {
            return Vec::new();
        };
        (0..self.holds.len())
            .filter(|&i| {
                matches!(&self.holds[i].until,
                    Until::Answer(until) if request_matches(until, verb, object, body))
            })
            .collect()
    }

    /// Releases holds `which`.
    pub fn release(&self, which: &[usize]) {
        for &i in which {
            self.released[i].send_replace(true);
        }
    }

    /// The controller received a watch event: releases the holds awaiting it.
    pub fn delivered(&self, event: &Value) {
        for (i, hold) in self.holds.iter().enumerate() {
            if let Until::Event(until) = &hold.until {
                if watch_matches(until, event, &self.until_had_taint[i]) {
                    self.released[i].send_replace(true);
                }
            }
        }
    }

    /// The API server sent a watch event (before any hold): releases the holds awaiting it.
    pub fn arrived(&self, event: &Value) {
        for (i, hold) in self.holds.iter().enumerate() {
            if let Until::Arrives(until) = &hold.until {
                if watch_matches(until, event, &self.until_had_taint[i]) {
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
                    && watch_matches(w, event, &self.had_taint[i])
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
                request_matches(r, verb, object, body) && !self.used[i].swap(true, Ordering::SeqCst)
            }
            Held::Answer(r) if answer => {
                request_matches(r, verb, object, body) && !self.used[i].swap(true, Ordering::SeqCst)
            }
            _ => false,
        })
    }

    /// The hold the scenario's operations due at `at_ms` fall under, if any (the first of them
    /// takes it; once it is let go, the others are not held).
    pub fn holds_operations(&self, at_ms: u64) -> Option<usize> {
        self.played.store(true, Ordering::SeqCst);
        (0..self.holds.len()).find(|&i| {
            self.holds[i].hold == Held::Operations(at_ms)
                && !self.used[i].swap(true, Ordering::SeqCst)
        })
    }

    /// Writes a `Steer` line for each hold that never took what it holds: the controller
    /// never did what the counterexample has it do there. Operations are held only where a
    /// harness plays the scenario through this proxy; a proxy run alone never holds them, and
    /// that is no divergence.
    pub fn log_unused(&self, log: &Log) {
        let played = self.played.load(Ordering::SeqCst);
        for i in 0..self.holds.len() {
            let harnessed = played || !matches!(self.holds[i].hold, Held::Operations(_));
            if harnessed && !self.used[i].load(Ordering::SeqCst) {
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
        self.holds[i].describe()
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
        if came && hold.settle_ms > 0 {
            tokio::time::sleep(Duration::from_millis(hold.settle_ms)).await;
        }
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
