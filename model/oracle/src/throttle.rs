//! The client's rate limit in the oracle (ORACLE-THROTTLE): the components share one client,
//! so the token bucket a work's request waits on is the one every pod's requests drain.
//!
//! Every component runs the core with the rate limit (CORE-THROTTLE), but its own controller
//! sees only its pod's requests, and the order in which works get their tokens is a race the
//! trace settles. So the oracle keeps the bucket of the requests the trace has shown (all pods,
//! trace order) and:
//! - lends it to a component's controller for a work's step, so the core's `send` reserves from
//!   it: the request goes out at once while a token is left, else the work waits in
//!   `Throttled` (the bucket a component holds between steps is always a full one, so states
//!   do not differ by it);
//! - lets a throttled request go only at an instant at which the shown requests leave a token
//!   (a request earlier than the bucket allows is explained by no behaviour);
//! - owes it by `D` after the later of its own token and the next token the shown requests
//!   leave: while other pods' requests keep taking the tokens, its turn may still come.

use super::state::State;
use taintcheck_core::profile::{DeleteSequence, Profile};
use taintcheck_core::throttle::{Bucket, RateLimit};
use taintcheck_core::time::{Duration, Time};
use taintcheck_core::{Actor, Controller, Step, WorkId, WorkPhase};

/// The bucket of the requests the trace has shown, in trace order.
#[derive(Clone, Copy, Debug)]
pub struct Throttle {
    seen: Bucket,
}

impl Throttle {
    /// A full bucket under `limit`.
    pub fn new(limit: RateLimit) -> Throttle {
        Throttle {
            seen: Bucket::new(limit),
        }
    }

    /// The trace showed a request at `t`: it took a token. A request sent the millisecond its
    /// token came may have waited for it, and then its reservation began at the token's exact
    /// instant, not at the whole millisecond the send was rounded up to; the bucket keeps that,
    /// the most lenient reading, so that the next token is not put later than the client's
    /// (with a burst of 1 and an interval of a fraction of a millisecond, `qps` 3 say, the
    /// rounding would otherwise pile up and reject a correct client).
    pub fn seen(&mut self, t: Time) {
        let before = Time(t.millis() - 1);
        let asked = if self.seen.has_token(before) {
            t
        } else {
            before
        };
        self.seen.reserve(asked);
    }

    /// The controller restarted: a new client, a full bucket.
    pub fn restarted(&mut self) {
        self.seen = Bucket::new(self.seen.limit());
    }

    /// Runs `step` on `ctrl` with the shared bucket lent to it, if the step is a work's (only
    /// a work sends requests).
    pub fn lend<R>(
        &self,
        ctrl: &mut Controller,
        step: &Step,
        run: impl FnOnce(&mut Controller) -> R,
    ) -> R {
        if !matches!(step.actor(), Actor::Work(_)) {
            return run(ctrl);
        }
        ctrl.use_bucket(self.seen);
        let result = run(ctrl);
        ctrl.use_bucket(Bucket::new(self.seen.limit()));
        result
    }

    /// Removes from `moves` the firing of a throttled request's timer at `now` while the
    /// requests the trace has shown leave no token.
    pub fn hold<M>(
        &self,
        s: &State,
        now: Time,
        moves: &mut Vec<M>,
        step: impl Fn(&M) -> Option<&Step>,
    ) {
        if self.seen.has_token(now) {
            return;
        }
        let works = s.ctrl.timed_queue().works();
        moves.retain(|m| match step(m) {
            Some(Step::FireTimer(timer)) => !matches!(
                works.get(&WorkId(timer.0)).map(|w| &w.phase),
                Some(WorkPhase::Throttled { .. })
            ),
            _ => true,
        });
    }

    /// The instant from which a request throttled until `until` is overdue by `bound`: `D`
    /// after the later of its own token and the next one the shown requests leave.
    pub fn owed_by(&self, until: Time, bound: Duration) -> Time {
        self.seen.earliest(until).plus(bound)
    }

    /// The instants by which `s`'s throttled requests are owed (for waking its component):
    /// they move on while the shown requests keep taking the tokens.
    pub fn deadlines<'a>(
        &'a self,
        s: &'a State,
        bound: Duration,
    ) -> impl Iterator<Item = Time> + 'a {
        self.throttled(s)
            .map(move |until| self.owed_by(until, bound))
    }

    /// The instants until which `s`'s throttled requests wait for their own tokens.
    fn throttled<'a>(&self, s: &'a State) -> impl Iterator<Item = Time> + 'a {
        let works = s.ctrl.timed_queue().works().values();
        works.filter_map(|w| match w.phase {
            WorkPhase::Throttled { until, .. } => Some(until),
            _ => None,
        })
    }

    /// The candidate instants (ORACLE-5) of `s`'s throttled requests: the next token the shown
    /// requests leave, and that plus `bound`.
    pub fn instants<'a>(
        &'a self,
        s: &'a State,
        bound: Duration,
    ) -> impl Iterator<Item = Time> + 'a {
        self.throttled(s)
            .map(|until| self.seen.earliest(until))
            .flat_map(move |at| [at, at.plus(bound)])
    }
}

/// `expect` (ORACLE-10) under a rate limit: how much later than without it the last of
/// `evictions` evictions may come when they all fall due at once. Each eviction's attempt
/// sends the profile's request sequence (DELETE; GET, PATCH, DELETE; or the fixed design's
/// GET, node GET, PATCH, DELETE); from a full bucket the last of those requests waits what
/// [`Bucket::reserve`] says. Retries after failed attempts are not counted.
pub fn longest_wait(limit: RateLimit, profile: &Profile, evictions: usize) -> Duration {
    let per_eviction = match profile.delete_sequence {
        DeleteSequence::DeleteOnly => 1,
        DeleteSequence::GetApplyDelete | DeleteSequence::GetPatchDelete => 3,
        DeleteSequence::LiveReadPatchDelete => 4,
    };
    let mut bucket = Bucket::new(limit);
    let last = (0..evictions * per_eviction).fold(Time::ZERO, |_, _| bucket.reserve(Time::ZERO));
    Duration(last.millis())
}
