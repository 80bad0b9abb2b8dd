//! The recorder: every API-visible change, every controller request, response and Event, and
//! optional controller-internal notes, stamped with the clock and kept in order. It is what
//! `taintcheck run` prints and what `--trace` writes (`specs/trace-format.md`). Spec: RT-REC-1.

use crate::clock::Clock;
use crate::sync::{lock, Arc, AtomicU64, Mutex, Ordering};
use taintcheck_model::trace::{to_line, TraceEvent, TraceRecord, TRACE_VERSION};

/// Cheap to clone; every clone appends to the same trace.
#[derive(Clone)]
pub struct Recorder {
    records: Arc<Mutex<Vec<TraceRecord>>>,
    clock: Arc<dyn Clock>,
    enabled: bool,
    next_request: Arc<AtomicU64>,
}

impl Recorder {
    /// A recorder whose first record is the trace header.
    pub fn new(clock: Arc<dyn Clock>, profile: &str, scenario: Option<&str>) -> Recorder {
        let header = TraceRecord {
            t: clock.now(),
            event: TraceEvent::Header {
                version: TRACE_VERSION,
                source: "taintcheck-runtime".into(),
                profile: Some(profile.into()),
                scenario: scenario.map(Into::into),
            },
        };
        Recorder {
            records: Arc::new(Mutex::new(vec![header])),
            clock,
            enabled: true,
            next_request: Arc::new(AtomicU64::new(1)),
        }
    }

    /// A recorder that keeps nothing (the scale benchmark measures the controller, not the log).
    pub fn disabled(clock: Arc<dyn Clock>) -> Recorder {
        Recorder {
            records: Arc::new(Mutex::new(Vec::new())),
            clock,
            enabled: false,
            next_request: Arc::new(AtomicU64::new(1)),
        }
    }

    pub fn record(&self, event: TraceEvent) {
        if self.enabled {
            // The clock is read under the lock so that records stay in time order (TRACE-2).
            let mut records = lock(&self.records);
            let t = self.clock.now();
            records.push(TraceRecord { t, event });
        }
    }

    /// A request id unique in this trace (the core reuses its ids; a trace must not).
    pub fn next_request_id(&self) -> u64 {
        self.next_request.fetch_add(1, Ordering::SeqCst)
    }

    /// Everything recorded so far.
    pub fn records(&self) -> Vec<TraceRecord> {
        lock(&self.records).clone()
    }

    /// The trace as NDJSON.
    pub fn to_ndjson(&self) -> String {
        lock(&self.records).iter().map(to_line).collect()
    }
}
