//! The blocking containers around the core's queues: a work queue a dispatcher can block on,
//! and a worker's shard (its bounded node and pod channels). They decide nothing: the queue
//! semantics are the core's `WorkQueue`, the worker's choice is the core's `shards` rule.
//! Every item they hold is counted in the timer service's activity (RT-TIMER-2), so a virtual
//! clock never jumps while an item is on its way. Spec: RT-CTL-1, RT-CTL-2.

use crate::sync::{lock, wait, Condvar, Mutex, MutexGuard};
use crate::timers::TimerService;
use std::collections::VecDeque;
use taintcheck_model::api::NodeName;
use taintcheck_model::core::shards::{drain_first, worker_choices, Pick};
use taintcheck_model::core::{PodItem, WorkQueue};

struct QueueState<T: Ord + Clone> {
    queue: WorkQueue<T>,
    shutdown: bool,
    /// Deterministic runs hand out one key at a time: the next only after `done` (RT-CTL-5).
    one_at_a_time: bool,
    handed_out: bool,
    /// Threads blocked in `get`: a notification with nobody waiting is still a futex system
    /// call, one per item in the storm. Notifications are sent after unlocking, so that the
    /// woken thread does not block again on the lock its waker still holds.
    waiting: usize,
}

/// client-go's queue with its blocking `Get`: the core's [`WorkQueue`] behind a mutex.
pub struct BlockingQueue<T: Ord + Clone> {
    state: Mutex<QueueState<T>>,
    nonempty: Condvar,
    activity: TimerService,
}

impl<T: Ord + Clone> BlockingQueue<T> {
    /// A queue; `one_at_a_time` serialises processing (deterministic runs).
    pub fn new(activity: TimerService, one_at_a_time: bool) -> BlockingQueue<T> {
        BlockingQueue {
            state: Mutex::new(QueueState {
                queue: WorkQueue::new(),
                shutdown: false,
                one_at_a_time,
                handed_out: false,
                waiting: 0,
            }),
            nonempty: Condvar::new(),
            activity,
        }
    }

    /// Upstream `Add` for each item, in order, under one lock acquisition (an informer's batch);
    /// each key that was queued counts as one item in flight.
    pub fn add_all(&self, items: impl IntoIterator<Item = T>) {
        let mut s = lock(&self.state);
        if s.shutdown {
            return;
        }
        let before = s.queue.len();
        for item in items {
            s.queue.add(item);
        }
        let queued = s.queue.len() - before;
        self.activity.enter(queued);
        if queued > 0 && s.waiting > 0 {
            drop(s);
            self.nonempty.notify_all();
        }
    }

    /// Upstream `Get`: blocks until a key is queued; `None` once shut down.
    pub fn get(&self) -> Option<T> {
        let mut s = lock(&self.state);
        loop {
            if s.shutdown {
                return None;
            }
            if !(s.one_at_a_time && s.handed_out) {
                if let Some(item) = s.queue.get() {
                    s.handed_out = true;
                    return Some(item);
                }
            }
            s.waiting += 1;
            s = wait(&self.nonempty, s);
            s.waiting -= 1;
        }
    }

    /// Upstream `Done`; a key added meanwhile is queued again and counted.
    pub fn done(&self, item: &T) {
        let mut s = lock(&self.state);
        let before = s.queue.len();
        s.queue.done(item);
        s.handed_out = false;
        let queued = s.queue.len() - before;
        self.activity.enter(queued);
        // A waiting `Get` can only proceed if a key was queued again or (one at a time) the
        // hand-out slot is free; other wake-ups are wasted context switches.
        if (queued > 0 || s.one_at_a_time) && s.waiting > 0 {
            drop(s);
            self.nonempty.notify_all();
        }
    }

    /// Upstream `ShutDown`; returns how many queued keys were dropped (no longer in flight).
    pub fn shut_down(&self) -> usize {
        let mut s = lock(&self.state);
        s.shutdown = true;
        let mut dropped = 0;
        while s.queue.get().is_some() {
            dropped += 1;
        }
        self.nonempty.notify_all();
        dropped
    }
}

/// An item a worker received.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Received {
    Node(NodeName),
    Pod(PodItem),
}

struct ShardState {
    nodes: VecDeque<NodeName>,
    pods: VecDeque<PodItem>,
    closed: bool,
    /// The worker is blocked in `receive`; dispatchers blocked on a full channel. Only they
    /// are notified (see `QueueState::waiting`).
    worker_waiting: bool,
    senders_waiting: usize,
}

impl ShardState {
    /// Blocks a dispatcher on `space` until the channel `full` reports room or the shard closes.
    fn wait_for_space<'a>(
        mut s: MutexGuard<'a, ShardState>,
        space: &Condvar,
        full: impl Fn(&ShardState) -> bool,
    ) -> MutexGuard<'a, ShardState> {
        while !s.closed && full(&s) {
            s.senders_waiting += 1;
            s = wait(space, s);
            s.senders_waiting -= 1;
        }
        s
    }
}

/// One worker's two bounded channels (upstream `nodeUpdateChannels[i]`, capacity 10, and
/// `podUpdateChannels[i]`, capacity 1).
pub struct Shard {
    state: Mutex<ShardState>,
    node_capacity: usize,
    pod_capacity: usize,
    /// Signalled when an item arrives or the shard closes (the worker waits on it).
    ready: Condvar,
    /// Signalled when an item leaves (the dispatchers wait on it).
    space: Condvar,
}

impl Shard {
    pub fn new(node_capacity: usize, pod_capacity: usize) -> Shard {
        Shard {
            state: Mutex::new(ShardState {
                nodes: VecDeque::new(),
                pods: VecDeque::new(),
                closed: false,
                worker_waiting: false,
                senders_waiting: 0,
            }),
            node_capacity: node_capacity.max(1),
            pod_capacity: pod_capacity.max(1),
            ready: Condvar::new(),
            space: Condvar::new(),
        }
    }

    /// The node dispatcher's blocking send; false if the shard closed first.
    pub fn send_node(&self, name: NodeName) -> bool {
        let s = lock(&self.state);
        let mut s =
            ShardState::wait_for_space(s, &self.space, |s| s.nodes.len() >= self.node_capacity);
        if s.closed {
            return false;
        }
        s.nodes.push_back(name);
        if s.worker_waiting {
            drop(s);
            self.ready.notify_all();
        }
        true
    }

    /// The pod dispatcher's blocking send; false if the shard closed first.
    pub fn send_pod(&self, item: PodItem) -> bool {
        let s = lock(&self.state);
        let mut s =
            ShardState::wait_for_space(s, &self.space, |s| s.pods.len() >= self.pod_capacity);
        if s.closed {
            return false;
        }
        s.pods.push_back(item);
        if s.worker_waiting {
            drop(s);
            self.ready.notify_all();
        }
        true
    }

    /// The worker's `select`: blocks until a channel holds an item; `None` once closed. Which
    /// channel it takes when both are ready is the core's choice (its first offer).
    pub fn receive(&self) -> Option<Received> {
        let mut s = lock(&self.state);
        loop {
            if s.closed {
                return None;
            }
            let pick = worker_choices(!s.nodes.is_empty(), !s.pods.is_empty()).next();
            let received = match pick {
                Some(Pick::Node) => s.nodes.pop_front().map(Received::Node),
                Some(Pick::Pod) => s.pods.pop_front().map(Received::Pod),
                None => None,
            };
            if let Some(r) = received {
                if s.senders_waiting > 0 {
                    drop(s);
                    self.space.notify_all();
                }
                return Some(r);
            }
            s.worker_waiting = true;
            s = wait(&self.ready, s);
            s.worker_waiting = false;
        }
    }

    /// While holding a pod item: the next buffered node item to handle first, if the core's
    /// drain rule says so (upstream drains the node channel without blocking).
    pub fn next_to_drain(&self) -> Option<NodeName> {
        let mut s = lock(&self.state);
        if s.closed {
            return None;
        }
        match drain_first(s.nodes.len()) {
            Pick::Node => {
                let name = s.nodes.pop_front();
                if s.senders_waiting > 0 {
                    drop(s);
                    self.space.notify_all();
                }
                name
            }
            Pick::Pod => None,
        }
    }

    /// The node items buffered right now (for the probe).
    pub fn buffered_nodes(&self) -> Vec<NodeName> {
        lock(&self.state).nodes.iter().cloned().collect()
    }

    /// Closes both channels; returns how many buffered items were dropped.
    pub fn close(&self) -> usize {
        let mut s = lock(&self.state);
        s.closed = true;
        let dropped = s.nodes.len() + s.pods.len();
        s.nodes.clear();
        s.pods.clear();
        self.ready.notify_all();
        self.space.notify_all();
        dropped
    }
}
