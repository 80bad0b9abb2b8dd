//! The timer service: one thread that fires callbacks at their instants (a `BTreeMap` heap keyed
//! by `(fire_at, sequence)`, so equal instants fire in arming order).
//!
//! Everything that happens *later* in the runtime goes through it: the core's eviction and
//! backoff timers (`Effect::ArmTimer`), informer deliveries after their lag, API answers after
//! their latency, and the scenario's own operations. It also keeps the runtime's activity count
//! (how many items and callbacks are in flight), which is how a [`VirtualClock`] knows that
//! every thread is idle and time may jump. Spec: RT-TIMER-1..RT-TIMER-3.
//!
//! Under a deterministic schedule ([`TimerService::scheduled`]) callbacks are armed with the
//! turn they take ([`TimerService::arm_labelled`]) and fire when the schedule releases that
//! turn, whatever their instant (RT-SCHED-1).
//!
//! [`VirtualClock`]: crate::clock::VirtualClock

use crate::clock::Clock;
use crate::schedule::Gate;
use crate::sync::{lock, wait, Arc, Condvar, Mutex};
use std::collections::BTreeMap;
use taintcheck_core::time::Time;
use taintcheck_core::Actor;
use taintcheck_model::check::replay::Turn;

/// A callback; it may arm further timers.
pub type Callback = Box<dyn FnOnce() + Send>;

/// An armed timer, for [`TimerService::cancel`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TimerHandle {
    fire_at: Time,
    seq: u64,
    /// On the system clock: armed when its instant had come (a zero delay: an answer without
    /// latency, an eviction at once), so it fires without waiting for the next millisecond
    /// (RT-CLOCK-2). After `seq` in the order, so it never reorders timers.
    due_when_armed: bool,
}

impl TimerHandle {
    pub fn fire_at(&self) -> Time {
        self.fire_at
    }
}

struct State {
    armed: BTreeMap<TimerHandle, Callback>,
    /// Under a schedule: the turn each labelled callback takes, with the controller
    /// incarnation that armed it.
    labels: BTreeMap<TimerHandle, (u32, Turn)>,
    next_seq: u64,
    /// Items and callbacks in flight (RT-TIMER-2): while positive, virtual time stands still.
    busy: usize,
    stopped: bool,
    /// Virtual clock only: nothing in flight and nothing armed; the run is over.
    exhausted: bool,
    /// Whether the timer thread waits on `changed`: only then is it notified, a notification
    /// being a system call even when nobody waits.
    sleeping: bool,
}

struct Shared {
    state: Mutex<State>,
    /// Wakes the timer thread.
    changed: Condvar,
    /// Wakes [`TimerService::wait_finished`]: stopped or exhausted.
    finished: Condvar,
    clock: Arc<dyn Clock>,
    gate: Option<Gate>,
}

/// Cheap to clone; every clone is the same service.
#[derive(Clone)]
pub struct TimerService {
    shared: Arc<Shared>,
}

impl TimerService {
    pub fn new(clock: Arc<dyn Clock>) -> TimerService {
        TimerService::with_gate(clock, None)
    }

    /// A service whose labelled callbacks fire when `gate` releases their turn (RT-SCHED-1).
    pub fn scheduled(clock: Arc<dyn Clock>, gate: Gate) -> TimerService {
        TimerService::with_gate(clock, Some(gate))
    }

    fn with_gate(clock: Arc<dyn Clock>, gate: Option<Gate>) -> TimerService {
        TimerService {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    armed: BTreeMap::new(),
                    labels: BTreeMap::new(),
                    next_seq: 0,
                    busy: 0,
                    stopped: false,
                    exhausted: false,
                    sleeping: false,
                }),
                changed: Condvar::new(),
                finished: Condvar::new(),
                clock,
                gate,
            }),
        }
    }

    pub fn now(&self) -> Time {
        self.shared.clock.now()
    }

    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.shared.clock
    }

    /// The schedule's gate, in the deterministic schedule mode.
    pub fn gate(&self) -> Option<&Gate> {
        self.shared.gate.as_ref()
    }

    /// [`TimerService::arm`] for a callback that takes `turn` of a schedule: under one it fires
    /// when the schedule releases that turn, otherwise at `fire_at`.
    pub fn arm_labelled(&self, fire_at: Time, turn: Turn, callback: Callback) -> TimerHandle {
        let handle = self.arm(fire_at, callback);
        if let Some(gate) = &self.shared.gate {
            let epoch = gate.epoch();
            lock(&self.shared.state)
                .labels
                .insert(handle, (epoch, turn));
        }
        handle
    }

    /// Arms `callback` to run on the timer thread at `fire_at` (at once if already past).
    pub fn arm(&self, fire_at: Time, callback: Callback) -> TimerHandle {
        let mut s = lock(&self.shared.state);
        let clock = &self.shared.clock;
        let handle = TimerHandle {
            fire_at,
            seq: s.next_seq,
            due_when_armed: clock.as_virtual().is_none() && fire_at <= clock.now(),
        };
        s.next_seq += 1;
        s.armed.insert(handle, callback);
        s.exhausted = false;
        // The timer thread only looks at the earliest timer: a later one changes nothing for it,
        // and waking it anyway cost a context switch per armed eviction timer in the storm.
        if s.sleeping
            && s.armed
                .first_key_value()
                .is_some_and(|(first, _)| *first == handle)
        {
            self.shared.changed.notify_one();
        }
        handle
    }

    /// Disarms a timer; false if it already fired or was cancelled.
    pub fn cancel(&self, handle: TimerHandle) -> bool {
        let mut s = lock(&self.shared.state);
        s.labels.remove(&handle);
        s.armed.remove(&handle).is_some()
    }

    /// Counts `n` more items in flight (RT-TIMER-2). The producer counts an item *before* making
    /// it visible, the consumer discounts it after handling it, so the count never touches zero
    /// while work is being handed on.
    pub fn enter(&self, n: usize) {
        if n > 0 {
            lock(&self.shared.state).busy += n;
        }
    }

    /// Discounts `n` items; wakes the timer thread when nothing is left in flight.
    pub fn exit(&self, n: usize) {
        if n == 0 {
            return;
        }
        let mut s = lock(&self.shared.state);
        s.busy = s
            .busy
            .checked_sub(n)
            .expect("activity count went negative: an item was discounted twice");
        if s.busy == 0 && s.sleeping {
            self.shared.changed.notify_one();
        }
    }

    /// Stops the timer thread; armed callbacks never run.
    pub fn stop(&self) {
        let mut s = lock(&self.shared.state);
        s.stopped = true;
        s.armed.clear();
        s.labels.clear();
        self.shared.changed.notify_all();
        self.shared.finished.notify_all();
    }

    /// Blocks until the service is stopped or, on a virtual clock, exhausted.
    pub fn wait_finished(&self) {
        let mut s = lock(&self.shared.state);
        while !s.stopped && !s.exhausted {
            s = wait(&self.shared.finished, s);
        }
    }

    /// The timer thread's loop, run by one thread per service; returns once stopped. Spec: RT-TIMER-1 (due callbacks fire in
    /// `(fire_at, arming order)`), RT-TIMER-3 (a virtual clock jumps only when idle).
    pub fn run(&self) {
        if let Some(gate) = &self.shared.gate {
            return self.run_scheduled(gate);
        }
        let shared = &*self.shared;
        let mut s = lock(&shared.state);
        loop {
            if s.stopped {
                return;
            }
            let next = s.armed.keys().next().copied();
            let due = match (shared.clock.as_virtual(), next) {
                (Some(virt), Some(h)) => {
                    if h.fire_at <= virt.now() && (!virt.is_serial() || s.busy == 0) {
                        Some(h)
                    } else if s.busy == 0 {
                        virt.advance_to(h.fire_at);
                        Some(h)
                    } else {
                        None
                    }
                }
                (Some(_), None) => {
                    if s.busy == 0 && !s.exhausted {
                        s.exhausted = true;
                        shared.finished.notify_all();
                    }
                    None
                }
                // Whole milliseconds: an instant read at `t` may have been up to 1 ms later than
                // `t`, so a deadline measured from it is only safely past once `now` exceeds it
                // (RT-CLOCK-2); at `now == fire_at` a timer could fire before its span elapsed.
                // A timer armed when its instant had come measures no span: it is due at once,
                // even behind one of the same instant that waits for the next millisecond.
                (None, Some(_)) => {
                    let now = shared.clock.now();
                    s.armed
                        .keys()
                        .take_while(|h| h.fire_at <= now)
                        .find(|h| h.due_when_armed || h.fire_at < now)
                        .copied()
                }
                (None, None) => None,
            };
            if let Some(h) = due {
                let callback = match next == Some(h) {
                    true => s.armed.pop_first().map(|(_, c)| c),
                    false => s.armed.remove(&h),
                }
                .expect("a due timer is armed");
                s.busy += 1;
                drop(s);
                callback();
                s = lock(&shared.state);
                s.busy -= 1;
                continue;
            }
            s.sleeping = true;
            s = match (shared.clock.as_virtual(), next) {
                (None, Some(h)) => {
                    let sleep = system_sleep(&*shared.clock, h.fire_at);
                    shared
                        .changed
                        .wait_timeout(s, sleep)
                        .expect("a runtime thread panicked while holding this lock")
                        .0
                }
                _ => wait(&shared.changed, s),
            };
            s.sleeping = false;
        }
    }
}

impl TimerService {
    /// The timer thread under a schedule (RT-SCHED-1): fires the callback armed for each
    /// released turn that is the timer thread's, by the current incarnation; returns when the
    /// schedule ends.
    fn run_scheduled(&self, gate: &Gate) {
        let ours = |turn: &Turn| match turn {
            Turn::Step(step) => matches!(step.actor(), Actor::Work(_)).then(|| turn.clone()),
            Turn::Answer(_) | Turn::Deliver(_) => Some(turn.clone()),
            Turn::Tick(_) | Turn::Env(_) => None,
        };
        while let Some(turn) = gate.wait_turn(&|| false, ours) {
            let label = (gate.epoch(), turn);
            let callback = {
                let mut s = lock(&self.shared.state);
                let handle = s.labels.iter().find(|(_, l)| **l == label).map(|(h, _)| *h);
                handle.and_then(|h| {
                    s.labels.remove(&h);
                    s.armed.remove(&h)
                })
            };
            match callback {
                Some(callback) => {
                    callback();
                    gate.finish();
                }
                None => gate.fail(format!("the runtime has nothing armed for {:?}", label.1)),
            }
        }
    }
}

/// How long the timer thread sleeps for a deadline on a real clock.
fn system_sleep(clock: &dyn Clock, fire_at: Time) -> std::time::Duration {
    let ms = (fire_at.millis() + 1 - clock.now().millis()).max(1);
    std::time::Duration::from_millis(ms as u64)
}

#[cfg(all(test, not(feature = "shuttle")))]
mod tests {
    use super::*;
    use crate::clock::VirtualClock;
    use crate::sync::spawn;

    fn record(
        service: &TimerService,
        log: &Arc<Mutex<Vec<(i64, &'static str)>>>,
        at: i64,
        what: &'static str,
    ) -> TimerHandle {
        let (log, s2) = (log.clone(), service.clone());
        service.arm(
            Time(at),
            Box::new(move || lock(&log).push((s2.now().millis(), what))),
        )
    }

    #[test]
    fn virtual_time_jumps_in_deadline_then_arming_order_and_cancel_holds() {
        let service = TimerService::new(Arc::new(VirtualClock::serial(Time::ZERO)));
        let log = Arc::new(Mutex::new(Vec::new()));
        record(&service, &log, 300, "b");
        record(&service, &log, 100, "a");
        record(&service, &log, 300, "c");
        let cancelled = record(&service, &log, 200, "x");
        assert!(service.cancel(cancelled));
        assert!(!service.cancel(cancelled));
        let runner = service.clone();
        let thread = spawn("timers".into(), move || runner.run());
        service.wait_finished();
        service.stop();
        thread.join().unwrap();
        assert_eq!(*lock(&log), vec![(100, "a"), (300, "b"), (300, "c")]);
    }

    #[test]
    fn virtual_time_waits_while_work_is_in_flight() {
        let service = TimerService::new(Arc::new(VirtualClock::serial(Time::ZERO)));
        let log = Arc::new(Mutex::new(Vec::new()));
        service.enter(1);
        record(&service, &log, 50, "later");
        let runner = service.clone();
        let thread = spawn("timers".into(), move || runner.run());
        // Nothing may fire while one item is in flight, however long we wait.
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(lock(&log).is_empty());
        assert_eq!(service.now(), Time::ZERO);
        service.exit(1);
        service.wait_finished();
        service.stop();
        thread.join().unwrap();
        assert_eq!(*lock(&log), vec![(50, "later")]);
    }

    /// On the system clock a span never ends early: a timer fires once the clock is past its
    /// instant, not at it (RT-CLOCK-2).
    #[test]
    fn a_system_clock_timer_fires_once_past_its_instant() {
        let service = TimerService::new(Arc::new(crate::clock::SystemClock::new()));
        let runner = service.clone();
        let thread = spawn("timers".into(), move || runner.run());
        let log = Arc::new(Mutex::new(Vec::new()));
        let due = service.now().plus(taintcheck_core::time::Duration(3));
        record(&service, &log, due.millis(), "span");
        while lock(&log).is_empty() {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        service.stop();
        thread.join().unwrap();
        let fired = lock(&log)[0].0;
        assert!(fired > due.millis(), "fired at {fired} ms for {due}");
    }

    /// A timer armed when its instant has come measures no span and fires at once: a chain of
    /// 1,000 such hops (an eviction's answers and deliveries without latency) would take at
    /// least a second if each waited for the clock to pass its instant (RT-CLOCK-2).
    #[test]
    fn a_system_clock_timer_armed_when_due_fires_at_once() {
        fn hop(service: TimerService, left: usize, done: Arc<Mutex<Option<Time>>>) {
            let now = service.now();
            if left == 0 {
                *lock(&done) = Some(now);
                return;
            }
            let next = service.clone();
            service.arm(now, Box::new(move || hop(next, left - 1, done)));
        }
        let service = TimerService::new(Arc::new(crate::clock::SystemClock::new()));
        let runner = service.clone();
        let thread = spawn("timers".into(), move || runner.run());
        let done = Arc::new(Mutex::new(None));
        let start = service.now();
        hop(service.clone(), 1_000, done.clone());
        let end = loop {
            if let Some(end) = *lock(&done) {
                break end;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        };
        service.stop();
        thread.join().unwrap();
        assert!(
            end.millis() - start.millis() < 1_000,
            "1,000 hops took {} ms",
            end.millis() - start.millis()
        );
    }
}
