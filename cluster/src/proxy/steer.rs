//! Steering (PROXY-8): a schedule holds chosen watch events back from the controller until the
//! controller has sent a chosen request, so that a race the model found happens in the order
//! its counterexample gives, on the real controller, whose timers run on the real clock. A
//! hold that no request releases within its bound is let go and logged: the controller did not
//! do what the counterexample did (the schedule diverged there).

use super::log::Log;
use super::route::Route;
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

/// Hold the first watch event `watch` matches until the controller sends a request `until`
/// matches, at most `at_most_ms`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hold {
    pub watch: WatchMatch,
    pub until: RequestMatch,
    pub at_most_ms: u64,
}

/// Which kind of object a rule is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Resource {
    Pods,
    Nodes,
}

impl Resource {
    fn as_str(self) -> &'static str {
        match self {
            Resource::Pods => "pods",
            Resource::Nodes => "nodes",
        }
    }
}

/// A watch event: of this object, of this `type` if given, and, with `removes_taint`, a node's
/// change that takes away the NoExecute taint with that key (the node had it before on the same
/// stream).
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
    pub removes_taint: Option<String>,
}

/// A request of the controller: its verb (`get`, `patch`, `delete`, ...) and object.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestMatch {
    pub verb: String,
    pub resource: Resource,
    #[serde(default)]
    pub namespace: Option<String>,
    pub name: String,
}

impl Schedule {
    /// Reads a schedule (JSON); an error names the line and the field.
    pub fn parse(file: &str, text: &str) -> Result<Schedule, String> {
        let mut de = serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let (line, path) = (e.inner().line(), e.path().to_string());
            format!("{file}:{line}: {path}: {}", e.into_inner())
        })
    }

    /// The schedule with a scenario's names replaced by a run's real ones.
    pub fn renamed(&self, names: &mut Names) -> Schedule {
        let mut out = self.clone();
        for hold in &mut out.holds {
            rename(
                names,
                hold.watch.resource,
                &mut hold.watch.namespace,
                &mut hold.watch.name,
            );
            rename(
                names,
                hold.until.resource,
                &mut hold.until.namespace,
                &mut hold.until.name,
            );
        }
        out
    }
}

fn rename(
    names: &mut Names,
    resource: Resource,
    namespace: &mut Option<String>,
    name: &mut String,
) {
    match resource {
        Resource::Nodes => *name = names.node(name),
        Resource::Pods => {
            let ns = namespace.clone().unwrap_or_else(|| "default".into());
            let key = names.pod(&PodKey::new(&ns, name));
            *namespace = Some(key.namespace.to_string());
            *name = key.name.to_string();
        }
    }
}

/// A schedule being applied.
pub struct Steering {
    holds: Vec<Hold>,
    released: Vec<tokio::sync::watch::Sender<bool>>,
    used: Vec<AtomicBool>,
    /// Per hold with `removes_taint`, the nodes seen with that taint.
    had_taint: Vec<Mutex<BTreeSet<String>>>,
}

impl Steering {
    pub fn new(schedule: Schedule) -> Steering {
        let n = schedule.holds.len();
        Steering {
            holds: schedule.holds,
            released: (0..n)
                .map(|_| tokio::sync::watch::Sender::new(false))
                .collect(),
            used: (0..n).map(|_| AtomicBool::new(false)).collect(),
            had_taint: (0..n).map(|_| Mutex::new(BTreeSet::new())).collect(),
        }
    }

    /// The controller sent `route`: releases the holds it is the awaited request of.
    pub fn request(&self, route: &Route) {
        let Some(object) = &route.object else {
            return;
        };
        for (hold, released) in self.holds.iter().zip(&self.released) {
            let until = &hold.until;
            if until.verb == route.verb
                && object.resource == until.resource.as_str()
                && object.subresource.is_empty()
                && object.name == until.name
                && until
                    .namespace
                    .as_deref()
                    .is_none_or(|ns| ns == object.namespace)
            {
                released.send_replace(true);
            }
        }
    }

    /// The hold a watch event falls under, if any (each hold takes one event).
    pub fn holds(&self, event: &Value) -> Option<usize> {
        let s = |p: &str| event.pointer(p).and_then(Value::as_str);
        let kind = s("/type")?;
        let name = s("/object/metadata/name")?;
        let resource = match s("/object/kind")? {
            "Pod" => Resource::Pods,
            "Node" => Resource::Nodes,
            _ => return None,
        };
        for (i, hold) in self.holds.iter().enumerate() {
            let w = &hold.watch;
            if w.resource != resource
                || w.name != name
                || w.namespace
                    .as_deref()
                    .is_some_and(|ns| Some(ns) != s("/object/metadata/namespace"))
                || w.kind.as_deref().is_some_and(|k| k != kind)
                || self.used[i].load(Ordering::SeqCst)
            {
                continue;
            }
            if let Some(key) = &w.removes_taint {
                let has = event
                    .pointer("/object/spec/taints")
                    .and_then(Value::as_array)
                    .is_some_and(|taints| {
                        taints
                            .iter()
                            .any(|t| t["key"].as_str() == Some(key) && t["effect"] == "NoExecute")
                    });
                let mut had = self.had_taint[i].lock().unwrap_or_else(|e| e.into_inner());
                if has {
                    had.insert(name.to_string());
                    continue;
                }
                if !had.contains(name) {
                    continue;
                }
            }
            if !self.used[i].swap(true, Ordering::SeqCst) {
                return Some(i);
            }
        }
        None
    }

    /// Holds until hold `i`'s request has come, or its bound has passed; logs which.
    pub async fn wait(&self, i: usize, watch: u64, log: &Log) {
        let hold = &self.holds[i];
        let begun = Instant::now();
        let mut released = self.released[i].subscribe();
        let bound = Duration::from_millis(hold.at_most_ms);
        let came = tokio::time::timeout(bound, released.wait_for(|r| *r))
            .await
            .is_ok_and(|r| r.is_ok());
        let until = &hold.until;
        let request = format!(
            "{} {} {}{}",
            until.verb,
            until.resource.as_str(),
            until
                .namespace
                .as_deref()
                .map_or(String::new(), |ns| format!("{ns}/")),
            until.name
        );
        log.steer(i, watch, begun.elapsed(), came, &request);
    }
}
