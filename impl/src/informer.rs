//! Informers: per-kind watch streams into one cache, delivered after a configurable lag, in
//! order per kind. The cache is what the controller reads (the core's `ClusterView`: listers and
//! the `spec.nodeName` index); deliveries update it and then call the controller's handler with
//! the old and new object, as client-go's shared informers do. A dropped watch loses the events
//! it has not delivered and those in between, and relists when it reconnects. Spec:
//! RT-INF-1..RT-INF-3, INF-1, ENV-13.

use crate::api::Watch;
use crate::sync::{lock, Arc, AtomicBool, Mutex, Ordering, RwLock};
use crate::timers::TimerService;
use crate::world::World;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use taintcheck_core::api::{Node, NodeName, Pod, PodKey};
use taintcheck_core::fx::FxBuild;
use taintcheck_core::relist::{self, Relisted};
use taintcheck_core::time::{Duration, Time};
use taintcheck_formats::scenario::ObjectKind;
use taintcheck_model::check::replay::Turn;

/// The informer caches: node and pod listers plus the pod index by `spec.nodeName`.
#[derive(Clone, Debug, Default)]
pub struct Cache {
    nodes: BTreeMap<NodeName, Node>,
    /// Hashed (see the API server's store); `pods()` and relists sort.
    pods: HashMap<PodKey, Pod, FxBuild>,
    by_node: BTreeMap<NodeName, BTreeSet<PodKey>>,
}

impl Cache {
    pub fn node(&self, name: &str) -> Option<&Node> {
        self.nodes.get(name)
    }

    pub fn pod(&self, key: &PodKey) -> Option<&Pod> {
        self.pods.get(key)
    }

    /// Every cached node, by name.
    pub fn nodes(&self) -> impl Iterator<Item = &Node> {
        self.nodes.values()
    }

    /// Every cached pod, by key.
    pub fn pods(&self) -> Vec<&Pod> {
        let mut list: Vec<&Pod> = self.pods.values().collect();
        list.sort_unstable_by(|a, b| a.key.cmp(&b.key));
        list
    }

    /// The `spec.nodeName` index, in key order (deterministic, unlike client-go's).
    pub fn pods_on_node(&self, name: &str) -> Vec<&Pod> {
        self.by_node
            .get(name)
            .into_iter()
            .flatten()
            .filter_map(|k| self.pods.get(k))
            .collect()
    }

    fn apply_node(&mut self, change: &Watch<Node>) -> Option<Node> {
        match change {
            Watch::Added(n) | Watch::Modified(n) => self.nodes.insert(n.name.clone(), n.clone()),
            Watch::Deleted(n) => self.nodes.remove(&n.name),
        }
    }

    fn apply_pod(&mut self, change: &Watch<Pod>) -> Option<Pod> {
        let key = &change.object().key;
        let old = self.pods.remove(key);
        if let Some(node) = old.as_ref().and_then(|p| p.node_name.as_ref()) {
            let emptied = self.by_node.get_mut(node).is_some_and(|keys| {
                keys.remove(key);
                keys.is_empty()
            });
            if emptied {
                self.by_node.remove(node);
            }
        }
        if let Watch::Added(p) | Watch::Modified(p) = change {
            if let Some(node) = &p.node_name {
                self.by_node
                    .entry(node.clone())
                    .or_default()
                    .insert(key.clone());
            }
            self.pods.insert(key.clone(), p.clone());
        }
        old
    }
}

/// One object change: the cached object before and after; `None` for absent (client-go's
/// add/update/delete in one).
pub type Change<T> = (Option<T>, Option<T>);

/// The event handler: called with each delivered batch of node and pod changes, in order, and
/// their instant, while the cache is still write-locked, so that no reader sees controller state
/// that lags the cache (the fixed design's arrival record, CORE-S9, whose re-check must never
/// pair a re-added taint with its old instant).
pub type Handler = Box<dyn Fn(&[Change<Node>], &[Change<Pod>], Time) + Send + Sync>;

/// Where an incarnation's informers start from: each kind's delivery lag.
#[derive(Clone, Copy, Debug)]
pub struct InformerLags {
    pub nodes: Duration,
    pub pods: Duration,
}

/// Per-kind delivery state.
struct Stream {
    lag: Duration,
    /// Deliveries are never scheduled before this, so a kind's events stay in order even when
    /// its lag shrinks.
    last_delivery: Time,
    /// The watch is broken until this instant.
    dropped_until: Option<Time>,
    /// Events received and not yet delivered, with their delivery instants (non-decreasing).
    buffer: VecDeque<(Time, Delivery)>,
}

struct Inner {
    cache: RwLock<Cache>,
    streams: Mutex<BTreeMap<ObjectKind, Stream>>,
    handler: Handler,
    timers: TimerService,
    world: std::sync::Arc<dyn World>,
    /// Set when the controller that owns these informers stops (restart): late deliveries
    /// are dropped.
    stopped: AtomicBool,
    watch_ids: Mutex<Vec<u64>>,
}

/// The node and pod informers of one controller incarnation. Cheap to clone.
#[derive(Clone)]
pub struct Informers {
    inner: Arc<Inner>,
}

impl Informers {
    /// Lists and watches both kinds; the initial list is delivered as additions after the lag,
    /// nodes first (RT-INF-1).
    pub fn start(
        world: std::sync::Arc<dyn World>,
        timers: &TimerService,
        lags: InformerLags,
        handler: Handler,
    ) -> Informers {
        let now = timers.now();
        let stream = |lag| Stream {
            lag,
            last_delivery: now,
            dropped_until: None,
            buffer: VecDeque::new(),
        };
        let informers = Informers {
            inner: Arc::new(Inner {
                cache: RwLock::new(Cache::default()),
                streams: Mutex::new(BTreeMap::from([
                    (ObjectKind::Nodes, stream(lags.nodes)),
                    (ObjectKind::Pods, stream(lags.pods)),
                ])),
                handler,
                timers: timers.clone(),
                world: world.clone(),
                stopped: AtomicBool::new(false),
                watch_ids: Mutex::new(Vec::new()),
            }),
        };
        let me = informers.clone();
        let (nodes, node_watch) = world.list_and_watch_nodes(Arc::new(move |w| {
            me.schedule(ObjectKind::Nodes, Delivery::Node(w))
        }));
        let me = informers.clone();
        let (pods, pod_watch) = world.list_and_watch_pods(Arc::new(move |w| {
            me.schedule(ObjectKind::Pods, Delivery::Pod(w))
        }));
        lock(&informers.inner.watch_ids).extend([node_watch, pod_watch]);
        for node in nodes {
            informers.schedule(ObjectKind::Nodes, Delivery::Node(Watch::Added(node)));
        }
        for pod in pods {
            informers.schedule(ObjectKind::Pods, Delivery::Pod(Watch::Added(pod)));
        }
        informers
    }

    /// Reads the cache.
    pub fn read<R>(&self, f: impl FnOnce(&Cache) -> R) -> R {
        f(&self
            .inner
            .cache
            .read()
            .expect("a runtime thread panicked while holding the cache"))
    }

    /// Stops watching; deliveries still pending are dropped.
    pub fn stop(&self) {
        self.inner.stopped.store(true, Ordering::SeqCst);
        for id in lock(&self.inner.watch_ids).drain(..) {
            self.inner.world.unwatch(id);
        }
    }

    /// Changes a kind's delivery lag from now on.
    pub fn set_lag(&self, kind: ObjectKind, lag: Duration) {
        if let Some(s) = lock(&self.inner.streams).get_mut(&kind) {
            s.lag = lag;
        }
    }

    /// Breaks the watch of `kind` for `duration` (RT-INF-3, ENV-13): the events it received
    /// and has not delivered are lost with it, and so are the events in between; then the
    /// informer relists and delivers the difference between its cache and the API (INF-1).
    pub fn drop_watch(&self, kind: ObjectKind, duration: Duration) {
        let until = self.inner.timers.now().plus(duration);
        if let Some(s) = lock(&self.inner.streams).get_mut(&kind) {
            s.dropped_until = Some(until);
            s.buffer.clear();
        }
        let me = self.clone();
        self.inner
            .timers
            .arm(until, Box::new(move || me.relist(kind)));
    }

    /// The watch of `kind` expires now (410 Gone) and the informer relists at once: the events
    /// it received and has not delivered are lost, and it queues the difference between its
    /// cache and the API (ENV-13, INF-1). What a replayed schedule's relist turn does (CHECK-7).
    pub fn expire_watch(&self, kind: ObjectKind) {
        if let Some(s) = lock(&self.inner.streams).get_mut(&kind) {
            s.buffer.clear();
        }
        self.relist(kind);
    }

    fn relist(&self, kind: ObjectKind) {
        if let Some(s) = lock(&self.inner.streams).get_mut(&kind) {
            s.dropped_until = None;
        }
        let diff: Vec<Delivery> = self.read(|cache| match kind {
            ObjectKind::Nodes => {
                let fresh: BTreeMap<NodeName, Node> = self
                    .inner
                    .world
                    .nodes()
                    .into_iter()
                    .map(|n| (n.name.clone(), n))
                    .collect();
                diff(&cache.nodes, &fresh)
                    .into_iter()
                    .map(Delivery::Node)
                    .collect()
            }
            ObjectKind::Pods => {
                let fresh: BTreeMap<PodKey, Pod> = self
                    .inner
                    .world
                    .pods()
                    .into_iter()
                    .map(|p| (p.key.clone(), p))
                    .collect();
                let cached: BTreeMap<PodKey, Pod> = cache
                    .pods()
                    .into_iter()
                    .map(|p| (p.key.clone(), p.clone()))
                    .collect();
                diff(&cached, &fresh)
                    .into_iter()
                    .map(Delivery::Pod)
                    .collect()
            }
        });
        for d in diff {
            self.schedule(kind, d);
        }
    }

    /// Called by the API server's watch (with its lock held): arms the delivery.
    fn schedule(&self, kind: ObjectKind, delivery: Delivery) {
        let now = self.inner.timers.now();
        let gated = self.inner.timers.gate().is_some();
        let at = {
            let mut streams = lock(&self.inner.streams);
            let s = streams.get_mut(&kind).expect("both kinds have a stream");
            if s.dropped_until.is_some_and(|until| now < until) {
                return;
            }
            let at = now.plus(s.lag).max(s.last_delivery);
            s.last_delivery = at;
            // An event buffered for the same instant has a delivery armed that will take this
            // one too (the initial list of the storm's 150,000 pods armed one each). Under a
            // schedule each event is a delivery turn of its own.
            let armed = !gated && s.buffer.back().is_some_and(|(last, _)| *last == at);
            s.buffer.push_back((at, delivery));
            if armed {
                return;
            }
            at
        };
        let me = self.clone();
        self.inner.timers.arm_labelled(
            at,
            Turn::Deliver(kind),
            Box::new(move || me.deliver_due(kind)),
        );
    }

    /// Delivers every buffered event of `kind` that is due, in order, as one batch: the cache
    /// takes them all, then the handler sees them all (RT-INF-2). An informer hands on all it
    /// has received before the controller's workers get to run, which is how a delete and a
    /// re-create of the same name reach the queue back to back (N5, N6); batching makes that
    /// deterministic.
    fn deliver_due(&self, kind: ObjectKind) {
        if self.inner.stopped.load(Ordering::SeqCst) {
            return;
        }
        let now = self.inner.timers.now();
        let due: Vec<Delivery> = {
            let mut streams = lock(&self.inner.streams);
            let s = streams.get_mut(&kind).expect("both kinds have a stream");
            // Under a schedule, each delivery turn hands on the oldest event alone (RT-SCHED-1).
            let n = match self.inner.timers.gate() {
                Some(_) => s.buffer.len().min(1),
                None => s.buffer.iter().take_while(|(at, _)| *at <= now).count(),
            };
            s.buffer.drain(..n).map(|(_, d)| d).collect()
        };
        if due.is_empty() {
            return;
        }
        let mut cache = self
            .inner
            .cache
            .write()
            .expect("a runtime thread panicked while holding the cache");
        let mut nodes = Vec::new();
        let mut pods = Vec::new();
        for delivery in due {
            match delivery {
                Delivery::Node(change) => {
                    let old = cache.apply_node(&change);
                    let new = match change {
                        Watch::Deleted(_) => None,
                        Watch::Added(n) | Watch::Modified(n) => Some(n),
                    };
                    nodes.push((old, new));
                }
                Delivery::Pod(change) => {
                    let old = cache.apply_pod(&change);
                    // A deletion the cache never saw still reaches the handler with the last
                    // state the watch reported (client-go's DeletedFinalStateUnknown, unwrapped).
                    let (old, new) = match change {
                        Watch::Deleted(p) => (old.or(Some(p)), None),
                        Watch::Added(p) | Watch::Modified(p) => (old, Some(p)),
                    };
                    pods.push((old, new));
                }
            }
        }
        (self.inner.handler)(&nodes, &pods, now);
    }
}

enum Delivery {
    Node(Watch<Node>),
    Pod(Watch<Pod>),
}

/// The watch events that turn `cached` into `fresh` (INF-1, [`relist::difference`]): changes
/// in key order, then deletions.
fn diff<K: Ord, T: Clone + PartialEq>(
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
