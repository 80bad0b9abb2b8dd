//! Informer delivery: each informer hands its oldest watch event to its cache first and then to
//! the controller's handler (client-go updates the indexer before it calls handlers); a
//! (re)started controller's informers re-list; the controller reads the caches through
//! [`CacheView`]; an informer whose watch expired relists the difference. Spec: MODEL-A2,
//! MODEL-S3, ENV-13, INF-1.

use super::action::Watched;
use super::display;
use super::outcome::Outcome;
use super::state::{ApiNode, ApiPod, CachedNode, CachedPod, Delta, Informer, SysState};
use taintcheck_core::api::{Node, NodeName, Pod, PodKey};
use taintcheck_core::relist::{self, Relisted};
use taintcheck_core::shared::Shared;
use taintcheck_core::small_map::SmallMap;
use taintcheck_core::ClusterView;

/// The controller's read-only view of the informer caches (upstream's listers and the
/// `spec.nodeName` index).
pub struct CacheView<'a> {
    nodes: &'a SmallMap<NodeName, Shared<CachedNode>>,
    pods: &'a SmallMap<PodKey, Shared<CachedPod>>,
}

impl<'a> CacheView<'a> {
    /// The view of the two informers' caches.
    pub fn of(
        nodes: &'a Informer<NodeName, CachedNode>,
        pods: &'a Informer<PodKey, CachedPod>,
    ) -> CacheView<'a> {
        CacheView {
            nodes: &nodes.cache,
            pods: &pods.cache,
        }
    }
}

impl ClusterView for CacheView<'_> {
    fn node(&self, name: &str) -> Option<&Node> {
        self.nodes.get(name).map(|n| &n.node)
    }

    fn pod(&self, key: &PodKey) -> Option<&Pod> {
        self.pods.get(key).map(|p| &p.pod)
    }

    fn pods_on_node(&self, name: &str) -> Vec<&Pod> {
        self.pods
            .values()
            .map(|p| &p.pod)
            .filter(|p| p.node_name.as_deref() == Some(name))
            .collect()
    }
}

/// The node informer delivers its oldest event: cache first, then the handler (client-go
/// updates the indexer before it calls handlers).
pub(super) fn deliver_node(s: &mut SysState, out: &mut Outcome) {
    let Some(delta) = s.nodes.pending.pop_front() else {
        return;
    };
    s.nodes.unsynced = s.nodes.unsynced.saturating_sub(1);
    let (name, new) = match delta {
        Delta::Upsert(n) => (n.node.name.clone(), Some(n)),
        Delta::Delete(name) => (name, None),
    };
    let cache = s.nodes.cache.make_mut();
    let old = cache.remove(&name);
    let new = new.map(|mut n| {
        // A taint present before keeps its first-observed instant (spec MODEL-S3).
        for i in 0..n.node.taints.len() {
            let kept = old.as_ref().and_then(|o| {
                o.node
                    .taints
                    .iter()
                    .position(|x| *x == n.node.taints[i])
                    .map(|j| o.taint_since[j])
            });
            let since = kept.unwrap_or(s.now);
            if n.taint_since[i] != since {
                n.make_mut().taint_since[i] = since;
            }
        }
        n
    });
    if let Some(n) = &new {
        cache.insert(name.clone(), n.clone());
    }
    out.notes.add(|| match &new {
        Some(n) => format!(
            "node informer delivers {name} taints {}",
            display::taints(&n.node.taints)
        ),
        None => format!("node informer delivers deletion of {name}"),
    });
    s.ctrl.make_mut().node_observed(
        old.as_ref().map(|n| &n.node),
        new.as_ref().map(|n| &n.node),
        s.now,
    );
}

/// The pod informer delivers its oldest event.
pub(super) fn deliver_pod(s: &mut SysState, out: &mut Outcome) {
    let Some(delta) = s.pods.pending.pop_front() else {
        return;
    };
    s.pods.unsynced = s.pods.unsynced.saturating_sub(1);
    let (key, new) = match delta {
        Delta::Upsert(p) => (p.pod.key.clone(), Some(p)),
        Delta::Delete(key) => (key, None),
    };
    let cache = s.pods.cache.make_mut();
    let old = cache.remove(&key);
    let new = new.map(|mut p| {
        let same = old
            .as_ref()
            .filter(|o| o.pod.uid == p.pod.uid && o.pod.node_name == p.pod.node_name);
        let since = match same {
            Some(o) => o.bound_since,
            None => p.pod.node_name.as_ref().map(|_| s.now),
        };
        if p.bound_since != since {
            p.make_mut().bound_since = since;
        }
        p
    });
    if let Some(p) = &new {
        cache.insert(key.clone(), p.clone());
    }
    out.notes.add(|| match &new {
        Some(p) => format!("pod informer delivers {}", display::pod(&p.pod)),
        None => format!("pod informer delivers deletion of {key}"),
    });
    s.ctrl.make_mut().pod_observed(
        old.as_ref().map(|p| &p.pod),
        new.as_ref().map(|p| &p.pod),
        s.now,
    );
}

/// A (re)started controller's informers: empty caches and an initial list of every API object
/// (upstream: the reflector's LIST, delivered as Add events, then `HasSynced`).
pub(super) fn relist(s: &mut SysState) {
    s.nodes = Informer::default();
    s.pods = Informer::default();
    for n in s.api.nodes.values() {
        s.nodes.pending.push_back(Delta::Upsert(cached_node(n)));
    }
    for p in s.api.pods.values() {
        s.pods.pending.push_back(Delta::Upsert(cached_pod(p)));
    }
    s.nodes.unsynced = s.nodes.pending.len() as u16;
    s.pods.unsynced = s.pods.pending.len() as u16;
}

/// An informer whose watch expired (410 Gone) relists (INF-1): the events it had not
/// delivered are lost, and it queues the difference between its cache and the API
/// ([`relist::difference`]). The informer stays synced.
pub(super) fn relist_difference(s: &mut SysState, watched: Watched) {
    match watched {
        Watched::Nodes => requeue(
            &mut s.nodes,
            &s.api.nodes,
            |c, a| c.node == a.node,
            cached_node,
        ),
        Watched::Pods => requeue(&mut s.pods, &s.api.pods, |c, a| c.pod == a.pod, cached_pod),
    }
}

/// [`relist_difference`] for one kind: `same` compares a cached object with the API's, `event`
/// makes the update carrying the API's. A deletion hands the handler the cached object, as the
/// tombstone does.
fn requeue<K: Ord + Clone, V, A>(
    informer: &mut Informer<K, V>,
    api: &SmallMap<K, Shared<A>>,
    same: impl Fn(&V, &A) -> bool,
    event: impl Fn(&A) -> Shared<V>,
) {
    let events: Vec<_> =
        relist::difference(informer.cache.iter(), api.iter(), |c, a| same(&**c, &**a))
            .into_iter()
            .map(|e| match e {
                Relisted::Changed(_, a) => Delta::Upsert(event(&**a)),
                Relisted::Gone(key, _) => Delta::Delete(key.clone()),
            })
            .collect();
    informer.pending = events.into();
}

/// The node a watch event carries (its taints' instants are the cache's to set on delivery).
pub(super) fn cached_node(n: &ApiNode) -> Shared<CachedNode> {
    Shared::new(CachedNode {
        node: n.node.clone(),
        taint_since: n.taint_since.clone(),
    })
}

/// The pod a watch event carries (its bind instant is the cache's to set on delivery).
pub(super) fn cached_pod(p: &ApiPod) -> Shared<CachedPod> {
    Shared::new(CachedPod {
        pod: p.pod.clone(),
        bound_since: p.bound_since,
    })
}
