//! Injected execution time (RT-JIT-1): a runtime option, off by default, that makes the runtime
//! behave like an implementation on a real clock, for the oracle's independent-implementation
//! test (specs/oracle.md, ORACLE-11). Each work step the core offers runs up to `max` after it
//! became enabled (a goroutine waiting for the Go scheduler), and each event is recorded up to
//! `max` after its step emitted it (upstream's recorder hands events to a broadcaster goroutine).
//! It changes when the runtime performs what the core asked for, never what the core decides.
//!
//! The delays come from a seeded generator shared by the incarnations of one run, so on the
//! serial virtual clock a seed names a run.

use crate::sync::{Arc, AtomicU64, Ordering};
use taintcheck_core::time::Duration;

/// Delays of up to `max`, drawn from a seeded generator; [`Jitter::none`] draws nothing.
#[derive(Clone, Debug)]
pub struct Jitter {
    max: Duration,
    state: Arc<AtomicU64>,
}

impl Jitter {
    /// No injected delay: work steps run and events are recorded at the instant they happen.
    pub fn none() -> Jitter {
        Jitter::up_to(Duration::ZERO, 0)
    }

    /// Delays uniform in `[0, max]` milliseconds, from `seed`.
    pub fn up_to(max: Duration, seed: u64) -> Jitter {
        Jitter {
            max: Duration(max.0.max(0)),
            state: Arc::new(AtomicU64::new(seed)),
        }
    }

    /// Whether any delay is injected.
    pub fn is_on(&self) -> bool {
        self.max.0 > 0
    }

    /// The next delay (splitmix64 over the shared state).
    pub(crate) fn delay(&self) -> Duration {
        if !self.is_on() {
            return Duration::ZERO;
        }
        let mut z = self
            .state
            .fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed)
            .wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        // `max` is positive here, so the modulus is at least 2 and the result fits an i64.
        Duration((z % (self.max.0 as u64 + 1)) as i64)
    }
}

impl Default for Jitter {
    fn default() -> Jitter {
        Jitter::none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_stay_within_the_bound_and_vary() {
        let j = Jitter::up_to(Duration(7), 42);
        let delays: Vec<i64> = (0..200).map(|_| j.delay().0).collect();
        assert!(delays.iter().all(|d| (0..=7).contains(d)), "{delays:?}");
        assert!(delays.contains(&0) && delays.contains(&7), "{delays:?}");
        assert!(Jitter::none().delay() == Duration::ZERO && !Jitter::none().is_on());
    }

    #[test]
    fn a_seed_names_the_delays() {
        let draw = |seed| {
            let j = Jitter::up_to(Duration(100), seed);
            (0..20).map(|_| j.delay().0).collect::<Vec<_>>()
        };
        assert_eq!(draw(1), draw(1));
        assert_ne!(draw(1), draw(2));
    }
}
