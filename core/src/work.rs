//! The work function (upstream `deletePodHandler`, semantics §6) as steps: timer fire, start
//! (cancelled-flag check, "Marking for deletion"), then one step per request sent and one per
//! answer taken in, backoff between attempts, then the outcome that the completion step writes
//! to the map. Each step ends where upstream's goroutine may be preempted by another (after
//! the event, between an answer and the next request), so a handler's cancel can land there.
//! Spec: CORE-A11..CORE-A14.

use super::context::Context;
use super::effect::{
    ApiRequest, ApiResult, Decision, Effect, EventKind, EventRecord, FetchedPod, Note, RequestId,
    TimerId, Verb, WorkId,
};
use super::timed_queue::{Outcome, TimedQueue, Work, WorkPhase};
use super::ClusterView;
use crate::api::{ResourceVersion, Taint, Uid};
use crate::matching;
use crate::profile::{CancelFlag, DeleteSequence, Profile};
use crate::time::{Duration, Time};
use std::sync::Arc;

/// A timer fired: an armed work's goroutine is spawned, a throttled request's token arrives
/// and it is sent, or a backoff ends and the next attempt starts (or the work gives up).
/// Returns false when the timer is not armed or not yet due. Spec: CORE-A11, CORE-THROTTLE.
pub fn fire_timer(
    queue: &mut TimedQueue,
    timer: TimerId,
    cx: Context<'_, impl ClusterView>,
    out: &mut Vec<Effect>,
) -> bool {
    let (profile, now) = (cx.profile, cx.now);
    let id = WorkId(timer.0);
    let Some(work) = queue.work(id) else {
        return false;
    };
    match work.phase {
        WorkPhase::Armed if work.fire_at <= now => {
            if let Some(mut work) = queue.work_mut(id) {
                work.phase = WorkPhase::Spawned;
            }
            true
        }
        WorkPhase::Throttled {
            until, ref request, ..
        } if until <= now => {
            // The token is granted: the checks that precede a request are made again, right
            // before it is sent, since a cancel (or a change the caches show) may have come
            // while the work waited. The token reserved is spent either way. Spec: PROFILE-4.
            if work.cancelled && profile.cancel_flag == CancelFlag::BeforeEveryRequest {
                finish(queue, id, Outcome::Abandoned, Some(Note::Suppressed), out);
                return true;
            }
            if profile.recheck_before_delete
                && !request.verb.is_read()
                && !recheck(queue, id, cx, out)
            {
                return true;
            }
            if let Some(mut work) = queue.work_mut(id) {
                if let WorkPhase::Throttled {
                    attempt,
                    request,
                    fetched,
                    ..
                } = std::mem::replace(&mut work.phase, WorkPhase::Spawned)
                {
                    out.push(Effect::Api(request.clone()));
                    work.phase = WorkPhase::Requesting {
                        attempt,
                        request,
                        fetched,
                    };
                }
            }
            true
        }
        WorkPhase::Backoff { attempt, until } if until <= now => {
            if profile.durable_retry || attempt < profile.attempts {
                // Fixed design: every attempt re-checks the caches first (its first request may
                // be a read, which `send` does not guard).
                if profile.recheck_before_delete && !recheck(queue, id, cx, out) {
                    return true;
                }
                begin_attempt(queue, id, attempt + 1, cx, out);
            } else {
                finish(queue, id, Outcome::Failed, Some(Note::GaveUp), out);
            }
            true
        }
        _ => false,
    }
}

/// The spawned goroutine runs: under a cancelled flag it exits at once (`008b3652`), otherwise
/// it emits "Marking for deletion" and sends the first request. Spec: CORE-A12.
pub fn start_work(
    queue: &mut TimedQueue,
    id: WorkId,
    cx: Context<'_, impl ClusterView>,
    out: &mut Vec<Effect>,
) -> bool {
    let profile = cx.profile;
    let Some(work) = queue.work(id) else {
        return false;
    };
    if work.phase != WorkPhase::Spawned {
        return false;
    }
    let pod = work.key.pod.clone();
    if work.cancelled && profile.cancel_flag != CancelFlag::Absent {
        queue.drop_work(id);
        out.push(decision(pod, Note::Suppressed));
        return true;
    }
    if profile.recheck_before_delete && !recheck(queue, id, cx, out) {
        return true;
    }
    out.push(Effect::Event(EventRecord {
        pod,
        kind: EventKind::MarkingForDeletion,
    }));
    if let Some(mut work) = queue.work_mut(id) {
        work.phase = WorkPhase::Marked;
    }
    true
}

/// The API server answered `request`: the answer waits for the work's next step
/// ([`continue_work`]). Returns false if no work awaits it. Spec: CORE-A13.
pub fn responded(queue: &mut TimedQueue, request: RequestId, result: ApiResult) -> bool {
    let Some(mut work) = queue.work_mut(WorkId(request.0)) else {
        return false;
    };
    let WorkPhase::Requesting {
        attempt,
        request,
        fetched,
    } = &work.phase
    else {
        return false;
    };
    work.phase = WorkPhase::Answered {
        attempt: *attempt,
        request: request.clone(),
        fetched: fetched.clone(),
        result,
    };
    true
}

/// A running work's goroutine takes its next step: after "Marking for deletion", the first
/// attempt's first request; after an answer, the next request, a backoff, or returning.
/// Returns false if the work is not at such a point. Spec: CORE-A12, CORE-A13.
pub fn continue_work(
    queue: &mut TimedQueue,
    id: WorkId,
    cx: Context<'_, impl ClusterView>,
    out: &mut Vec<Effect>,
) -> bool {
    let (profile, now) = (cx.profile, cx.now);
    let Some(work) = queue.work(id) else {
        return false;
    };
    let (attempt, sent, fetched, result) = match &work.phase {
        WorkPhase::Marked => {
            begin_attempt(queue, id, 1, cx, out);
            return true;
        }
        WorkPhase::Answered {
            attempt,
            request,
            fetched,
            result,
        } => (*attempt, request.clone(), fetched.clone(), result.clone()),
        _ => return false,
    };
    let key = &work.key;
    let decided = key.uid.clone();
    let live_read = profile.delete_sequence == DeleteSequence::LiveReadPatchDelete;
    let next = match (result, &sent.verb) {
        (ApiResult::Pod(pod), Verb::Get) if live_read => {
            let ours = decided.as_ref().is_none_or(|uid| *uid == pod.pod.uid);
            match pod.pod.node_name.clone() {
                Some(node) if ours => Next::Send(Call::new(Verb::GetNode(node)), Some(pod)),
                _ => Next::Finish(Outcome::Abandoned, Some(Note::LiveRecheckAbandoned)),
            }
        }
        // Upstream `addConditionAndDeletePod`: the PATCH is skipped when the fetched status
        // already has the condition (`UpdatePodCondition` reports no change); the DELETE is by
        // name.
        // 1.26.0 to 1.28.3: the condition is applied on every attempt, by name (PROFILE-5).
        (ApiResult::Pod(_), Verb::Get)
            if profile.delete_sequence == DeleteSequence::GetApplyDelete =>
        {
            Next::Send(Call::new(Verb::PatchDisruptionTarget), None)
        }
        (ApiResult::Pod(pod), Verb::Get) if pod.disruption_target => {
            Next::Send(Call::new(Verb::Delete), None)
        }
        (ApiResult::Pod(pod), Verb::Get) => Next::Send(
            Call {
                uid: Some(pod.pod.uid.clone()),
                ..Call::new(Verb::PatchDisruptionTarget)
            },
            None,
        ),
        (ApiResult::Node(node), Verb::GetNode(_)) => match fetched {
            Some(pod) if matching::exposed(&node, &pod.pod, profile.comparison_operators) => {
                let verb = if pod.disruption_target {
                    Verb::Delete
                } else {
                    Verb::PatchDisruptionTarget
                };
                let call = Call {
                    uid: Some(pod.pod.uid.clone()),
                    version: profile.version_precondition.then_some(pod.version),
                    verb,
                };
                Next::Send(call, None)
            }
            // The API does not call for eviction at this instant, but the decision belongs to
            // the caches, which see every change: the attempt fails and the next one re-checks
            // them first (abandoning then the work if they agree, else reading again).
            _ => Next::Backoff(Some(Note::LiveRecheckDeferred)),
        },
        (ApiResult::Patched(version), Verb::PatchDisruptionTarget) => {
            let call = Call {
                uid: if profile.uid_precondition {
                    sent.uid.clone()
                } else {
                    None
                },
                version: (live_read && profile.version_precondition).then_some(version),
                verb: Verb::Delete,
            };
            Next::Send(call, None)
        }
        (ApiResult::Deleted, Verb::Delete) => Next::Finish(Outcome::Succeeded, None),
        // Fixed design: the decided pod (or its node) is gone, or the name is a successor's:
        // nothing to do. A failed resourceVersion precondition only says the pod changed since
        // it was read: the next attempt reads it again.
        (ApiResult::NotFound, _) if profile.uid_precondition => {
            Next::Finish(Outcome::Abandoned, None)
        }
        (ApiResult::PreconditionFailed, _)
            if profile.uid_precondition && sent.version.is_none() =>
        {
            Next::Finish(Outcome::Abandoned, None)
        }
        _ => Next::Backoff(None),
    };
    match next {
        Next::Send(call, fetched) => send(queue, id, attempt, call, fetched, cx, out),
        Next::Finish(outcome, note) => finish(queue, id, outcome, note, out),
        Next::Backoff(note) => {
            if let Some(note) = note {
                out.push(decision(sent.pod.clone(), note));
            }
            let until = now.plus(backoff(profile, attempt));
            if let Some(mut work) = queue.work_mut(id) {
                work.phase = WorkPhase::Backoff { attempt, until };
            }
            out.push(Effect::ArmTimer {
                id: id.timer(),
                fire_at: until,
            });
        }
    }
    true
}

/// What a work does after an answer.
enum Next {
    /// Send the next request of the attempt (with the pod it read, while it reads the node).
    Send(Call, Option<Arc<FetchedPod>>),
    Finish(Outcome, Option<Note>),
    /// The attempt failed: sleep, then retry or give up.
    Backoff(Option<Note>),
}

/// A request to send, before it gets its id.
struct Call {
    verb: Verb,
    uid: Option<Uid>,
    version: Option<ResourceVersion>,
}

impl Call {
    fn new(verb: Verb) -> Call {
        Call {
            verb,
            uid: None,
            version: None,
        }
    }
}

/// The sleep after failed attempt `attempt`: upstream's constant 10 ms, doubled per attempt up
/// to `max_backoff` under durable retry.
fn backoff(profile: &Profile, attempt: u32) -> Duration {
    if !profile.durable_retry {
        return profile.attempt_backoff;
    }
    let doublings = attempt.saturating_sub(1).min(32);
    let grown = profile.attempt_backoff.0.saturating_mul(1 << doublings);
    Duration(grown.min(profile.max_backoff.0))
}

/// Attempt `attempt` sends its first request.
fn begin_attempt(
    queue: &mut TimedQueue,
    id: WorkId,
    attempt: u32,
    cx: Context<'_, impl ClusterView>,
    out: &mut Vec<Effect>,
) {
    let profile = cx.profile;
    let Some(work) = queue.work(id) else {
        return;
    };
    let call = match profile.delete_sequence {
        DeleteSequence::DeleteOnly => Call {
            uid: precondition(profile, work),
            ..Call::new(Verb::Delete)
        },
        DeleteSequence::GetApplyDelete
        | DeleteSequence::GetPatchDelete
        | DeleteSequence::LiveReadPatchDelete => Call::new(Verb::Get),
    };
    send(queue, id, attempt, call, None, cx, out);
}

/// The UID a DELETE is conditioned on, if the profile conditions it.
fn precondition(profile: &Profile, work: &Work) -> Option<Uid> {
    profile
        .uid_precondition
        .then(|| work.key.uid.clone())
        .flatten()
}

/// Send attempt `attempt`'s next request for the work (with the pod it read, while it reads the
/// pod's node), after the fixed design's checks (cancelled flag, re-check), once the client's
/// rate limit has a token for it.
fn send(
    queue: &mut TimedQueue,
    id: WorkId,
    attempt: u32,
    call: Call,
    fetched: Option<Arc<FetchedPod>>,
    cx: Context<'_, impl ClusterView>,
    out: &mut Vec<Effect>,
) {
    let profile = cx.profile;
    let Some(work) = queue.work(id) else {
        return;
    };
    if work.cancelled && profile.cancel_flag == CancelFlag::BeforeEveryRequest {
        finish(queue, id, Outcome::Abandoned, Some(Note::Suppressed), out);
        return;
    }
    if profile.recheck_before_delete && !call.verb.is_read() && !recheck(queue, id, cx, out) {
        return;
    }
    // The client's token: reserved now (after the checks above, as upstream's come before the
    // client call), the request sent when it arrives. Spec: CORE-THROTTLE.
    let until = queue.bucket_mut().map(|bucket| bucket.reserve(cx.now));
    let Some(mut work) = queue.work_mut(id) else {
        return;
    };
    let request = ApiRequest {
        id: id.request(),
        verb: call.verb,
        pod: work.key.pod.clone(),
        uid: call.uid,
        version: call.version,
    };
    match until {
        Some(until) if until > cx.now => {
            work.phase = WorkPhase::Throttled {
                attempt,
                request,
                fetched,
                until,
            };
            out.push(Effect::ArmTimer {
                id: id.timer(),
                fire_at: until,
            });
        }
        _ => {
            out.push(Effect::Api(request.clone()));
            work.phase = WorkPhase::Requesting {
                attempt,
                request,
                fetched,
            };
        }
    }
}

/// The work function returned `outcome`; the completion step is next.
fn finish(
    queue: &mut TimedQueue,
    id: WorkId,
    outcome: Outcome,
    note: Option<Note>,
    out: &mut Vec<Effect>,
) {
    let Some(mut work) = queue.work_mut(id) else {
        return;
    };
    work.phase = WorkPhase::Finished { outcome };
    if let Some(note) = note {
        out.push(decision(work.key.pod.clone(), note));
    }
}

fn decision(pod: crate::api::PodKey, note: Note) -> Effect {
    Effect::Decision(Decision { pod, note })
}

/// What the caches say about a work now (the fixed design's re-check, spec CORE-A14).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recheck {
    /// Still to be evicted, now.
    Due,
    /// Still to be evicted, but later (tolerations or taints changed): at this instant.
    Later(Time),
    /// No longer to be evicted: the pod or its incarnation is gone, unbound, its node untainted
    /// or gone, or every used toleration is forever.
    Void,
}

/// Re-evaluate `work` against the informer caches: the earliest legal eviction `E` derived again
/// from the cached pod and node and the controller's arrival record. Spec: CORE-A14.
pub fn evaluate(work: &Work, cx: Context<'_, impl ClusterView>) -> Recheck {
    let Context {
        profile,
        view,
        arrivals,
        now,
    } = cx;
    let Some(pod) = view.pod(&work.key.pod) else {
        return Recheck::Void;
    };
    if work.key.uid.as_ref().is_some_and(|uid| *uid != pod.uid) {
        return Recheck::Void;
    }
    let Some(node) = pod.node_name.as_deref().and_then(|name| view.node(name)) else {
        return Recheck::Void;
    };
    let taints: Vec<Taint> = node.no_execute_taints().cloned().collect();
    if taints.is_empty() {
        return Recheck::Void;
    }
    match arrivals.earliest_eviction(pod, &taints, profile.comparison_operators, now) {
        None => Recheck::Void,
        Some(due) if due <= now => Recheck::Due,
        Some(due) => Recheck::Later(due),
    }
}

/// Apply [`evaluate`]: true if the work may go on; otherwise it is re-armed for its later
/// deadline or abandoned.
fn recheck(
    queue: &mut TimedQueue,
    id: WorkId,
    cx: Context<'_, impl ClusterView>,
    out: &mut Vec<Effect>,
) -> bool {
    let Some(work) = queue.work(id) else {
        return false;
    };
    match evaluate(work, cx) {
        Recheck::Due => true,
        Recheck::Later(fire_at) => {
            let pod = work.key.pod.clone();
            let key = work.key.clone();
            if let Some(mut work) = queue.work_mut(id) {
                work.fire_at = fire_at;
                work.phase = WorkPhase::Armed;
            }
            queue.retime_entry(&key, id, fire_at);
            out.push(Effect::ArmTimer {
                id: id.timer(),
                fire_at,
            });
            out.push(decision(pod, Note::Rescheduled { fire_at }));
            false
        }
        Recheck::Void => {
            finish(
                queue,
                id,
                Outcome::Abandoned,
                Some(Note::RecheckAbandoned),
                out,
            );
            false
        }
    }
}

#[cfg(test)]
mod tests;
