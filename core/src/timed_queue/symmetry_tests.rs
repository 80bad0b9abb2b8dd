//! The queue under the model's symmetry reduction (spec MODEL-SYM): renaming pods and nodes
//! reaches every name the queue holds, and renumbering works depends on what they are, not on
//! their ids.

use super::*;
use crate::api::{NodeName, Pod, ResourceVersion};
use crate::effect::{RequestId, Verb};
use crate::Renaming;

/// Swaps the names `a` and `b` of pods, UIDs and nodes.
struct Swap;

impl Swap {
    fn name(s: &str) -> &str {
        match s {
            "a" => "b",
            "b" => "a",
            other => other,
        }
    }
}

impl Renaming for Swap {
    fn key(&self, key: &PodKey) -> PodKey {
        PodKey::new(&key.namespace, Swap::name(&key.name))
    }
    fn uid(&self, uid: &Uid) -> Uid {
        Uid(Swap::name(&uid.0).into())
    }
    fn node(&self, node: &NodeName) -> NodeName {
        Swap::name(node).into()
    }
}

fn key(name: &str) -> WorkKey {
    WorkKey {
        pod: PodKey::new("ns", name),
        uid: Some(Uid(name.into())),
    }
}

fn pod(name: &str) -> Pod {
    Pod {
        key: PodKey::new("ns", name),
        uid: Uid(name.into()),
        node_name: Some(name.into()),
        tolerations: vec![],
    }
}

/// Work `id` for pod `name` reading the node it fetched.
fn reading_node(id: WorkId, name: &str) -> WorkPhase {
    WorkPhase::Requesting {
        attempt: 1,
        request: ApiRequest {
            id: RequestId(id.0),
            verb: Verb::GetNode(name.into()),
            pod: PodKey::new("ns", name),
            uid: Some(Uid(name.into())),
            version: None,
        },
        fetched: Some(Arc::new(FetchedPod {
            pod: pod(name),
            version: ResourceVersion(1),
            disruption_target: false,
        })),
    }
}

#[test]
fn rename_reaches_entries_works_and_requests() {
    let mut q = TimedQueue::new();
    let a = q
        .add_work(&key("a"), Time(0), Time(50), Immediate::Nil, &mut vec![])
        .unwrap();
    q.work_mut(a).unwrap().phase = reading_node(a, "a");
    q.rename(&Swap);
    assert_eq!(q.get_worker(&key("b")), Some((Time(0), Time(50), a)));
    assert_eq!(q.entry(&key("a")), None);
    let work = q.work(a).unwrap();
    assert_eq!(work.key, key("b"));
    assert_eq!(work.phase, reading_node(a, "b"));
}

/// Two queues that differ only in which ids their works got are equal once renumbered.
#[test]
fn renumbering_forgets_which_ids_works_got() {
    // Entries' works first (in key order), then the others: "a" was orphaned by `forget`.
    let build = |order: [&str; 3]| {
        let mut q = TimedQueue::new();
        for name in order {
            let id = q
                .add_work(&key(name), Time(0), Time(50), Immediate::Nil, &mut vec![])
                .unwrap();
            if name == "b" {
                q.work_mut(id).unwrap().phase = reading_node(id, "b");
            }
        }
        q.forget(&key("a"));
        let map = q.canonical_ids();
        q.renumber(&map);
        q
    };
    let q = build(["a", "b", "c"]);
    assert_eq!(q, build(["c", "b", "a"]));
    assert_eq!(q, build(["b", "c", "a"]));
    assert_eq!(q.entry(&key("b")).and_then(Entry::work), Some(WorkId(0)));
    assert_eq!(
        q.work(WorkId(0)).unwrap().phase,
        reading_node(WorkId(0), "b")
    );
    assert_eq!(q.get_worker(&key("c")).map(|w| w.2), Some(WorkId(1)));
    assert_eq!(q.work(WorkId(2)).unwrap().key, key("a"));
}

/// The renumbering maps the ids in use onto themselves, even when an entry names a work that
/// is gone.
#[test]
fn canonical_ids_permute_the_works_in_use() {
    let mut q = TimedQueue::new();
    for name in ["a", "b", "c"] {
        q.add_work(&key(name), Time(0), Time(50), Immediate::Nil, &mut vec![]);
    }
    q.remove_work(WorkId(0));
    let map = q.canonical_ids();
    assert_eq!(map.keys().collect::<Vec<_>>(), [&WorkId(1), &WorkId(2)]);
    assert_eq!(map.values().collect::<Vec<_>>(), [&WorkId(1), &WorkId(2)]);
}

/// Orphaned works are ordered by key, then creation, then deadline.
#[test]
fn canonical_ids_order_orphans_by_what_they_are() {
    let mut q = TimedQueue::new();
    for (created, fire) in [(5, 60), (0, 70), (0, 60)] {
        q.add_work(
            &key("a"),
            Time(created),
            Time(fire),
            Immediate::Nil,
            &mut vec![],
        );
        q.forget(&key("a"));
    }
    let map = q.canonical_ids();
    assert_eq!(
        map.into_iter().collect::<Vec<_>>(),
        [
            (WorkId(0), WorkId(2)),
            (WorkId(1), WorkId(1)),
            (WorkId(2), WorkId(0))
        ]
    );
}

/// Work `id` for pod `name` holding `result`, the answer to its node GET, not yet taken in.
fn answered(id: WorkId, name: &str, result: ApiResult) -> WorkPhase {
    let WorkPhase::Requesting {
        attempt,
        request,
        fetched,
    } = reading_node(id, name)
    else {
        panic!("reading_node builds a Requesting phase");
    };
    WorkPhase::Answered {
        attempt,
        request,
        fetched,
        result,
    }
}

fn node(name: &str) -> ApiResult {
    ApiResult::Node(Arc::new(crate::api::Node {
        name: name.into(),
        taints: vec![],
    }))
}

fn fetched(name: &str) -> ApiResult {
    ApiResult::Pod(Arc::new(FetchedPod {
        pod: pod(name),
        version: ResourceVersion(1),
        disruption_target: false,
    }))
}

/// An answer a work holds between its steps (CORE-A13) is renamed with the rest: the fetched
/// pod and the fetched node, as well as the request and the pod read before.
#[test]
fn rename_reaches_the_answers_works_hold() {
    for (result, renamed) in [(node("a"), node("b")), (fetched("a"), fetched("b"))] {
        let mut q = TimedQueue::new();
        let a = q
            .add_work(&key("a"), Time(0), Time(50), Immediate::Nil, &mut vec![])
            .unwrap();
        q.work_mut(a).unwrap().phase = answered(a, "a", result);
        q.rename(&Swap);
        assert_eq!(q.work(a).unwrap().phase, answered(a, "b", renamed));
    }
}
