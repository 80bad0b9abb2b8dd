//! The parallel oracle: the components (ORACLE-6) checked on several cores, with the verdict
//! and message the sequential oracle gives. Spec: ORACLE-12 (specs/oracle.md).
//!
//! Components are independent: a component's frontier depends on the trace's lines and the API
//! state they show, never on another component's frontier. So the pods are split into shares
//! (by a hash of the pod's key), and each worker thread runs a whole [`Oracle`] that reads
//! every line (the API state, the requests, the node logs: cheap) but keeps the components of
//! its share only (the frontiers: the work). Memory stays proportional to the live pods: each
//! worker holds the API state once, and its share's frontiers.
//!
//! The verdict is the sequential oracle's: a worker stops at its first error, and of the
//! workers' errors the one the sequential oracle meets first wins. Within a line the sequential
//! oracle first wakes components whose deadline passed, in (deadline, pod) order, then handles
//! the line's event: a component's error before a bad-input error found after it (a response's
//! checks follow its component's advance; the checks that precede components are met by every
//! worker alike), several components in pod order. [`Rank`] is that order.

use super::output::Observe;
use super::replay::Oracle;
use super::verdict::{Error, Result, Summary};
use super::Options;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::Arc;
use std::time::{Duration, Instant};
use taintcheck_core::api::PodKey;
use taintcheck_core::fx::Fx;
use taintcheck_core::time::Time;
use taintcheck_formats::trace::TraceRecord;

/// Lines sent to the workers at once.
const BATCH: usize = 1024;
/// A batch is sent when it is this old even if not full, so a slow stream's violation is
/// reported soon after its line arrives.
const BATCH_AGE: Duration = Duration::from_millis(20);
/// Batches queued per worker before the reader waits (memory does not grow with the trace).
const QUEUED: usize = 4;

/// The pods one worker keeps: those whose key hashes to `index` modulo `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Share {
    index: usize,
    count: usize,
}

impl Share {
    pub(crate) fn owns(&self, key: &PodKey) -> bool {
        let mut h = Fx::default();
        key.hash(&mut h);
        (h.finish() % self.count as u64) as usize == self.index
    }
}

/// Where an error arose, in the order the sequential oracle would meet it: the line (the end
/// of the trace last), then a wake-up before the line's event (by deadline, then pod), a
/// component's error at the event (by pod), a bad-input error.
type Rank = (usize, u8, Option<Time>, Option<PodKey>);

#[derive(Clone, Debug)]
struct Failure {
    rank: Rank,
    error: Error,
}

impl Failure {
    /// `error`, returned by `oracle` when fed `line`.
    fn new(oracle: &Oracle, line: usize, error: Error) -> Failure {
        let keys = oracle.components.keys();
        Failure::ranked(line, oracle.waking.as_ref(), keys, error)
    }

    /// `error` at `line` (`usize::MAX`: the end), arisen while waking `waking` if any; `keys`:
    /// the worker's pods (an inconclusive error names its pod as text).
    fn ranked<'a>(
        line: usize,
        waking: Option<&(Time, PodKey)>,
        mut keys: impl Iterator<Item = &'a PodKey>,
        error: Error,
    ) -> Failure {
        let key = match &error {
            Error::Violation(v) => Some(v.pod.clone()),
            Error::Inconclusive { pod, .. } => keys.find(|k| k.to_string() == *pod).cloned(),
            Error::BadInput(_) => None,
        };
        let rank = match (waking, key) {
            (Some((at, woken)), _) => (line, 0, Some(*at), Some(woken.clone())),
            (None, Some(key)) => (line, 1, None, Some(key)),
            (None, None) => (line, 2, None, None),
        };
        Failure { rank, error }
    }
}

enum Message {
    Lines(Arc<Vec<(usize, TraceRecord)>>),
    /// Reply with the first failure so far, once every batch sent before is handled.
    Sync,
    Finish(Option<Time>),
}

enum Reply {
    Synced(Option<Failure>),
    Finished(std::result::Result<Summary, Failure>),
}

struct Worker {
    to: SyncSender<Message>,
    from: Receiver<Reply>,
}

/// One worker's loop: feed its oracle every line until the first error, answer syncs, finish.
fn work(mut oracle: Oracle, from: Receiver<Message>, to: SyncSender<Reply>, failed: &AtomicBool) {
    let mut failure: Option<Failure> = None;
    while let Ok(message) = from.recv() {
        match message {
            Message::Lines(lines) => {
                if failure.is_some() {
                    continue;
                }
                for (line, record) in lines.iter() {
                    if let Err(e) = oracle.feed_line(*line, record) {
                        failure = Some(Failure::new(&oracle, *line, e));
                        failed.store(true, Ordering::Release);
                        break;
                    }
                }
            }
            Message::Sync => {
                if to.send(Reply::Synced(failure.clone())).is_err() {
                    return;
                }
            }
            Message::Finish(until) => {
                let result = match failure {
                    Some(f) => Err(f),
                    None => {
                        let keys: Vec<PodKey> = oracle.components.keys().cloned().collect();
                        oracle
                            .finish(until)
                            .map_err(|e| Failure::ranked(usize::MAX, None, keys.iter(), e))
                    }
                };
                let _ = to.send(Reply::Finished(result));
                return;
            }
        }
    }
}

/// The oracle on `threads` cores: feed it lines as [`Oracle`]; the same verdicts, messages and
/// summary.
pub struct Parallel {
    kind: Kind,
}

enum Kind {
    One(Box<Oracle>),
    Many(Pool),
}

struct Pool {
    workers: Vec<Worker>,
    batch: Vec<(usize, TraceRecord)>,
    batch_started: Option<Instant>,
    failed: Arc<AtomicBool>,
    /// Fed the header only: what the trace records ([`Parallel::observe`]).
    header: Box<Oracle>,
    headed: bool,
}

impl Parallel {
    /// An oracle with `options` on `threads` worker threads (one: the sequential oracle,
    /// without threads).
    pub fn new(options: Options, threads: usize) -> Parallel {
        if threads <= 1 {
            return Parallel {
                kind: Kind::One(Box::new(Oracle::with_options(options))),
            };
        }
        let failed = Arc::new(AtomicBool::new(false));
        let mut workers = Vec::with_capacity(threads);
        for index in 0..threads {
            let share = Share {
                index,
                count: threads,
            };
            let oracle = Oracle::with_options(Options {
                share: Some(share),
                ..options
            });
            let (to, from_driver) = mpsc::sync_channel(QUEUED);
            let (to_driver, from) = mpsc::sync_channel(1);
            let failed = failed.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("oracle-{index}"))
                .spawn(move || work(oracle, from_driver, to_driver, &failed));
            if spawned.is_err() {
                // No thread to be had: the workers started end with their channels, and the
                // sequential oracle gives the same verdict.
                return Parallel::new(options, 1);
            }
            workers.push(Worker { to, from });
        }
        Parallel {
            kind: Kind::Many(Pool {
                workers,
                batch: Vec::with_capacity(BATCH),
                batch_started: None,
                failed,
                header: Box::new(Oracle::with_options(options)),
                headed: false,
            }),
        }
    }

    /// Checks a whole trace; see [`Oracle::finish`] for `until`.
    pub fn check(
        options: Options,
        threads: usize,
        records: &[TraceRecord],
        until: Option<Time>,
    ) -> Result<Summary> {
        let mut oracle = Parallel::new(options, threads);
        for (i, r) in records.iter().enumerate() {
            oracle.feed_line(i + 1, r)?;
        }
        oracle.finish(until)
    }

    /// The summary so far, on one thread (the workers' are read when they finish).
    pub fn summary(&self) -> Option<Summary> {
        match &self.kind {
            Kind::One(o) => Some(o.summary()),
            Kind::Many(_) => None,
        }
    }

    /// What the oracle holds now, on one thread (the workers keep theirs to themselves).
    pub fn footprint(&self) -> Option<super::Footprint> {
        match &self.kind {
            Kind::One(o) => Some(o.footprint()),
            Kind::Many(_) => None,
        }
    }

    /// What the oracle compares with the trace (from the header unless given).
    pub fn observe(&self) -> Observe {
        match &self.kind {
            Kind::One(o) => o.observe(),
            Kind::Many(p) => p.header.observe(),
        }
    }

    /// Feeds the record read from line `line`. An error is returned once every worker has
    /// reached it; it is the first the sequential oracle would return, possibly some lines
    /// after `line` that caused it (the workers run behind the reader by at most a batch).
    pub fn feed_line(&mut self, line: usize, record: &TraceRecord) -> Result<()> {
        match &mut self.kind {
            Kind::One(o) => o.feed_line(line, record),
            Kind::Many(_) => self.feed(line, record.clone()),
        }
    }

    /// [`Parallel::feed_line`] with the record itself: the workers share it without a copy.
    pub fn feed(&mut self, line: usize, record: TraceRecord) -> Result<()> {
        let pool = match &mut self.kind {
            Kind::One(o) => return o.feed_line(line, &record),
            Kind::Many(pool) => pool,
        };
        if !pool.headed {
            // The workers report a missing header; this copy only learns what is observed.
            let _ = pool.header.feed_line(line, &record);
            pool.headed = true;
        }
        pool.batch.push((line, record));
        let started = *pool.batch_started.get_or_insert_with(Instant::now);
        if pool.batch.len() >= BATCH || started.elapsed() >= BATCH_AGE {
            pool.send();
        }
        if pool.failed.load(Ordering::Acquire) {
            pool.send();
            let failures = pool
                .workers
                .iter()
                .filter_map(|w| {
                    w.to.send(Message::Sync).ok()?;
                    match w.from.recv().ok()? {
                        Reply::Synced(f) => f,
                        Reply::Finished(_) => None,
                    }
                })
                .collect();
            return Err(first(failures).expect("a worker failed"));
        }
        Ok(())
    }

    /// Ends the trace, as [`Oracle::finish`].
    pub fn finish(self, until: Option<Time>) -> Result<Summary> {
        let mut pool = match self.kind {
            Kind::One(o) => return o.finish(until),
            Kind::Many(pool) => pool,
        };
        pool.send();
        let mut summaries = Vec::new();
        let mut failures = Vec::new();
        for w in &pool.workers {
            let sent = w.to.send(Message::Finish(until));
            match sent.ok().and_then(|()| w.from.recv().ok()) {
                Some(Reply::Finished(Ok(s))) => summaries.push(s),
                Some(Reply::Finished(Err(f))) => failures.push(f),
                _ => panic!("an oracle worker stopped"),
            }
        }
        if let Some(e) = first(failures) {
            return Err(e);
        }
        Ok(Summary {
            records: summaries.first().map_or(0, |s| s.records),
            pods: summaries.iter().map(|s| s.pods).sum(),
            max_frontier: summaries.iter().map(|s| s.max_frontier).max().unwrap_or(0),
            live_components: summaries.iter().map(|s| s.live_components).sum(),
        })
    }
}

impl Pool {
    /// Sends the batch to every worker.
    fn send(&mut self) {
        self.batch_started = None;
        if self.batch.is_empty() {
            return;
        }
        let lines = Arc::new(std::mem::replace(
            &mut self.batch,
            Vec::with_capacity(BATCH),
        ));
        for w in &self.workers {
            // A worker that stopped has failed; its failure is collected at the next sync.
            let _ = w.to.send(Message::Lines(lines.clone()));
        }
    }
}

/// The failure the sequential oracle would have met first.
fn first(failures: Vec<Failure>) -> Option<Error> {
    failures
        .into_iter()
        .min_by(|a, b| a.rank.cmp(&b.rank))
        .map(|f| f.error)
}
