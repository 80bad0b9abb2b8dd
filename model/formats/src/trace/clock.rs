//! How a trace's instants are shown to people: the one place that renders a [`Time`] of a trace.
//!
//! A trace's `t` is milliseconds from an origin its writer chose (TRACE-2). When the header
//! carries that origin as a wall-clock instant (`start`, TRACE-8: every imported recording),
//! messages, `--json` verdicts and `--until` speak RFC 3339 (`2025-11-25T08:03:00Z`); otherwise
//! they speak offsets (`300.000s`), as the runtime's scenario clock does.

use crate::yaml::parse_duration;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};
use std::fmt;
use taintcheck_core::time::Time;

/// The wall-clock instant a trace's `t = 0` stands for (the header's `start`, RFC 3339).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Start(pub Timestamp);

impl Start {
    /// The instant `t` of the trace, on the wall clock.
    pub fn instant(self, t: Time) -> Timestamp {
        self.0
            .checked_add(SignedDuration::from_millis(t.millis()))
            .unwrap_or(self.0)
    }

    /// The trace time of a wall-clock instant (milliseconds, truncated).
    pub fn offset(self, at: Timestamp) -> Time {
        let d = at.duration_since(self.0);
        Time(i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
    }
}

/// Renders a trace's instants: offsets, or wall-clock times when the trace has a [`Start`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Clock {
    start: Option<Start>,
}

impl Clock {
    /// A clock for a trace whose header has (or lacks) a `start`.
    pub fn new(start: Option<Start>) -> Clock {
        Clock { start }
    }

    /// Whether instants are shown on the wall clock.
    pub fn is_wall(self) -> bool {
        self.start.is_some()
    }

    /// The wall-clock origin, if any.
    pub fn start(self) -> Option<Start> {
        self.start
    }

    /// `t` as messages show it: `2025-11-25T08:03:00Z` (milliseconds only when not whole) or
    /// `300.000s`.
    pub fn at(self, t: Time) -> Shown {
        Shown { clock: self, t }
    }

    /// `t` for a JSON report: the RFC 3339 string on a wall clock, else the milliseconds.
    pub fn json(self, t: Time) -> serde_json::Value {
        match self.start {
            Some(start) => serde_json::Value::String(wall(start.instant(t))),
            None => serde_json::Value::from(t.millis()),
        }
    }

    /// An instant a user typed (`--until`): RFC 3339 (needs a wall clock) or a duration from
    /// the trace's origin (`400s`, `5m`, `1.5s`).
    pub fn parse(self, s: &str) -> Result<Time, String> {
        if let Some(d) = parse_duration(s) {
            return Ok(Time(d.millis()));
        }
        match (s.parse::<Timestamp>(), self.start) {
            (Ok(at), Some(start)) => Ok(start.offset(at)),
            (Ok(_), None) => Err(format!(
                "{s:?} is a wall-clock instant, but the trace's header has no `start`: give a \
                 duration from its origin such as 400s"
            )),
            (Err(_), _) => Err(format!(
                "{s:?}: expected an RFC 3339 instant (2025-11-25T08:10:00Z) or a duration from \
                 the trace's origin (400s, 5m, 1.5s)"
            )),
        }
    }
}

/// An instant rendered by a [`Clock`].
#[derive(Clone, Copy, Debug)]
pub struct Shown {
    clock: Clock,
    t: Time,
}

impl fmt::Display for Shown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.clock.start {
            Some(start) => f.write_str(&wall(start.instant(self.t))),
            None => write!(f, "{}", self.t),
        }
    }
}

/// RFC 3339 in UTC, with milliseconds only when the instant is not a whole second.
fn wall(at: Timestamp) -> String {
    if at.subsec_millisecond() == 0 {
        format!("{:.0}", at)
    } else {
        format!("{:.3}", at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start() -> Start {
        Start("2025-11-25T08:00:00Z".parse().unwrap())
    }

    #[test]
    fn wall_clock_shows_rfc3339_and_offsets_without_start() {
        let wall = Clock::new(Some(start()));
        assert_eq!(wall.at(Time(180_000)).to_string(), "2025-11-25T08:03:00Z");
        assert_eq!(wall.at(Time(1_500)).to_string(), "2025-11-25T08:00:01.500Z");
        assert_eq!(
            wall.json(Time(0)),
            serde_json::json!("2025-11-25T08:00:00Z")
        );
        let plain = Clock::default();
        assert_eq!(plain.at(Time(1_500)).to_string(), "1.500s");
        assert_eq!(plain.json(Time(1_500)), serde_json::json!(1500));
    }

    #[test]
    fn until_takes_instants_and_durations() {
        let wall = Clock::new(Some(start()));
        assert_eq!(wall.parse("2025-11-25T08:10:00Z"), Ok(Time(600_000)));
        assert_eq!(wall.parse("400s"), Ok(Time(400_000)));
        assert_eq!(wall.parse("5m"), Ok(Time(300_000)));
        let err = Clock::default().parse("2025-11-25T08:10:00Z").unwrap_err();
        assert!(err.contains("no `start`"), "{err}");
        assert!(wall.parse("tomorrow").unwrap_err().contains("RFC 3339"));
    }
}
