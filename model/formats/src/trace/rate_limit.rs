//! The header's client rate limit (TRACE-THROTTLE): the `qps` and `burst` the writer's
//! controller client was throttled with (`--kube-api-qps`, `--kube-api-burst`), so that
//! `conform` judges the trace against the bucket it ran under without being told again.

use taintcheck_core::throttle::RateLimit;
use taintcheck_core::time::Duration;

/// The header's `qps` and `burst` for `limit`: both absent without one, and for a limit not
/// counted per second (the model's own time unit), which a trace's millisecond clock cannot
/// state as `qps`.
pub fn fields(limit: Option<RateLimit>) -> (Option<u32>, Option<u32>) {
    match limit {
        Some(l) if l.per() == Duration(1000) => (Some(l.tokens()), Some(l.burst())),
        _ => (None, None),
    }
}

/// The rate limit a header's `qps` and `burst` state: both or neither, each at least 1
/// (TRACE-THROTTLE); `Err` names the field and says what is wrong.
pub fn read(qps: Option<u32>, burst: Option<u32>) -> Result<Option<RateLimit>, String> {
    match (qps, burst) {
        (None, None) => Ok(None),
        (Some(_), None) => Err("burst: Required value: a header with qps has burst too".into()),
        (None, Some(_)) => Err("qps: Required value: a header with burst has qps too".into()),
        (Some(0), _) => Err("qps: Invalid value: 0: must be at least 1".into()),
        (_, Some(0)) => Err("burst: Invalid value: 0: must be at least 1".into()),
        (Some(q), Some(b)) => Ok(RateLimit::qps(q, b)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_per_second_limit_round_trips_through_the_fields() {
        let limit = RateLimit::qps(20, 30);
        let (qps, burst) = fields(limit);
        assert_eq!((qps, burst), (Some(20), Some(30)));
        assert_eq!(read(qps, burst), Ok(limit));
        assert_eq!(fields(None), (None, None));
        assert_eq!(read(None, None), Ok(None));
    }

    #[test]
    fn a_limit_per_another_unit_is_not_written_as_qps() {
        let model_time = RateLimit::new(2, Duration(10), 1);
        assert_eq!(fields(model_time), (None, None));
    }

    #[test]
    fn half_a_limit_or_a_zero_is_refused_naming_the_field() {
        assert!(read(Some(5), None)
            .unwrap_err()
            .starts_with("burst: Required value"));
        assert!(read(None, Some(3))
            .unwrap_err()
            .starts_with("qps: Required value"));
        assert!(read(Some(0), Some(3))
            .unwrap_err()
            .starts_with("qps: Invalid value: 0"));
        assert!(read(Some(5), Some(0))
            .unwrap_err()
            .starts_with("burst: Invalid value: 0"));
    }
}
