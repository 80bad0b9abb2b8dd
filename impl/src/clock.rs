//! Clocks. The core never reads one: the runtime reads a clock and passes `now` in.
//!
//! * [`VirtualClock`]: deterministic. Time stands still while any runtime thread has work; when
//!   every thread is idle, the timer service jumps it to the next deadline (as tokio's paused
//!   time and quinn's test `Pair` do). Scenario runs, tests and the scale benchmark use it.
//! * [`SystemClock`]: milliseconds of a monotonic clock since the runtime started.

use crate::sync::{AtomicI64, Ordering};
use taintcheck_core::time::Time;

/// A source of `now`.
pub trait Clock: Send + Sync + 'static {
    fn now(&self) -> Time;

    /// The virtual clock behind this one, if it is virtual: the timer service then advances
    /// it instead of sleeping.
    fn as_virtual(&self) -> Option<&VirtualClock> {
        None
    }
}

/// Virtual time, advanced only by the timer service. Spec: RT-CLOCK-1.
#[derive(Debug)]
pub struct VirtualClock {
    now: AtomicI64,
    /// Whether the timer service runs one callback at a time, letting the whole runtime go
    /// idle in between. Serial runs are deterministic (one causal chain at a time); batched runs
    /// fire every callback due at an instant at once, which is what a storm needs.
    serial: bool,
}

impl VirtualClock {
    /// A deterministic clock starting at `start`.
    pub fn serial(start: Time) -> VirtualClock {
        VirtualClock {
            now: AtomicI64::new(start.millis()),
            serial: true,
        }
    }

    /// A clock whose due callbacks fire together (see [`VirtualClock::is_serial`]).
    pub fn batched(start: Time) -> VirtualClock {
        VirtualClock {
            now: AtomicI64::new(start.millis()),
            serial: false,
        }
    }

    pub fn is_serial(&self) -> bool {
        self.serial
    }

    /// Moves time forward to `t` (never backwards).
    pub(crate) fn advance_to(&self, t: Time) {
        self.now.fetch_max(t.millis(), Ordering::SeqCst);
    }
}

impl Clock for VirtualClock {
    fn now(&self) -> Time {
        Time(self.now.load(Ordering::SeqCst))
    }

    fn as_virtual(&self) -> Option<&VirtualClock> {
        Some(self)
    }
}

/// Wall-clock time: milliseconds since the clock was created. Spec: RT-CLOCK-2.
#[derive(Debug)]
pub struct SystemClock {
    origin: std::time::Instant,
}

impl SystemClock {
    pub fn new() -> SystemClock {
        SystemClock {
            origin: std::time::Instant::now(),
        }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        SystemClock::new()
    }
}

impl Clock for SystemClock {
    fn now(&self) -> Time {
        Time(self.origin.elapsed().as_millis() as i64)
    }
}
