//! The deterministic schedule mode's gate: one turn is released at a time, and only the runtime
//! thread whose turn it is may go (a dispatcher or worker for its step, the timer thread for a
//! work's step, an informer delivery or an API answer). The replay runner releases a turn, waits
//! until it is finished, checks the runtime against the model and releases the next. The gate
//! orders what the runtime does; every step still runs through the core. Spec: RT-SCHED-1.
//!
//! It uses the standard library's locks even under the `shuttle` feature: the shuttle tests
//! never run a schedule.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use taintcheck_model::check::replay::Turn;

/// Cheap to clone; every clone is the same gate.
#[derive(Clone, Default)]
pub struct Gate {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Default)]
struct State {
    /// The released turn, until the thread that takes it finishes it.
    head: Option<Turn>,
    /// The controller incarnation: a restart moves to the next, and what an older incarnation
    /// armed never fires (its turns are not the path's).
    epoch: u32,
    /// Why the runtime could not take the released turn.
    failed: Option<String>,
    closed: bool,
}

impl Gate {
    pub fn new() -> Gate {
        Gate::default()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.inner
            .state
            .lock()
            .expect("a runtime thread panicked while holding the gate")
    }

    /// The current controller incarnation.
    pub fn epoch(&self) -> u32 {
        self.lock().epoch
    }

    /// A restart: what is armed from now on belongs to the next incarnation.
    pub(crate) fn next_epoch(&self) {
        self.lock().epoch += 1;
    }

    /// Blocks until the released turn is one `pick` takes (returning what it returns), or the
    /// gate closes or `halted` says the caller's incarnation stopped (`None`).
    pub(crate) fn wait_turn<T>(
        &self,
        halted: &dyn Fn() -> bool,
        pick: impl Fn(&Turn) -> Option<T>,
    ) -> Option<T> {
        let mut s = self.lock();
        loop {
            if s.closed || halted() {
                return None;
            }
            if let Some(taken) = s.head.as_ref().and_then(&pick) {
                return Some(taken);
            }
            s = self
                .inner
                .changed
                .wait(s)
                .expect("a runtime thread panicked while holding the gate");
        }
    }

    /// The released turn is done.
    pub(crate) fn finish(&self) {
        self.lock().head = None;
        self.inner.changed.notify_all();
    }

    /// The released turn cannot be taken: the runtime diverged from the path.
    pub(crate) fn fail(&self, why: String) {
        let mut s = self.lock();
        s.head = None;
        s.failed.get_or_insert(why);
        self.inner.changed.notify_all();
    }

    /// Wakes every waiting thread (an incarnation stopping).
    pub(crate) fn poke(&self) {
        let _s = self.lock();
        self.inner.changed.notify_all();
    }

    /// Releases `turn` and waits until it is done; an error says why it was not, or that no
    /// thread took it within `patience`.
    pub(crate) fn run_turn(&self, turn: Turn, patience: Duration) -> Result<(), String> {
        let deadline = Instant::now() + patience;
        let mut s = self.lock();
        s.head = Some(turn);
        self.inner.changed.notify_all();
        while s.head.is_some() && s.failed.is_none() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                let turn = s.head.take();
                return Err(format!("no runtime thread took {turn:?}"));
            }
            s = self
                .inner
                .changed
                .wait_timeout(s, left)
                .expect("a runtime thread panicked while holding the gate")
                .0;
        }
        s.failed.take().map_or(Ok(()), Err)
    }

    /// Ends the schedule: every waiting thread returns.
    pub(crate) fn close(&self) {
        self.lock().closed = true;
        self.inner.changed.notify_all();
    }
}
