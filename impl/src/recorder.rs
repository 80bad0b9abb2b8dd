//! The recorder: every API-visible change, every controller request, response and Event, and
//! optional controller-internal notes, stamped with the clock and kept in order. It is what
//! `taintcheck run` prints and what `--trace` writes (`specs/trace-format.md`). Spec: RT-REC-1.
//!
//! A recorder keeps its records, or hands each to a sink as it is made: a trace holds every
//! version of every node with all its taints, so a long run's trace outgrows what the run
//! holds live, and a command that prints or writes it as it goes need not keep it.

use crate::clock::Clock;
use crate::sync::{lock, Arc, AtomicU64, Mutex, Ordering};
use taintcheck_core::throttle::RateLimit;
use taintcheck_formats::trace::{rate_limit, to_line, TraceEvent, TraceRecord, TRACE_VERSION};

/// Cheap to clone; every clone appends to the same trace.
#[derive(Clone)]
pub struct Recorder {
    log: Arc<Mutex<Log>>,
    clock: Arc<dyn Clock>,
    next_request: Arc<AtomicU64>,
    counts: Arc<[AtomicU64; 3]>,
}

/// Takes each record as it is made, in trace order.
pub type Sink = Box<dyn FnMut(TraceRecord) + Send>;

/// Where records go.
enum Log {
    /// Kept, for [`Recorder::records`].
    Kept(Vec<TraceRecord>),
    /// Handed to the sink; nothing kept.
    Streamed(Sink),
    /// Nothing recorded (only the counts).
    Off,
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
            log: Arc::new(Mutex::new(Log::Kept(vec![header]))),
            clock,
            next_request: Arc::new(AtomicU64::new(1)),
            counts: Arc::new(Default::default()),
        }
    }

    /// The header states the controller client's rate limit (TRACE-THROTTLE), so that the
    /// trace is judged against the bucket it ran under. Before [`Recorder::streamed`], which
    /// sends the header on.
    pub fn rate_limited(self, limit: Option<RateLimit>) -> Recorder {
        if let Log::Kept(records) = &mut *lock(&self.log) {
            if let Some(TraceEvent::Header { qps, burst, .. }) =
                records.first_mut().map(|r| &mut r.event)
            {
                (*qps, *burst) = rate_limit::fields(limit);
            }
        }
        self
    }

    /// From now on every record goes to `sink` as it is made, and none is kept; the records
    /// kept so far (the header) go first.
    pub fn streamed(self, mut sink: Sink) -> Recorder {
        {
            let mut log = lock(&self.log);
            if let Log::Kept(records) = &mut *log {
                records.drain(..).for_each(&mut sink);
            }
            *log = Log::Streamed(sink);
        }
        self
    }

    /// A recorder that keeps nothing (the scale benchmark measures the controller, not the log).
    pub fn disabled(clock: Arc<dyn Clock>) -> Recorder {
        Recorder {
            log: Arc::new(Mutex::new(Log::Off)),
            clock,
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
        // The clock is read under the lock so that records stay in time order (TRACE-2).
        let mut log = lock(&self.log);
        let record = || TraceRecord {
            t: self.clock.now(),
            event,
        };
        match &mut *log {
            Log::Kept(records) => records.push(record()),
            Log::Streamed(sink) => sink(record()),
            Log::Off => {}
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

    /// Everything kept so far (nothing when streamed or disabled).
    pub fn records(&self) -> Vec<TraceRecord> {
        self.kept(<[TraceRecord]>::to_vec)
    }

    /// The kept trace as NDJSON.
    pub fn to_ndjson(&self) -> String {
        self.kept(|records| records.iter().map(to_line).collect())
    }

    fn kept<T>(&self, read: impl FnOnce(&[TraceRecord]) -> T) -> T {
        match &*lock(&self.log) {
            Log::Kept(records) => read(records),
            Log::Streamed(_) | Log::Off => read(&[]),
        }
    }
}
