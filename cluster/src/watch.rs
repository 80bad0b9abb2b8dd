//! Watching pods, nodes and Events with kube-runtime's watcher, written as kubectl writes a
//! watch (`kubectl get KIND --watch --output-watch-events -o json`: one
//! `{"type":"ADDED|MODIFIED|DELETED","object":{…}}` per line), so that `taintcheck import` reads
//! a recording of ours with the one reader it has for kubectl's (IMPORT-1).
//!
//! The watcher hides the watch's own event types and relists when a watch breaks; the types are
//! rebuilt from what was seen: the first sighting of an object is `ADDED`, a new
//! resourceVersion `MODIFIED`, a deletion `DELETED`, and an object a relist no longer lists is
//! `DELETED` as last seen. A relist's objects already seen at their resourceVersion make no line.

use crate::Error;
use futures::StreamExt;
use k8s_openapi::api::core::v1 as k8s;
use kube::runtime::watcher::{self, Event};
use kube::{Api, Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;
use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Where one watch's lines go.
pub type Sink = Arc<Mutex<Box<dyn Write + Send>>>;

/// A sink writing to `w`.
pub fn sink(w: impl Write + Send + 'static) -> Sink {
    Arc::new(Mutex::new(Box::new(w)))
}

/// What to watch.
#[derive(Clone, Debug, Default)]
pub struct Scope {
    /// Only these namespaces (pods and Events); empty: every namespace.
    pub namespaces: Vec<String>,
    /// Only nodes with this label selector (`taintcheck.dev/run=RUN`); `None`: every node.
    pub node_labels: Option<String>,
}

/// The running watches. Dropping it stops them.
pub struct Recorder {
    tasks: Vec<JoinHandle<()>>,
    failed: mpsc::UnboundedReceiver<String>,
}

/// The three sinks of a recording: pods, nodes, Events (the same sink may be given thrice).
pub struct Sinks {
    /// `kubectl get pods --watch` lines.
    pub pods: Sink,
    /// `kubectl get nodes --watch` lines.
    pub nodes: Sink,
    /// `kubectl get events --watch` lines.
    pub events: Sink,
}

impl Recorder {
    /// Starts watching and returns once every watch has listed what exists (so that what is
    /// created afterwards is seen as `ADDED`).
    pub async fn start(client: &Client, scope: &Scope, sinks: Sinks) -> Result<Recorder, Error> {
        let (synced_tx, mut synced) = mpsc::unbounded_channel();
        let (failed_tx, failed) = mpsc::unbounded_channel();
        let mut tasks = Vec::new();
        let namespaces: Vec<Option<&str>> = if scope.namespaces.is_empty() {
            vec![None]
        } else {
            scope.namespaces.iter().map(|n| Some(n.as_str())).collect()
        };
        let mut expected = 1;
        let mut node_config = watcher::Config::default();
        if let Some(labels) = &scope.node_labels {
            node_config = node_config.labels(labels);
        }
        tasks.push(spawn_watch(
            Api::<k8s::Node>::all(client.clone()),
            node_config,
            sinks.nodes,
            synced_tx.clone(),
            failed_tx.clone(),
        ));
        for ns in namespaces {
            expected += 2;
            tasks.push(spawn_watch(
                namespaced::<k8s::Pod>(client, ns),
                watcher::Config::default(),
                sinks.pods.clone(),
                synced_tx.clone(),
                failed_tx.clone(),
            ));
            tasks.push(spawn_watch(
                namespaced::<k8s::Event>(client, ns),
                watcher::Config::default(),
                sinks.events.clone(),
                synced_tx.clone(),
                failed_tx.clone(),
            ));
        }
        let mut recorder = Recorder { tasks, failed };
        for _ in 0..expected {
            tokio::select! {
                _ = synced.recv() => {}
                Some(e) = recorder.failed.recv() => return Err(Error::new(e)),
            }
        }
        Ok(recorder)
    }

    /// The first watch error since the last call, if any (the watcher retries by itself; a
    /// recording with an error may have lost changes, so callers report it).
    pub fn error(&mut self) -> Option<String> {
        self.failed.try_recv().ok()
    }

    /// Stops the watches.
    pub fn stop(&mut self) {
        for t in self.tasks.drain(..) {
            t.abort();
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.stop();
    }
}

fn namespaced<K>(client: &Client, ns: Option<&str>) -> Api<K>
where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope>,
    <K as Resource>::DynamicType: Default,
{
    match ns {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    }
}

/// One watch as a task: its lines to `out`, a message on `synced` after each complete list.
fn spawn_watch<K>(
    api: Api<K>,
    config: watcher::Config,
    out: Sink,
    synced: mpsc::UnboundedSender<()>,
    failed: mpsc::UnboundedSender<String>,
) -> JoinHandle<()>
where
    K: Resource + Clone + DeserializeOwned + Serialize + Debug + Send + Sync + 'static,
    <K as Resource>::DynamicType: Default,
{
    tokio::spawn(async move {
        let mut types = Types::default();
        let mut stream = watcher(api, config).boxed();
        while let Some(event) = stream.next().await {
            let lines = match event {
                Ok(Event::Init) => {
                    types.relisting = Some(BTreeSet::new());
                    vec![]
                }
                Ok(Event::InitApply(o)) => {
                    if let Some(seen) = &mut types.relisting {
                        seen.insert(identity(&o));
                    }
                    types.applied(o).into_iter().collect()
                }
                Ok(Event::InitDone) => {
                    let gone = types.relisted();
                    let _ = synced.send(());
                    gone
                }
                Ok(Event::Apply(o)) => types.applied(o).into_iter().collect(),
                Ok(Event::Delete(o)) => vec![types.deleted(o)],
                Err(e) => {
                    let _ =
                        failed.send(format!("watch of {}: {e}", K::plural(&Default::default())));
                    vec![]
                }
            };
            if lines.is_empty() {
                continue;
            }
            let mut w = out.lock().unwrap_or_else(PoisonError::into_inner);
            for line in lines {
                if writeln!(w, "{line}").and_then(|()| w.flush()).is_err() {
                    let _ = failed.send("cannot write the recording".to_string());
                    return;
                }
            }
        }
    })
}

fn watcher<K>(
    api: Api<K>,
    config: watcher::Config,
) -> impl futures::Stream<Item = Result<Event<K>, watcher::Error>> + Send
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + 'static,
    <K as Resource>::DynamicType: Default,
{
    watcher::watcher(api, config)
}

/// Namespace and name.
fn identity<K: Resource>(o: &K) -> (String, String) {
    (o.namespace().unwrap_or_default(), o.name_any())
}

/// The watch event types, rebuilt from the objects seen (see the module's doc).
struct Types<K> {
    last: BTreeMap<(String, String), K>,
    /// During a relist: what it listed so far.
    relisting: Option<BTreeSet<(String, String)>>,
}

impl<K> Default for Types<K> {
    fn default() -> Self {
        Types {
            last: BTreeMap::new(),
            relisting: None,
        }
    }
}

impl<K: Resource + Serialize + Clone> Types<K> {
    fn applied(&mut self, o: K) -> Option<String> {
        let id = identity(&o);
        let kind = match self.last.get(&id) {
            Some(old) if old.resource_version() == o.resource_version() => return None,
            Some(old) if old.uid() == o.uid() => "MODIFIED",
            _ => "ADDED",
        };
        let line = line(kind, &o);
        self.last.insert(id, o);
        Some(line)
    }

    fn deleted(&mut self, o: K) -> String {
        self.last.remove(&identity(&o));
        line("DELETED", &o)
    }

    /// After a relist: what it no longer lists is gone.
    fn relisted(&mut self) -> Vec<String> {
        let Some(seen) = self.relisting.take() else {
            return vec![];
        };
        let gone: Vec<(String, String)> = self
            .last
            .keys()
            .filter(|k| !seen.contains(*k))
            .cloned()
            .collect();
        gone.into_iter()
            .filter_map(|k| self.last.remove(&k))
            .map(|o| line("DELETED", &o))
            .collect()
    }
}

fn line<K: Serialize>(kind: &str, o: &K) -> String {
    serde_json::json!({"type": kind, "object": o}).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn pod(name: &str, uid: &str, rv: &str) -> k8s::Pod {
        k8s::Pod {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("ns".into()),
                uid: Some(uid.into()),
                resource_version: Some(rv.into()),
                ..ObjectMeta::default()
            },
            ..k8s::Pod::default()
        }
    }

    fn kind(line: &str) -> String {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["object"]["kind"], "Pod", "{line}");
        assert_eq!(v["object"]["apiVersion"], "v1", "{line}");
        v["type"].as_str().unwrap().to_string()
    }

    #[test]
    fn watch_types_are_rebuilt_from_what_was_seen() {
        let mut t = Types::default();
        assert_eq!(kind(&t.applied(pod("a", "u1", "1")).unwrap()), "ADDED");
        assert_eq!(kind(&t.applied(pod("a", "u1", "2")).unwrap()), "MODIFIED");
        assert_eq!(t.applied(pod("a", "u1", "2")), None, "same resourceVersion");
        assert_eq!(kind(&t.applied(pod("a", "u2", "3")).unwrap()), "ADDED");
        assert_eq!(kind(&t.deleted(pod("a", "u2", "4"))), "DELETED");
        assert_eq!(kind(&t.applied(pod("b", "u3", "5")).unwrap()), "ADDED");
        assert_eq!(kind(&t.applied(pod("c", "u4", "6")).unwrap()), "ADDED");
        // A relist that lists c only: b went while the watch was down.
        t.relisting = Some(BTreeSet::from([("ns".to_string(), "c".to_string())]));
        let gone = t.relisted();
        assert_eq!(gone.len(), 1);
        assert_eq!(kind(&gone[0]), "DELETED");
        assert!(gone[0].contains("\"name\":\"b\""), "{}", gone[0]);
    }
}
