//! What the core asks its caller to do (effects) and what the caller reports back (API results).
//! Effects are commands; the core never performs them. Spec: CORE-E1..CORE-E4.

use crate::api::{Node, NodeName, Pod, PodKey, ResourceVersion, Uid};
use crate::time::Time;
use std::fmt;
use std::sync::Arc;

/// One timed work (a `TimedWorker` and the goroutine it becomes), from `AddWork` to completion.
/// Ids are reused once free, so equal states get equal ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WorkId(pub u32);

/// A timer: the eviction timer of a work, or the backoff sleep between its attempts. A work has
/// at most one timer, so the id is the work's. Re-arming an id replaces the previous timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TimerId(pub u32);

/// An API request. A work has at most one outstanding request, so the id is the work's; a
/// response for a request that is no longer pending (e.g. after [`crate::Controller::restarted`])
/// must not be delivered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RequestId(pub u32);

impl WorkId {
    /// The work's timer.
    pub fn timer(self) -> TimerId {
        TimerId(self.0)
    }

    /// The work's API request.
    pub fn request(self) -> RequestId {
        RequestId(self.0)
    }
}

/// Upstream's event reason for both messages (semantics §6.3).
pub const EVENT_REASON: &str = "TaintManagerEviction";

/// The two events the controller records, type `Normal`, on the pod (no UID in the reference).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EventKind {
    /// "Marking for deletion Pod ns/name": every time a work function starts.
    MarkingForDeletion,
    /// "Cancelling deletion of Pod ns/name": whenever `CancelWork` returns true.
    CancellingDeletion,
}

/// A recorded event. Spec: CORE-E1.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EventRecord {
    /// The pod the event is about.
    pub pod: PodKey,
    /// Which of the two events.
    pub kind: EventKind,
}

impl EventRecord {
    /// The event's reason, [`EVENT_REASON`] for both.
    pub fn reason(&self) -> &'static str {
        EVENT_REASON
    }

    /// The message exactly as upstream words it.
    pub fn message(&self) -> String {
        match self.kind {
            EventKind::MarkingForDeletion => format!("Marking for deletion Pod {}", self.pod),
            EventKind::CancellingDeletion => format!("Cancelling deletion of Pod {}", self.pod),
        }
    }
}

/// The API call of a request.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verb {
    /// `GET pods/{name}`.
    Get,
    /// Fixed design: `GET nodes/{name}` of the node the fetched pod is bound to (the live
    /// re-check, PR #140198).
    GetNode(NodeName),
    /// `PATCH pods/{name}/status` adding `DisruptionTarget=True`, reason
    /// `DeletionByTaintManager`, message "Taint manager: deleting due to NoExecute taint".
    PatchDisruptionTarget,
    /// `DELETE pods/{name}` with default options.
    Delete,
}

impl Verb {
    /// A read: it changes nothing, so the fixed design's cache re-check does not guard it.
    pub fn is_read(&self) -> bool {
        matches!(self, Verb::Get | Verb::GetNode(_))
    }
}

/// A request the controller sends. Spec: CORE-E2.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ApiRequest {
    /// The work's id, which the answer names ([`crate::Controller::api_responded`]).
    pub id: RequestId,
    /// The API call.
    pub verb: Verb,
    /// The pod the work is for (for [`Verb::GetNode`], the pod whose node is read).
    pub pod: PodKey,
    /// The UID precondition: the request applies only if the pod holding the name has this UID
    /// (a PATCH built from a GET carries the fetched UID; the fixed profile's DELETE carries the
    /// decided pod's). `None`: by name, hitting whichever pod holds it.
    pub uid: Option<Uid>,
    /// Fixed design: the resourceVersion precondition (PATCH and DELETE apply only to the object
    /// as the work last read or wrote it).
    pub version: Option<ResourceVersion>,
}

/// A pod as a GET returns it: the object, its resourceVersion, and whether its status already
/// has the taint manager's `DisruptionTarget` condition.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FetchedPod {
    /// The object.
    pub pod: Pod,
    /// Its resourceVersion, which the fixed design's PATCH and DELETE carry as a precondition.
    pub version: ResourceVersion,
    /// Its status already has the `DisruptionTarget=True` condition.
    pub disruption_target: bool,
}

/// How the API server answered a request.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ApiResult {
    /// A GET of the pod succeeded.
    Pod(Arc<FetchedPod>),
    /// A GET of the node succeeded.
    Node(Arc<Node>),
    /// The PATCH was applied; the pod's new resourceVersion.
    Patched(ResourceVersion),
    /// The DELETE was applied.
    Deleted,
    /// No object under the name (HTTP 404).
    NotFound,
    /// A UID or resourceVersion precondition did not hold (HTTP 409).
    PreconditionFailed,
    /// Any other error (timeout, 5xx, throttling).
    Failed,
}

/// A decision upstream logs (or our design takes), for explanations and the oracle. Spec: CORE-E4.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Decision {
    /// The pod decided for.
    pub pod: PodKey,
    /// What was decided.
    pub note: Note,
}

/// What was decided for a pod.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Note {
    /// Not every taint is tolerated: cancel and delete now (§4.3 step 3).
    EvictNow,
    /// Work added, to fire at this instant.
    Scheduled {
        /// When the work fires.
        fire_at: Time,
    },
    /// `AddWork` found the key present (live or nil entry) and skipped ("already existing").
    AlreadyExisting,
    /// An existing timer was kept unchanged (§4.3 step 7, N9).
    KeptExisting {
        /// When the kept timer fires.
        fire_at: Time,
    },
    /// Fixed design: the existing timer was moved to a recomputed deadline.
    Rescheduled {
        /// The recomputed deadline.
        fire_at: Time,
    },
    /// Every used toleration is forever and the work, if any, was cancelled.
    ToleratedForever,
    /// 1.18.6: every used toleration is forever, but a scheduled deletion is not cancelled (T1).
    ForeverNotCancelled,
    /// `processPodOnNode` was reached with zero taints (N7, spec CORE-PRE): upstream would go on
    /// to evict. Never emitted unless the core itself is broken.
    ZeroTaints,
    /// `handlePodUpdate`: the pod is bound to another node than the item's; nothing done (I1).
    NotOurNode,
    /// The work's cancelled flag was set when it started or when its next request was due: it
    /// sends nothing more (PROFILE-4).
    Suppressed,
    /// Fixed design: the re-check against the caches no longer calls for deletion.
    RecheckAbandoned,
    /// Fixed design: the live read shows another pod under the name, or an unbound pod.
    LiveRecheckAbandoned,
    /// Fixed design: the live read shows the pod's node without a NoExecute taint it does not
    /// tolerate forever; the attempt fails and the next one re-checks the caches first.
    LiveRecheckDeferred,
    /// Every attempt failed; the work is dropped (S2, N14).
    GaveUp,
}

/// An effect: a command for the caller. Spec: CORE-E1..CORE-E4.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Effect {
    /// Record a Kubernetes event.
    Event(EventRecord),
    /// Send an API request; answer with [`crate::Controller::api_responded`].
    Api(ApiRequest),
    /// Arm (or re-arm) a timer; fire it with `Step::FireTimer` at `fire_at`. Spec: CORE-E3.
    ArmTimer {
        /// The timer (the work's id).
        id: TimerId,
        /// When it fires.
        fire_at: Time,
    },
    /// Disarm a timer (upstream `Timer.Stop`).
    CancelTimer {
        /// The timer (the work's id).
        id: TimerId,
    },
    /// A log-level note of a decision.
    Decision(Decision),
}

impl fmt::Display for Note {
    /// Lower-case phrases, as timelines and effect lists print them (a counterexample's steps
    /// put the pod into the sentence instead: `check::display`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::EvictNow => f.write_str("not every taint tolerated: delete now"),
            Note::Scheduled { fire_at } => write!(f, "deletion scheduled at {fire_at}"),
            Note::AlreadyExisting => f.write_str("work already exists: skipped"),
            Note::KeptExisting { fire_at } => write!(f, "existing deletion at {fire_at} kept"),
            Note::Rescheduled { fire_at } => write!(f, "deletion moved to {fire_at}"),
            Note::ToleratedForever => f.write_str("tolerated forever: cancelled"),
            Note::ForeverNotCancelled => {
                f.write_str("tolerated forever: scheduled deletion not cancelled")
            }
            Note::ZeroTaints => f.write_str("VIOLATION: processPodOnNode reached with zero taints"),
            Note::NotOurNode => f.write_str("pod bound to another node than the item's: ignored"),
            Note::Suppressed => f.write_str("work cancelled: nothing more sent"),
            Note::RecheckAbandoned => f.write_str("re-check: no longer to be deleted"),
            Note::LiveRecheckAbandoned => {
                f.write_str("live read: another or an unbound pod: abandoned")
            }
            Note::LiveRecheckDeferred => {
                f.write_str("live read: the API does not call for deletion now")
            }
            Note::GaveUp => f.write_str("every attempt failed: deletion dropped"),
        }
    }
}

impl fmt::Display for Effect {
    /// One line per effect, as timelines and snapshots print them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Effect::Event(e) => write!(f, "event {}: {}", e.reason(), e.message()),
            Effect::Api(r) => {
                match &r.verb {
                    Verb::GetNode(node) => write!(f, "api#{} GetNode {node} ({})", r.id.0, r.pod)?,
                    verb => write!(f, "api#{} {verb:?} {}", r.id.0, r.pod)?,
                }
                if let Some(uid) = &r.uid {
                    write!(f, " uid={uid}")?;
                }
                match &r.version {
                    Some(v) => write!(f, " rv={v}"),
                    None => Ok(()),
                }
            }
            Effect::ArmTimer { id, fire_at } => write!(f, "arm timer#{} at {fire_at}", id.0),
            Effect::CancelTimer { id } => write!(f, "cancel timer#{}", id.0),
            Effect::Decision(d) => write!(f, "decide {}: {}", d.pod, d.note),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_messages_are_upstream_wording() {
        let pod = PodKey::new("ns", "p");
        let mark = EventRecord {
            pod: pod.clone(),
            kind: EventKind::MarkingForDeletion,
        };
        let cancel = EventRecord {
            pod,
            kind: EventKind::CancellingDeletion,
        };
        assert_eq!(mark.message(), "Marking for deletion Pod ns/p");
        assert_eq!(cancel.message(), "Cancelling deletion of Pod ns/p");
        assert_eq!(cancel.reason(), "TaintManagerEviction");
    }

    /// A work's timer and request carry the work's own number (CORE-E2, CORE-E3): the caller
    /// answers and fires them by it.
    #[test]
    fn a_works_timer_and_request_are_numbered_by_it() {
        assert_eq!(WorkId(3).timer(), TimerId(3));
        assert_eq!(WorkId(3).request(), RequestId(3));
    }

    /// Only the two GETs are reads (§6.1 for the pod's; PR #140198's live re-check for the
    /// node's); the PATCH and the DELETE write.
    #[test]
    fn only_the_gets_are_reads() {
        assert!(Verb::Get.is_read());
        assert!(Verb::GetNode("n".into()).is_read());
        assert!(!Verb::PatchDisruptionTarget.is_read());
        assert!(!Verb::Delete.is_read());
    }

    /// The one-line forms timelines, snapshots and the oracle's messages print (CORE-E1..E4).
    #[test]
    fn effects_and_notes_print_one_line_each() {
        let pod = PodKey::new("ns", "p");
        let api = |verb, uid: Option<&str>, version: Option<u64>| {
            Effect::Api(ApiRequest {
                id: RequestId(2),
                verb,
                pod: pod.clone(),
                uid: uid.map(|u| Uid(u.into())),
                version: version.map(ResourceVersion),
            })
        };
        let printed = [
            Effect::Event(EventRecord {
                pod: pod.clone(),
                kind: EventKind::MarkingForDeletion,
            }),
            api(Verb::Get, None, None),
            api(Verb::GetNode("n1".into()), None, None),
            api(Verb::Delete, Some("u1"), Some(7)),
            Effect::ArmTimer {
                id: TimerId(1),
                fire_at: Time(1500),
            },
            Effect::CancelTimer { id: TimerId(1) },
            Effect::Decision(Decision {
                pod: pod.clone(),
                note: Note::Scheduled {
                    fire_at: Time(2000),
                },
            }),
        ]
        .map(|e| e.to_string());
        assert_eq!(
            printed,
            [
                "event TaintManagerEviction: Marking for deletion Pod ns/p",
                "api#2 Get ns/p",
                "api#2 GetNode n1 (ns/p)",
                "api#2 Delete ns/p uid=u1 rv=7",
                "arm timer#1 at 1.500s",
                "cancel timer#1",
                "decide ns/p: deletion scheduled at 2.000s",
            ]
        );
        assert_eq!(
            Note::GaveUp.to_string(),
            "every attempt failed: deletion dropped"
        );
    }
}
