//! The requests a work sends and what it makes of each answer, per profile (upstream
//! `deletePodHandler` and `addConditionAndDeletePod`, semantics §6.1; the fixed design's live
//! read, PR #140198; spec CORE-A12, CORE-A13).

mod common;
use common::{node1, web0};
use std::sync::Arc;
use taintcheck_core::api::{Pod, PodKey, ResourceVersion, Uid};
use taintcheck_core::driver::Cluster;
use taintcheck_core::profile::Profile;
use taintcheck_core::time::Time;
use taintcheck_core::timed_queue::{Immediate, TimedQueue, WorkKey, WorkPhase};
use taintcheck_core::Context;
use taintcheck_core::{
    work, ApiRequest, ApiResult, Arrivals, Effect, FetchedPod, Note, Outcome, Verb, WorkId,
};

fn fetched(pod: Pod, version: u64, disruption_target: bool) -> ApiResult {
    ApiResult::Pod(Arc::new(FetchedPod {
        pod,
        version: ResourceVersion(version),
        disruption_target,
    }))
}

/// One work for pod `web-0` (UID `u1`, on the tainted `node1`), started at 0, under `profile`.
struct Harness {
    profile: Profile,
    queue: TimedQueue,
    view: Cluster,
    arrivals: Arrivals,
    id: WorkId,
    out: Vec<Effect>,
}

impl Harness {
    fn started(profile: Profile) -> Harness {
        let view = Cluster {
            nodes: [("node1".into(), node1(true))].into(),
            pods: [(PodKey::new("ns", "web-0"), web0("u1", Some("node1"), None))].into(),
        };
        let key = WorkKey::new(
            profile.work_key,
            &PodKey::new("ns", "web-0"),
            &Uid("u1".into()),
        );
        let mut queue = TimedQueue::new();
        let mut out = vec![];
        let id = queue
            .add_work(&key, Time(0), Time(0), Immediate::Nil, &mut out)
            .unwrap();
        let mut h = Harness {
            profile,
            queue,
            view,
            arrivals: Arrivals::default(),
            id,
            out,
        };
        let (q, p, v, a) = (&mut h.queue, &h.profile, &h.view, &h.arrivals);
        let cx = Context {
            profile: p,
            view: v,
            arrivals: a,
            now: Time(0),
        };
        assert!(work::start_work(q, id, cx, &mut h.out));
        assert!(work::continue_work(q, id, cx, &mut h.out));
        h
    }

    /// The request the work waits for.
    fn pending(&self) -> ApiRequest {
        match &self.queue.work(self.id).unwrap().phase {
            WorkPhase::Requesting { request, .. } => request.clone(),
            other => panic!("no request pending: {other:?}"),
        }
    }

    fn answer(&mut self, result: ApiResult) {
        let request = self.pending().id;
        let (q, p, v, a) = (&mut self.queue, &self.profile, &self.view, &self.arrivals);
        assert!(work::responded(q, request, result));
        let cx = Context {
            profile: p,
            view: v,
            arrivals: a,
            now: Time(1),
        };
        assert!(work::continue_work(q, self.id, cx, &mut self.out));
    }

    fn phase(&self) -> WorkPhase {
        self.queue.work(self.id).unwrap().phase.clone()
    }

    fn noted(&self, note: Note) -> bool {
        self.out
            .iter()
            .any(|e| matches!(e, Effect::Decision(d) if d.note == note))
    }
}

/// (verb, UID precondition, resourceVersion precondition) of a request.
fn call(r: &ApiRequest) -> (Verb, Option<&str>, Option<u64>) {
    (
        r.verb.clone(),
        r.uid.as_ref().map(|u| &*u.0),
        r.version.map(|v| v.0),
    )
}

/// Fixed design: GET the pod, GET its node, and only if the node still exposes that pod, PATCH
/// and DELETE conditioned on the UID read and on the resourceVersion last seen.
#[test]
fn fixed_reads_pod_and_node_then_patches_and_deletes_with_preconditions() {
    let mut h = Harness::started(Profile::fixed());
    assert_eq!(call(&h.pending()), (Verb::Get, None, None));
    h.answer(fetched(web0("u1", Some("node1"), None), 7, false));
    assert_eq!(
        call(&h.pending()),
        (Verb::GetNode("node1".into()), None, None)
    );
    h.answer(ApiResult::Node(Arc::new(node1(true))));
    assert_eq!(
        call(&h.pending()),
        (Verb::PatchDisruptionTarget, Some("u1"), Some(7))
    );
    h.answer(ApiResult::Patched(ResourceVersion(8)));
    assert_eq!(call(&h.pending()), (Verb::Delete, Some("u1"), Some(8)));
    h.answer(ApiResult::Deleted);
    assert_eq!(
        h.phase(),
        WorkPhase::Finished {
            outcome: Outcome::Succeeded
        }
    );
}

/// Fixed design: a pod that already has the condition is deleted without a second PATCH.
#[test]
fn fixed_skips_the_patch_when_the_condition_is_there() {
    let mut h = Harness::started(Profile::fixed());
    h.answer(fetched(web0("u1", Some("node1"), None), 7, true));
    h.answer(ApiResult::Node(Arc::new(node1(true))));
    assert_eq!(call(&h.pending()), (Verb::Delete, Some("u1"), Some(7)));
}

/// Fixed design: the name now held by a successor, or an unbound pod, ends the work.
#[test]
fn fixed_abandons_when_the_live_pod_is_not_the_decided_one() {
    for live in [web0("u2", Some("node1"), None), web0("u1", None, None)] {
        let mut h = Harness::started(Profile::fixed());
        h.answer(fetched(live.clone(), 7, false));
        assert_eq!(
            h.phase(),
            WorkPhase::Finished {
                outcome: Outcome::Abandoned
            },
            "{live:?}"
        );
        assert!(h.noted(Note::LiveRecheckAbandoned));
    }
}

/// Fixed design: a node that no longer exposes the pod fails the attempt; the next one
/// re-checks the caches.
#[test]
fn fixed_defers_when_the_live_node_does_not_expose_the_pod() {
    let mut h = Harness::started(Profile::fixed());
    h.answer(fetched(web0("u1", Some("node1"), None), 7, false));
    h.answer(ApiResult::Node(Arc::new(node1(false))));
    assert!(matches!(h.phase(), WorkPhase::Backoff { attempt: 1, .. }));
    assert!(h.noted(Note::LiveRecheckDeferred));
}

/// Fixed design: NotFound ends the work (the decided pod is gone); a failed resourceVersion
/// precondition only says the pod changed, so the next attempt reads it again; without a
/// resourceVersion precondition a failed one is the UID's, and ends the work.
#[test]
fn fixed_answers_to_failed_preconditions() {
    let mut h = Harness::started(Profile::fixed());
    h.answer(ApiResult::NotFound);
    assert_eq!(
        h.phase(),
        WorkPhase::Finished {
            outcome: Outcome::Abandoned
        }
    );

    let mut h = Harness::started(Profile::fixed());
    h.answer(fetched(web0("u1", Some("node1"), None), 7, false));
    h.answer(ApiResult::Node(Arc::new(node1(true))));
    h.answer(ApiResult::PreconditionFailed);
    assert!(matches!(h.phase(), WorkPhase::Backoff { attempt: 1, .. }));

    let uid_only = Profile {
        version_precondition: false,
        ..Profile::fixed()
    };
    let mut h = Harness::started(uid_only);
    h.answer(fetched(web0("u1", Some("node1"), None), 7, false));
    h.answer(ApiResult::Node(Arc::new(node1(true))));
    assert_eq!(
        call(&h.pending()),
        (Verb::PatchDisruptionTarget, Some("u1"), None)
    );
    h.answer(ApiResult::Patched(ResourceVersion(8)));
    assert_eq!(call(&h.pending()), (Verb::Delete, Some("u1"), None));
    h.answer(ApiResult::PreconditionFailed);
    assert_eq!(
        h.phase(),
        WorkPhase::Finished {
            outcome: Outcome::Abandoned
        }
    );
}

/// Newest upstream: GET, then PATCH conditioned on the fetched UID unless the condition is
/// there, then DELETE by name; NotFound and a failed precondition are failed attempts like any
/// other error.
#[test]
fn latest_gets_patches_and_deletes_by_name() {
    let mut h = Harness::started(Profile::latest());
    assert_eq!(call(&h.pending()), (Verb::Get, None, None));
    h.answer(fetched(web0("u2", Some("node1"), None), 7, false));
    assert_eq!(
        call(&h.pending()),
        (Verb::PatchDisruptionTarget, Some("u2"), None)
    );
    h.answer(ApiResult::Patched(ResourceVersion(8)));
    assert_eq!(call(&h.pending()), (Verb::Delete, None, None));
    h.answer(ApiResult::NotFound);
    assert!(matches!(h.phase(), WorkPhase::Backoff { attempt: 1, .. }));

    let mut h = Harness::started(Profile::latest());
    h.answer(fetched(web0("u1", Some("node1"), None), 7, true));
    assert_eq!(call(&h.pending()), (Verb::Delete, None, None));

    let mut h = Harness::started(Profile::latest());
    h.answer(fetched(web0("u1", Some("node1"), None), 7, false));
    h.answer(ApiResult::PreconditionFailed);
    assert!(matches!(h.phase(), WorkPhase::Backoff { attempt: 1, .. }));
}

/// 1.26.0 to 1.28.3 (`taint_manager.go` `addConditionAndDeletePod` with `ApplyStatus`): GET,
/// then the condition by server-side apply on every attempt, by name (the apply configuration
/// carries no UID), even when the fetched pod already has it; then DELETE by name.
#[test]
fn the_apply_era_applies_the_condition_by_name_on_every_attempt() {
    let apply_era = Profile::by_name("1.27.0-1.27.7").expect("a release profile");
    for has_condition in [false, true] {
        let mut h = Harness::started(apply_era);
        assert_eq!(call(&h.pending()), (Verb::Get, None, None));
        h.answer(fetched(web0("u2", Some("node1"), None), 7, has_condition));
        assert_eq!(
            call(&h.pending()),
            (Verb::PatchDisruptionTarget, None, None)
        );
        h.answer(ApiResult::Patched(ResourceVersion(8)));
        assert_eq!(call(&h.pending()), (Verb::Delete, None, None));
        h.answer(ApiResult::Deleted);
        assert!(matches!(h.phase(), WorkPhase::Finished { .. }));
    }
}
