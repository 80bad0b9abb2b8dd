//! The report of works that became ready to run: spawned (their goroutine may start), marked or
//! answered (their goroutine's next step may run), or finished (their map update may run). A caller that runs every work on a goroutine of its own (the
//! runtime's timer service) asks which works a call made ready instead of listing every work
//! after every call, which would make a storm of evictions quadratic in its pods. Sans-IO
//! cores hand such news out by polling (quinn-proto's `poll_*`), as this log does.
//!
//! The log is not part of the state: it is off unless turned on, and [`super::TimedQueue`]'s
//! equality and hash ignore it, so the model's states and counts do not see it.

use super::{Work, WorkPhase};
use crate::effect::WorkId;
use std::ops::{Deref, DerefMut};

/// What a ready work waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Ready {
    /// Spawned: its goroutine may start.
    Start,
    /// Marked for deletion, or answered: its goroutine's next step may run.
    Continue,
    /// Finished: its wrapped function's map update may run.
    Complete,
}

impl Ready {
    /// What a work in `phase` waits for, if it is ready.
    pub(crate) fn of(phase: &WorkPhase) -> Option<Ready> {
        match phase {
            WorkPhase::Spawned => Some(Ready::Start),
            WorkPhase::Marked | WorkPhase::Answered { .. } => Some(Ready::Continue),
            WorkPhase::Finished { .. } => Some(Ready::Complete),
            WorkPhase::Armed
            | WorkPhase::Requesting { .. }
            | WorkPhase::Throttled { .. }
            | WorkPhase::Backoff { .. } => None,
        }
    }
}

/// The works that became ready since the caller last took them (`None`: not kept).
#[derive(Clone, Debug, Default)]
pub(crate) struct ReadyLog(Option<Vec<WorkId>>);

impl ReadyLog {
    /// Starts keeping the log.
    pub(crate) fn enable(&mut self) {
        self.0.get_or_insert_with(Vec::new);
    }

    /// Whether the log is kept.
    pub(crate) fn is_enabled(&self) -> bool {
        self.0.is_some()
    }

    /// Whether a work became ready since the last [`ReadyLog::take`].
    pub(crate) fn is_empty(&self) -> bool {
        self.0.as_ref().is_none_or(Vec::is_empty)
    }

    /// Notes that work `id` became ready (if the log is kept).
    pub(crate) fn note(&mut self, id: WorkId) {
        if let Some(log) = &mut self.0 {
            log.push(id);
        }
    }

    /// The works noted since the last call, oldest first (possibly repeated, possibly no longer
    /// ready or gone).
    pub(crate) fn take(&mut self) -> Vec<WorkId> {
        self.0.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Renumbers the noted works (see [`super::TimedQueue::renumber`]).
    pub(crate) fn renumber(&mut self, to: impl Fn(WorkId) -> WorkId) {
        if let Some(log) = &mut self.0 {
            for id in log {
                *id = to(*id);
            }
        }
    }
}

/// A work borrowed to change. When the borrow ends, a work that became ready (or ready for
/// something else) is noted in the log, so that no change of phase can bypass it.
pub(crate) struct WorkMut<'a> {
    pub(super) work: &'a mut Work,
    pub(super) id: WorkId,
    pub(super) was: Option<Ready>,
    pub(super) log: &'a mut ReadyLog,
}

impl Deref for WorkMut<'_> {
    type Target = Work;

    fn deref(&self) -> &Work {
        self.work
    }
}

impl DerefMut for WorkMut<'_> {
    fn deref_mut(&mut self) -> &mut Work {
        self.work
    }
}

impl Drop for WorkMut<'_> {
    fn drop(&mut self) {
        let is = Ready::of(&self.work.phase);
        if is.is_some() && is != self.was {
            self.log.note(self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Immediate, TimedQueue, WorkKey};
    use super::*;
    use crate::api::PodKey;
    use crate::time::Time;

    /// The log is kept only once turned on, tells whether anything was noted since the last
    /// take, and renumbers what it holds with the works.
    #[test]
    fn the_log_is_kept_once_on_and_renumbered() {
        let mut log = ReadyLog::default();
        assert!(!log.is_enabled());
        log.note(WorkId(1));
        assert!(log.is_empty(), "not kept while off");
        log.enable();
        assert!(log.is_enabled());
        assert!(log.is_empty());
        log.note(WorkId(1));
        assert!(!log.is_empty());
        log.renumber(|id| WorkId(id.0 - 1));
        assert_eq!(log.take(), [WorkId(0)]);
        assert!(log.is_empty());
    }

    /// A change that leaves a ready work ready for the same step is not news: a caller that
    /// took the step once is not given it again (the runtime would run it twice).
    #[test]
    fn a_work_is_reported_once_per_readiness() {
        let mut q = TimedQueue::new();
        q.report_ready();
        let key = WorkKey {
            pod: PodKey::new("ns", "pod"),
            uid: None,
        };
        let id = q
            .add_work(&key, Time(0), Time(0), Immediate::Nil, &mut vec![])
            .unwrap();
        assert!(q.has_ready());
        assert_eq!(q.take_ready(), [(Ready::Start, id)]);
        assert!(!q.has_ready());
        q.work_mut(id).unwrap().cancelled = true;
        assert_eq!(q.take_ready(), []);
        q.work_mut(id).unwrap().phase = WorkPhase::Marked;
        assert_eq!(q.take_ready(), [(Ready::Continue, id)]);
    }
}
