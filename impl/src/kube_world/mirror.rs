//! One kind's watch as an informer's source: kube-runtime's watcher (list, watch, relist on a
//! broken or expired watch, with its default backoff) mirrored into the objects last seen, and
//! every change handed to the subscribed [`Watcher`]s as the in-memory API server hands them:
//! `Added`, `Modified`, `Deleted`. A relist's difference from the mirror is delivered as the
//! changes it implies (INF-1): what changed, then what is gone. Spec: RT-WORLD-3.

use crate::api::{Watch, Watcher};
use futures::StreamExt;
use kube::runtime::watcher::{self, watcher, Event};
use kube::{Api, Resource};
use serde::de::DeserializeOwned;
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use taintcheck_core::relist::{self, Relisted};

/// The objects of one kind as last seen, and who is told of changes.
pub struct Mirror<Key, T> {
    state: Mutex<State<Key, T>>,
    synced: Condvar,
}

struct State<Key, T> {
    known: BTreeMap<Key, T>,
    watchers: BTreeMap<u64, Watcher<T>>,
    /// The objects of a relist in progress.
    relisting: Option<BTreeMap<Key, T>>,
    /// The first list is complete.
    synced: bool,
    /// The watch's last error, for the operator's log.
    error: Option<String>,
}

impl<Key: Ord + Clone, T: Clone + PartialEq> Mirror<Key, T> {
    pub fn new() -> Arc<Self> {
        Arc::new(Mirror {
            state: Mutex::new(State {
                known: BTreeMap::new(),
                watchers: BTreeMap::new(),
                relisting: None,
                synced: false,
                error: None,
            }),
            synced: Condvar::new(),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State<Key, T>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Subscribes `watcher` and returns what exists now, atomically: every later change goes
    /// to it.
    pub fn subscribe(&self, id: u64, watcher: Watcher<T>) -> Vec<T> {
        let mut s = self.lock();
        s.watchers.insert(id, watcher);
        s.known.values().cloned().collect()
    }

    pub fn unsubscribe(&self, id: u64) {
        self.lock().watchers.remove(&id);
    }

    /// The watch's last error, while it has not listed or watched successfully since.
    pub fn error(&self) -> Option<String> {
        self.lock().error.clone()
    }

    /// What exists now.
    pub fn objects(&self) -> Vec<T> {
        self.lock().known.values().cloned().collect()
    }

    /// Waits until the first list is complete, the watch fails before it, or `timeout` passed;
    /// then the watch's error, if the list did not complete (a first list that fails is a
    /// configuration to fix, not a moment to wait out).
    pub fn wait_synced(&self, timeout: std::time::Duration) -> Result<(), String> {
        let s = self.lock();
        let (s, _) = self
            .synced
            .wait_timeout_while(s, timeout, |s| !s.synced && s.error.is_none())
            .unwrap_or_else(PoisonError::into_inner);
        if s.synced {
            Ok(())
        } else {
            Err(s
                .error
                .clone()
                .unwrap_or_else(|| format!("no list within {} s", timeout.as_secs())))
        }
    }

    /// Takes one event of the watch.
    fn take(&self, event: Event<T>, key: impl Fn(&T) -> Key) {
        let mut s = self.lock();
        if !matches!(event, Event::Init | Event::InitApply(_)) {
            s.error = None;
        }
        let changes: Vec<Watch<T>> = match event {
            Event::Init => {
                s.relisting = Some(BTreeMap::new());
                return;
            }
            Event::InitApply(o) => {
                let k = key(&o);
                s.relisting.get_or_insert_with(BTreeMap::new).insert(k, o);
                return;
            }
            Event::InitDone => {
                let fresh = s.relisting.take().unwrap_or_default();
                let changes = if s.synced {
                    difference(&s.known, &fresh)
                } else {
                    Vec::new()
                };
                s.known = fresh;
                s.synced = true;
                s.error = None;
                self.synced.notify_all();
                changes
            }
            Event::Apply(o) => {
                let change = match s.known.insert(key(&o), o.clone()) {
                    Some(_) => Watch::Modified(o),
                    None => Watch::Added(o),
                };
                vec![change]
            }
            Event::Delete(o) => {
                let last = s.known.remove(&key(&o)).unwrap_or(o);
                vec![Watch::Deleted(last)]
            }
        };
        for change in changes {
            for w in s.watchers.values() {
                w(change.clone());
            }
        }
    }

    fn failed(&self, error: String) {
        self.lock().error = Some(error);
        self.synced.notify_all();
    }
}

/// The changes that turn `cached` into `fresh`: changes in key order, then deletions.
fn difference<K: Ord, T: Clone + PartialEq>(
    cached: &BTreeMap<K, T>,
    fresh: &BTreeMap<K, T>,
) -> Vec<Watch<T>> {
    relist::difference(cached, fresh, |c, f| c == f)
        .into_iter()
        .map(|e| match e {
            Relisted::Changed(k, v) if cached.contains_key(k) => Watch::Modified(v.clone()),
            Relisted::Changed(_, v) => Watch::Added(v.clone()),
            Relisted::Gone(_, v) => Watch::Deleted(v.clone()),
        })
        .collect()
}

/// Runs the watch of `api` into `mirror` until the task is aborted; objects are converted by
/// `convert` and keyed by `key`. Errors are kept for [`Mirror::wait_synced`] and logged; the
/// watcher retries with its default backoff.
pub async fn run<K, Key, T>(
    api: Api<K>,
    mirror: Arc<Mirror<Key, T>>,
    convert: fn(&K) -> T,
    key: fn(&T) -> Key,
) where
    K: Resource + Clone + DeserializeOwned + Debug + Send + 'static,
    <K as Resource>::DynamicType: Default,
    Key: Ord + Clone,
    T: Clone + PartialEq,
{
    use kube::runtime::WatchStreamExt;
    let kind = K::plural(&Default::default()).to_string();
    let mut stream = watcher(api, watcher::Config::default())
        .default_backoff()
        .boxed();
    while let Some(event) = stream.next().await {
        match event {
            Ok(e) => mirror.take(converted(e, convert), key),
            Err(e) => {
                let error = format!("watch of {kind}: {e}");
                eprintln!("taintcheck controller: {error}; retrying");
                mirror.failed(error);
            }
        }
    }
}

fn converted<K, T>(event: Event<K>, convert: fn(&K) -> T) -> Event<T> {
    match event {
        Event::Apply(o) => Event::Apply(convert(&o)),
        Event::Delete(o) => Event::Delete(convert(&o)),
        Event::Init => Event::Init,
        Event::InitApply(o) => Event::InitApply(convert(&o)),
        Event::InitDone => Event::InitDone,
    }
}
