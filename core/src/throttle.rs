//! The controller client's token bucket: when may the next request be sent?
//!
//! Upstream, kube-controller-manager builds each controller's clientset with `--kube-api-qps`
//! (20) and `--kube-api-burst` (30); client-go (`rest.RESTClientFor`, via `NewForConfig`) gives
//! the clientset one `flowcontrol.NewTokenBucketRateLimiter(qps, burst)`, a
//! `golang.org/x/time/rate.Limiter` that starts full, and every request (`Request.Do`, through
//! `tryThrottle`) waits in `rateLimiter.Wait` for its token before it is sent. `Wait` reserves
//! the token at once and sleeps until the reservation's instant, so waiters are served in the
//! order they asked. Spec: CORE-THROTTLE.
//!
//! Assumed here: one bucket for the taint controller's requests (GET, PATCH, DELETE and the
//! fixed design's node GET); the events the same clientset posts are not counted.
//!
//! The bucket is kept in exact integer arithmetic as its *theoretical arrival time* (the
//! instant the bucket would be full again, less one emission interval): the `k`-th request
//! taken at `t` moves it to `max(tat, t) + 1/qps`, and the next request may go at
//! `tat - (burst - 1)/qps`. This is the token bucket of `x/time/rate` with a fractional token
//! count, without floating point.

use crate::time::{Duration, Time};
use std::fmt;

/// A client's rate limit: `tokens` requests per `per` on average, `burst` at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RateLimit {
    tokens: u32,
    per: Duration,
    burst: u32,
}

impl RateLimit {
    /// `qps` requests per second (the time unit being the millisecond), `burst` at once: the
    /// `--kube-api-qps` and `--kube-api-burst` flags. `None` unless both are at least 1.
    pub fn qps(qps: u32, burst: u32) -> Option<RateLimit> {
        RateLimit::new(qps, Duration(1000), burst)
    }

    /// `tokens` requests per `per` (in the caller's time unit, e.g. the model's), `burst` at
    /// once. `None` unless all three are positive.
    pub fn new(tokens: u32, per: Duration, burst: u32) -> Option<RateLimit> {
        (tokens > 0 && per.0 > 0 && burst > 0).then_some(RateLimit { tokens, per, burst })
    }

    /// Requests per `per`.
    pub fn tokens(&self) -> u32 {
        self.tokens
    }

    /// The period `tokens` refers to.
    pub fn per(&self) -> Duration {
        self.per
    }

    /// Requests that may go at once from a full bucket.
    pub fn burst(&self) -> u32 {
        self.burst
    }

    /// The most requests the bucket lets through in any closed window of length `span` (whole
    /// milliseconds): `burst` plus the tokens that arrive in less than `span + 1` ms, since each
    /// send instant is its exact reservation rounded up to the millisecond. When `per / tokens`
    /// is whole, that is `burst + ⌊span · tokens / per⌋`.
    pub fn most_within(&self, span: Duration) -> u64 {
        let (tokens, per) = (i128::from(self.tokens), i128::from(self.per.0));
        let below = (i128::from(span.0.max(0)) + 1) * tokens;
        let refilled = (below + per - 1) / per - 1;
        u64::from(self.burst).saturating_add(u64::try_from(refilled).unwrap_or(u64::MAX))
    }
}

impl fmt::Display for RateLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.per == Duration(1000) {
            write!(f, "qps {}, burst {}", self.tokens, self.burst)
        } else {
            let (tokens, per, burst) = (self.tokens, self.per.0, self.burst);
            write!(f, "{tokens} per {per} ms, burst {burst}")
        }
    }
}

/// A token bucket and the requests it has let through. Spec: CORE-THROTTLE.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Bucket {
    limit: RateLimit,
    /// The theoretical arrival time, in units of `1/tokens` of the time unit (so that one
    /// emission interval, `per / tokens`, is exactly `per`); `None`: nothing taken yet, full.
    tat: Option<i128>,
}

impl Bucket {
    /// A full bucket (`x/time/rate` starts full).
    pub fn new(limit: RateLimit) -> Bucket {
        Bucket { limit, tat: None }
    }

    /// Its rate limit.
    pub fn limit(&self) -> RateLimit {
        self.limit
    }

    /// The earliest instant at or after `now` at which the next request may be sent: `now`
    /// when a token is left, else the instant the next token arrives.
    pub fn earliest(&self, now: Time) -> Time {
        let Some(tat) = self.tat else {
            return now;
        };
        let RateLimit { tokens, per, burst } = self.limit;
        let scaled = tat - i128::from(burst - 1) * i128::from(per.0);
        let tokens = i128::from(tokens);
        // Ceiling division: the first whole instant at which the token is there.
        let at = scaled.div_euclid(tokens) + i128::from(scaled.rem_euclid(tokens) != 0);
        let at = i64::try_from(at).unwrap_or(if at < 0 { i64::MIN } else { i64::MAX });
        now.max(Time(at))
    }

    /// Whether a request may be sent at `now` without waiting.
    pub fn has_token(&self, now: Time) -> bool {
        self.earliest(now) <= now
    }

    /// `x/time/rate`'s `Wait` asked at `now`: reserves the next token and returns the instant
    /// the request may be sent (`now` when a token is left, else [`Bucket::earliest`]).
    pub fn reserve(&mut self, now: Time) -> Time {
        let at = self.earliest(now);
        // From the exact theoretical instant, not the whole millisecond it rounds up to.
        let scaled = i128::from(now.0) * i128::from(self.limit.tokens);
        let start = self.tat.map_or(scaled, |tat| tat.max(scaled));
        self.tat = Some(start + i128::from(self.limit.per.0));
        at
    }
}

#[cfg(test)]
mod tests;
