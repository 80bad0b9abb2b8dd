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
//!
//! The trace dates a request when the API server received it, up to the step slack `S` after
//! the client sent it (ORACLE-11), and the bucket runs on the client's clock. So it is kept in
//! two readings: `early` takes each shown request's token at the earliest instant its send may
//! have had (`S` before the line, or the token's own instant if later), and decides what may go
//! (a burst the API server received late then does not seem to outrun the bucket); `late`
//! takes it at the line's instant, and decides what is owed (a client is not owed a request
//! before its token could have come).

use super::state::State;
use taintcheck_core::profile::{DeleteSequence, Profile};
use taintcheck_core::throttle::{Bucket, RateLimit};
use taintcheck_core::time::{Duration, Time};
use taintcheck_core::{Actor, Controller, Step, WorkId, WorkPhase};

/// The bucket of the requests the trace has shown, in trace order, in two readings of when
/// each was sent.
#[derive(Clone, Copy, Debug)]
pub struct Throttle {
    /// Each shown request sent at the earliest instant it may have been: what may go.
    early: Bucket,
    /// Each shown request sent at its line's instant: what is owed.
    late: Bucket,
    /// The step slack `S`: how long before its line a request may have been sent.
    slack: Duration,
}

impl Throttle {
    /// A full bucket under `limit`, for a trace whose requests reach it within `slack` of
    /// their send.
    pub fn new(limit: RateLimit, slack: Duration) -> Throttle {
        Throttle {
            early: Bucket::new(limit),
            late: Bucket::new(limit),
            slack,
        }
    }

    /// The trace showed a request at `t`: it took a token, in the late reading sent at `t`, in
    /// the early one up to `S` before.
    pub fn seen(&mut self, t: Time) {
        take(&mut self.late, t, Duration(0));
        take(&mut self.early, t, self.slack);
    }

    /// The controller restarted: a new client, a full bucket.
    pub fn restarted(&mut self) {
        *self = Throttle::new(self.late.limit(), self.slack);
    }

    /// Runs `step` on `ctrl` with the shared bucket lent to it, if the step is a work's (only
    /// a work sends requests): its early reading, or its late one if `waited`.
    pub fn lend<R>(
        &self,
        ctrl: &mut Controller,
        step: &Step,
        waited: bool,
        run: impl FnOnce(&mut Controller) -> R,
    ) -> R {
        if !matches!(step.actor(), Actor::Work(_)) {
            return run(ctrl);
        }
        ctrl.use_bucket(if waited { self.late } else { self.early });
        let result = run(ctrl);
        ctrl.use_bucket(Bucket::new(self.early.limit()));
        result
    }

    /// Whether a work's request at `now` may have gone at once or waited for its token: the
    /// early reading has a token, the late one not.
    pub fn unsure(&self, now: Time) -> bool {
        self.early.has_token(now) && !self.late.has_token(now)
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
        if self.early.has_token(now) {
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
        self.late.earliest(until).plus(bound)
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
    /// requests leave, and the instant it is owed by.
    pub fn instants<'a>(
        &'a self,
        s: &'a State,
        bound: Duration,
    ) -> impl Iterator<Item = Time> + 'a {
        self.throttled(s)
            .flat_map(move |until| [self.early.earliest(until), self.owed_by(until, bound)])
    }
}

/// Takes from `bucket` the token of a request sent within `before` ahead of `t`. A request
/// sent the millisecond its token came may have waited for it, and then its reservation began
/// at the token's exact instant, not at the whole millisecond the send was rounded up to: so
/// the reservation is asked for at least a millisecond ahead, and the bucket takes the later
/// of that and the token's exact instant. Without that, with a burst of 1 and an interval of a
/// fraction of a millisecond (`qps` 3, say), the rounding would pile up and reject a correct
/// client.
fn take(bucket: &mut Bucket, t: Time, before: Duration) {
    let ahead = Time(t.millis() - before.0.max(1));
    let asked = if bucket.has_token(ahead) {
        Time(t.millis() - before.0)
    } else {
        ahead
    };
    bucket.reserve(asked);
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
