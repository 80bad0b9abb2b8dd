//! Time as the core sees it: integer milliseconds passed in by the caller.
//!
//! The core never reads a clock. The model advances a bounded discrete clock, the runtime reads a
//! virtual or system clock, the oracle takes trace timestamps; all three hand the core a [`Time`].

use serde::{Deserialize, Serialize};
use std::fmt;

/// An instant, in milliseconds since an origin chosen by the caller (scenario start, Unix epoch).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Time(pub i64);

impl Time {
    /// The origin.
    pub const ZERO: Time = Time(0);

    /// `self + d`, saturating: deadlines beyond the representable range never fire.
    pub fn plus(self, d: Duration) -> Time {
        Time(self.0.saturating_add(d.0))
    }

    /// Milliseconds since the origin.
    pub fn millis(self) -> i64 {
        self.0
    }
}

impl fmt::Display for Time {
    /// `12.345s`, the way timelines and oracle messages print instants.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let ms = self.0.unsigned_abs();
        write!(f, "{sign}{}.{:03}s", ms / 1000, ms % 1000)
    }
}

/// A non-negative span of time in milliseconds.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Duration(pub i64);

impl Duration {
    /// No time at all.
    pub const ZERO: Duration = Duration(0);

    /// `s` seconds, saturating (`tolerationSeconds` is unbounded).
    pub fn from_secs(s: i64) -> Duration {
        Duration(s.saturating_mul(1000))
    }

    /// The span in milliseconds.
    pub fn millis(self) -> i64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_is_seconds_with_millis() {
        assert_eq!(Time(12_345).to_string(), "12.345s");
        assert_eq!(Time(7).to_string(), "0.007s");
        assert_eq!(Time(-1500).to_string(), "-1.500s");
        assert_eq!(Time::ZERO.to_string(), "0.000s", "no sign at the origin");
    }

    #[test]
    fn millis_are_the_raw_figures() {
        assert_eq!((Time(-2).millis(), Time(2500).millis()), (-2, 2500));
        assert_eq!((Duration(-2).millis(), Duration(2500).millis()), (-2, 2500));
        assert_eq!(
            Duration::from_secs(i64::MAX),
            Duration(i64::MAX),
            "saturates"
        );
    }

    #[test]
    fn plus_saturates() {
        assert_eq!(Time(i64::MAX - 1).plus(Duration(10)), Time(i64::MAX));
        assert_eq!(Time(1000).plus(Duration::from_secs(2)), Time(3000));
    }
}
