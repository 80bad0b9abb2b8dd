//! Judging at the step that commits it. The safety properties about an instant in the past (a
//! DELETE issued or applied, a decision made) and the non-vacuity witnesses are decided by the
//! step that commits them and kept as bits of [`History`](super::state::History), which
//! [`super::properties`] reads in every later state. Spec: EVICT-1, EVICT-2, UID-1, JUST-1,
//! CANCEL-1, CANCEL-2, CORE-PRE, SOME-1..SOME-5 (specs/spec.md, "Properties").

use super::action::Action;
use super::properties::vocabulary::Timing;
use super::properties::{eviction_timing, Flag, Witness};
use super::state::{earliest_eviction, ApiPod, SysState};
use taintcheck_core::api::{PodKey, Uid};
use taintcheck_core::{ApiRequest, Effect, EventKind, NodePhase, Note, Step, Verb, Worker};

/// Judges the effects of one step (`before` --`action`--> `s`): EVICT-1, EVICT-2, CANCEL-1,
/// CANCEL-2 and CORE-PRE against the caches as they are at that step, and the decisions UID-1
/// needs.
/// `comparison_operators`: the profile's switch.
pub(super) fn effects(
    s: &mut SysState,
    before: &SysState,
    action: &Action,
    effects: &[Effect],
    comparison_operators: bool,
) {
    for e in effects {
        match e {
            Effect::Event(ev) => match ev.kind {
                EventKind::CancellingDeletion => {
                    s.history.witnessed |= Witness::CancelledTimer.bit();
                    if let Err(i) = s.history.cancelled.binary_search(&ev.pod) {
                        s.history.cancelled.make_mut().insert(i, ev.pod.clone());
                    }
                }
                EventKind::MarkingForDeletion => s.history.uncancel(&ev.pod),
            },
            Effect::Decision(d) => match d.note {
                Note::ZeroTaints => s.history.violated |= Flag::CorePrecondition.bit(),
                Note::EvictNow | Note::Scheduled { .. } | Note::Rescheduled { .. } => {
                    s.history.uncancel(&d.pod);
                    if let Some(uid) = decided_uid(before, action, &d.pod) {
                        if let Err(i) = s.history.decided.binary_search(&uid) {
                            s.history.decided.make_mut().insert(i, uid);
                        }
                    }
                }
                _ => {}
            },
            Effect::Api(req) if req.verb.is_read() => {}
            Effect::Api(req) => {
                write_issued(s, req);
                if req.verb == Verb::Delete {
                    delete_issued(s, req, comparison_operators)
                }
            }
            _ => {}
        }
    }
}

/// CANCEL-2 at the moment a write (the `DisruptionTarget` PATCH or a DELETE) is issued: an
/// open "Cancelling deletion" claim on its pod makes it a write after the cancel.
fn write_issued(s: &mut SysState, req: &ApiRequest) {
    if s.history.cancelled.binary_search(&req.pod).is_ok() {
        s.history.violated |= Flag::WriteAfterCancel.bit();
    }
}

/// EVICT-1, EVICT-2 and CANCEL-1 at the moment a DELETE is issued (CANCEL-1 is checked
/// again when the API server applies it).
fn delete_issued(s: &mut SysState, req: &ApiRequest, comparison_operators: bool) {
    if s.api
        .pods
        .get(&req.pod)
        .is_some_and(|p| p.deletion.is_some())
    {
        return; // the pod under the name is Terminating: this DELETE evicts nothing (API-2).
    }
    if s.history.cancelled.binary_search(&req.pod).is_ok() {
        s.history.violated |= Flag::HonestCancel.bit();
    }
    let Some(cp) = s.pods.cache.get(&req.pod) else {
        return; // the controller's cache no longer has it: a harmless NotFound, or UID-1.
    };
    if req.uid.as_ref().is_some_and(|u| *u != cp.pod.uid) {
        return; // the precondition names an object the cache no longer holds.
    }
    let Some(node_name) = cp.pod.node_name.as_ref() else {
        s.history.violated |= Flag::EvictAfterRemoval.bit();
        return;
    };
    let Some(node) = s.nodes.cache.get(node_name) else {
        return; // node gone from the cache: allowed (S4; PodGC's business).
    };
    let since = cp.bound_since.unwrap_or(s.now);
    match earliest_eviction(
        &node.node,
        &node.taint_since,
        &cp.pod,
        since,
        comparison_operators,
    ) {
        None => s.history.violated |= Flag::EvictAfterRemoval.bit(),
        Some(at) if s.now < at => s.history.violated |= Flag::Premature.bit(),
        Some(_) => {}
    }
}

/// CANCEL-1, UID-1 and JUST-1 when the API server applies a DELETE of `p` (removed from the
/// API in `s`, or left Terminating: API-2), then the witnesses the eviction is.
pub(super) fn delete_applied(
    s: &mut SysState,
    p: &ApiPod,
    req: &ApiRequest,
    comparison_operators: bool,
) {
    if s.history.cancelled.binary_search(&req.pod).is_ok() {
        s.history.violated |= Flag::HonestCancel.bit();
    }
    if s.history.decided.binary_search(&p.pod.uid).is_err() {
        s.history.violated |= Flag::UidSafety.bit();
    }
    if !p.exposed_in_api {
        s.history.violated |= Flag::JustifiedSinceBind.bit();
    }
    witness_eviction(s, p, req, comparison_operators);
}

/// SOME-1/2/4/5: classifies a successful eviction for the non-vacuity properties.
fn witness_eviction(s: &mut SysState, p: &ApiPod, req: &ApiRequest, comparison_operators: bool) {
    if let Some(i) = s.history.failed.iter().position(|r| *r == req.id.0) {
        s.history.failed.remove(i);
        s.history.witnessed |= Witness::RetriedDeletion.bit();
    }
    if s.env.restarted_at.is_some() {
        s.history.witnessed |= Witness::EvictionAfterRestart.bit();
    }
    s.history.witnessed |= match eviction_timing(s, p, comparison_operators) {
        Some(Timing::AtOnce) => Witness::ImmediateEviction.bit(),
        Some(Timing::AfterToleration) => Witness::SecondsEviction.bit(),
        None => 0,
    };
}

/// The pod object a decision about `key` was made on: the object the worker listed (node
/// handling), else the cached one (pod handling).
fn decided_uid(before: &SysState, action: &Action, key: &PodKey) -> Option<Uid> {
    if let Action::Controller(Step::WorkerContinue { worker, pick, .. }) = action {
        if let Some(Worker::Node {
            phase: NodePhase::Pods { pods, next, .. },
            ..
        }) = before.ctrl.shards().get(*worker).map(|s| &s.worker)
        {
            if let Some(p) = pods
                .get(next + usize::from(*pick))
                .filter(|p| p.key == *key)
            {
                return Some(p.uid.clone());
            }
        }
    }
    before.pods.cache.get(key).map(|p| p.pod.uid.clone())
}
