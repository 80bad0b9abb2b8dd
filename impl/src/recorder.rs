//! The recorder: every API-visible change, every controller request, response and Event, and
//! optional controller-internal notes, stamped with the clock and kept in order. It is what
//! `taintcheck run` prints and what `--trace` writes (`specs/trace-format.md`). Spec: RT-REC-1.

use crate::clock::Clock;
use crate::sync::{lock, Arc, AtomicU64, Mutex, Ordering};
use taintcheck_model::core::throttle::RateLimit;
use taintcheck_model::trace::{rate_limit, to_line, TraceEvent, TraceRecord, TRACE_VERSION};

/// Cheap to clone; every clone appends to the same trace.
#[derive(Clone)]
pub struct Recorder {
    records: Arc<Mutex<Vec<TraceRecord>>>,
    clock: Arc<dyn Clock>,
    enabled: bool,
    next_request: Arc<AtomicU64>,
    counts: Arc<[AtomicU64; 3]>,
}

/// How many records of the kinds a benchmark reports were made (kept even when disabled).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Controller decisions (`note` records).
    pub notes: u64,
    /// Controller requests.
    pub requests: u64,
    /// Pods the API server removed.
    pub pods_deleted: u64,
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
                observed: None,
                start: None,
                end: None,
                qps: None,
                burst: None,
            },
        };
        Recorder {
            records: Arc::new(Mutex::new(vec![header])),
            clock,
            enabled: true,
            next_request: Arc::new(AtomicU64::new(1)),
            counts: Arc::new(Default::default()),
        }
    }

    /// The header states the controller client's rate limit (TRACE-THROTTLE), so that the
    /// trace is judged against the bucket it ran under.
    pub fn rate_limited(self, limit: Option<RateLimit>) -> Recorder {
        if let Some(TraceEvent::Header { qps, burst, .. }) =
            lock(&self.records).first_mut().map(|r| &mut r.event)
        {
            (*qps, *burst) = rate_limit::fields(limit);
        }
        self
    }

    /// A recorder that keeps nothing (the scale benchmark measures the controller, not the log).
    pub fn disabled(clock: Arc<dyn Clock>) -> Recorder {
        Recorder {
            records: Arc::new(Mutex::new(Vec::new())),
            clock,
            enabled: false,
            next_request: Arc::new(AtomicU64::new(1)),
            counts: Arc::new(Default::default()),
        }
    }

    pub fn record(&self, event: TraceEvent) {
        let counter = match &event {
            TraceEvent::Note { .. } => Some(0),
            TraceEvent::Request { .. } => Some(1),
            TraceEvent::PodDeleted { .. } => Some(2),
            _ => None,
        };
        if let Some(i) = counter {
            self.counts[i].fetch_add(1, Ordering::Relaxed);
        }
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

    pub fn counts(&self) -> Counts {
        let get = |i: usize| self.counts[i].load(Ordering::Relaxed);
        Counts {
            notes: get(0),
            requests: get(1),
            pods_deleted: get(2),
        }
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
