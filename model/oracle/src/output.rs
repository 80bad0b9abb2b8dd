//! What the trace and the model say the controller did: the outputs a state owes ([`Output`]),
//! a trace line showing one ([`Seen`]), and which kinds the trace records ([`Observe`]). Spec:
//! ORACLE-2, TRACE-7.

use taintcheck_core::api::{PodKey, ResourceVersion, Uid};
use taintcheck_core::{ApiRequest, EventRecord, Verb};

/// Which controller outputs the trace records; the others are silent (TRACE-7, ORACLE-2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Observe {
    /// Requests and their responses are in the trace; otherwise the oracle answers requests
    /// itself from the API state the trace shows (no injected failures).
    pub requests: bool,
    /// `TaintManagerEviction` events are in the trace.
    pub events: bool,
    /// A pod's first deletion line is the controller's successful DELETE.
    pub deletions: bool,
}

/// A controller output the trace must show, in order, at the instant it was produced.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Output {
    Event(EventRecord),
    Request(ApiRequest),
    /// A successful DELETE of this incarnation (traces that observe deletions).
    Deleted {
        pod: PodKey,
        uid: Uid,
    },
}

/// A controller output as a trace line shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seen {
    Event {
        pod: PodKey,
        message: String,
    },
    Request {
        id: u64,
        verb: Verb,
        pod: PodKey,
        uid: Option<Uid>,
        version: Option<ResourceVersion>,
    },
    Deleted {
        pod: PodKey,
        uid: Uid,
    },
}

impl Seen {
    /// Whether this line shows the event `e`.
    pub fn shows(&self, e: &EventRecord) -> bool {
        matches!(self, Seen::Event { pod, message } if e.pod == *pod && e.message() == *message)
    }
}

impl Output {
    /// Whether the trace line `seen` is this output. A request's UID and resourceVersion are
    /// compared only when the trace records them.
    pub fn matches(&self, seen: &Seen) -> bool {
        match (self, seen) {
            (Output::Event(e), seen) => seen.shows(e),
            (
                Output::Request(r),
                Seen::Request {
                    verb,
                    pod,
                    uid,
                    version,
                    ..
                },
            ) => {
                r.verb == *verb
                    && r.pod == *pod
                    && (uid.is_none() || *uid == r.uid)
                    && (version.is_none() || *version == r.version)
            }
            (Output::Deleted { pod, uid }, Seen::Deleted { pod: p, uid: u }) => {
                pod == p && uid == u
            }
            _ => false,
        }
    }

    pub fn pod(&self) -> &PodKey {
        match self {
            Output::Event(e) => &e.pod,
            Output::Request(r) => &r.pod,
            Output::Deleted { pod, .. } => pod,
        }
    }
}
