use super::*;
use proptest::prelude::*;

/// An independent transcription of `x/time/rate`'s `reserveN` for one token, in exact
/// integers: the token count scaled by `per` (so one token is `per`), advanced by the elapsed
/// time times `tokens`, capped at `burst`, taken even when it goes negative; the wait is what
/// the debt takes to refill. Returns the send instant and whether a token was left.
struct Reference {
    limit: RateLimit,
    credit: i128,
    last: Option<i64>,
}

impl Reference {
    fn new(limit: RateLimit) -> Reference {
        let full = i128::from(limit.burst) * i128::from(limit.per.0);
        Reference {
            limit,
            credit: full,
            last: None,
        }
    }

    fn reserve(&mut self, now: i64) -> (i64, bool) {
        let full = i128::from(self.limit.burst) * i128::from(self.limit.per.0);
        let tokens = i128::from(self.limit.tokens);
        if let Some(last) = self.last {
            self.credit = (self.credit + i128::from(now - last) * tokens).min(full);
        }
        self.last = Some(now);
        let had = self.credit >= i128::from(self.limit.per.0);
        self.credit -= i128::from(self.limit.per.0);
        if self.credit >= 0 {
            return (now, had);
        }
        let debt = -self.credit;
        let wait = (debt + tokens - 1) / tokens;
        (now + i64::try_from(wait).unwrap(), had)
    }
}

fn limits() -> impl Strategy<Value = RateLimit> {
    (1u32..50, prop_oneof![Just(1000i64), 1i64..200], 1u32..40)
        .prop_map(|(tokens, per, burst)| RateLimit::new(tokens, Duration(per), burst).unwrap())
}

/// Ask instants: non-decreasing, with bursts (gap 0) and pauses.
fn asks() -> impl Strategy<Value = Vec<i64>> {
    prop::collection::vec(
        prop_oneof![3 => Just(0i64), 2 => 0i64..100, 1 => 0i64..3000],
        1..120,
    )
    .prop_map(|gaps| {
        gaps.iter()
            .scan(0i64, |t, g| {
                *t += g;
                Some(*t)
            })
            .collect()
    })
}

fn sends(limit: RateLimit, asks: &[i64]) -> Vec<i64> {
    let mut bucket = Bucket::new(limit);
    asks.iter().map(|t| bucket.reserve(Time(*t)).0).collect()
}

proptest! {
    /// Never more than `burst + qps·t` requests in any window of length `t`.
    #[test]
    fn no_window_holds_more_than_the_bucket_allows(limit in limits(), asks in asks()) {
        let sent = sends(limit, &asks);
        for i in 0..sent.len() {
            for j in i..sent.len() {
                let span = Duration(sent[j] - sent[i]);
                let count = u64::try_from(j - i + 1).unwrap();
                prop_assert!(count <= limit.most_within(span),
                    "{count} requests within {span:?} under {limit}");
            }
        }
    }

    /// The bucket is `x/time/rate`'s: the same send instants, and a request waits exactly
    /// when no token is left.
    #[test]
    fn it_is_the_go_rate_limiter(limit in limits(), asks in asks()) {
        let mut bucket = Bucket::new(limit);
        let mut reference = Reference::new(limit);
        for t in asks {
            let had = bucket.has_token(Time(t));
            let at = bucket.reserve(Time(t));
            let (expected, token_left) = reference.reserve(t);
            prop_assert_eq!(at, Time(expected));
            prop_assert_eq!(had, token_left);
            prop_assert_eq!(at > Time(t), !token_left, "delayed only when the bucket is empty");
            prop_assert!(at >= Time(t));
        }
    }
}

#[test]
fn a_storm_drains_the_burst_then_goes_at_the_rate() {
    let limit = RateLimit::qps(20, 30).unwrap();
    let sent = sends(limit, &[0; 1000]);
    assert!(sent[..30].iter().all(|t| *t == 0));
    assert_eq!(sent[30], 50);
    assert_eq!(sent[31], 100);
    // 970 requests after the burst at 20 per second: the last one 48.5 s in.
    assert_eq!(sent[999], 48_500);
}

#[test]
fn an_idle_bucket_refills_up_to_its_burst() {
    let mut bucket = Bucket::new(RateLimit::qps(2, 2).unwrap());
    assert_eq!(bucket.reserve(Time(0)), Time(0));
    assert_eq!(bucket.reserve(Time(0)), Time(0));
    assert_eq!(bucket.reserve(Time(0)), Time(500));
    // Long idle: two tokens again, not more.
    assert_eq!(bucket.reserve(Time(10_000)), Time(10_000));
    assert_eq!(bucket.reserve(Time(10_000)), Time(10_000));
    assert_eq!(bucket.reserve(Time(10_000)), Time(10_500));
}

#[test]
fn a_rate_limit_needs_positive_figures() {
    assert!(RateLimit::qps(0, 30).is_none());
    assert!(RateLimit::qps(20, 0).is_none());
    assert!(RateLimit::new(1, Duration(0), 1).is_none());
    assert_eq!(
        RateLimit::qps(20, 30).unwrap().to_string(),
        "qps 20, burst 30"
    );
}

#[test]
fn the_window_bound_is_exact_for_whole_intervals() {
    let limit = RateLimit::qps(20, 30).unwrap();
    assert_eq!(limit.most_within(Duration(0)), 30);
    assert_eq!(limit.most_within(Duration(49)), 30);
    assert_eq!(limit.most_within(Duration(50)), 31);
    assert_eq!(limit.most_within(Duration(1000)), 50);
}

#[test]
fn a_rate_limit_keeps_its_figures() {
    let limit = RateLimit::new(3, Duration(70), 4).unwrap();
    assert_eq!(
        (limit.tokens(), limit.per(), limit.burst()),
        (3, Duration(70), 4)
    );
    assert_eq!(Bucket::new(limit).limit(), limit);
    assert_eq!(limit.to_string(), "3 per 70 ms, burst 4");
}

/// Instants at the ends of the clock saturate instead of wrapping: a token due before the
/// first instant is there at once, one due after the last never comes earlier than the last.
#[test]
fn token_instants_saturate_at_the_ends_of_the_clock() {
    let mut early = Bucket::new(RateLimit::new(1, Duration(1000), 3).unwrap());
    assert_eq!(early.reserve(Time(i64::MIN)), Time(i64::MIN));
    assert_eq!(early.earliest(Time(i64::MIN)), Time(i64::MIN));
    let mut late = Bucket::new(RateLimit::new(1, Duration(1000), 1).unwrap());
    assert_eq!(late.reserve(Time(i64::MAX)), Time(i64::MAX));
    assert_eq!(late.earliest(Time(0)), Time(i64::MAX));
}
