//! Upstream `TimedWorkerQueue` (semantics §5): per work key an absent, nil or timer entry, and the
//! works themselves (timers and the goroutines they become). A work outlives its entry: when an
//! entry is clobbered or deleted, its work keeps running or stays armed (N4, an orphaned timer).
//! Spec: CORE-S2, CORE-S3, CORE-A8..CORE-A10.

use super::effect::{ApiRequest, ApiResult, Effect, FetchedPod, WorkId};
use super::work_ids::WorkIds;
use crate::api::{PodKey, Uid};
use crate::profile::{CancelFlag, CompletionPolicy, Profile};
use crate::small_map::SmallMap;
use crate::throttle::{Bucket, RateLimit};
use crate::time::Time;
use ready::{ReadyLog, WorkMut};
use smallvec::SmallVec;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

mod key;
mod ready;
mod relabel;
pub use key::{AsKey, KeyView, WorkKey};
pub(crate) use ready::Ready;

/// A map entry (upstream `workers[key]`). Spec: CORE-S2.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Entry {
    /// Upstream's nil entry: a work started at once is running (`work`), or, after a successful
    /// deletion under the tombstone policies, nothing (`None`). Either way `GetWorkerUnsafe` is
    /// nil, `CancelWork` returns false and `AddWork` skips.
    Nil {
        /// The running work, if any.
        work: Option<WorkId>,
    },
    /// A `TimedWorker` created at `created_at` to fire at `fire_at`; its work may have fired already.
    Timer {
        /// `TimedWorker.CreatedAt`: the instant the delay is measured from.
        created_at: Time,
        /// `TimedWorker.FireAt`: the instant the work is due.
        fire_at: Time,
        /// The work the `TimedWorker` created.
        work: WorkId,
    },
}

impl Entry {
    /// The work this entry was created for (the ownership token of [`CompletionPolicy::OwnedDelete`]).
    pub fn work(&self) -> Option<WorkId> {
        match self {
            Entry::Nil { work } => *work,
            Entry::Timer { work, .. } => Some(*work),
        }
    }
}

/// A work from creation to completion. Spec: CORE-S3.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Work {
    /// The key of the entry that created it.
    pub key: WorkKey,
    /// `createdAt` as `CreateWorker` got it.
    pub created_at: Time,
    /// `fireAt`, which the work function receives.
    pub fire_at: Time,
    /// Set by a cancel that could not stop the timer (upstream `cancelled`, `008b3652`).
    pub cancelled: bool,
    /// Where it is.
    pub phase: WorkPhase,
}

/// Where a work is. Spec: CORE-S3.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum WorkPhase {
    /// Its timer is armed for `fire_at`.
    Armed,
    /// The timer fired (or the delay was ≤ 0): the goroutine exists but has not started.
    Spawned,
    /// The goroutine emitted "Marking for deletion"; its first request is a separate step
    /// (upstream logs and enters `addConditionAndDeletePod` in between, and any other goroutine
    /// may run there). Spec: CORE-A12.
    Marked,
    /// Attempt `attempt` (from 1) waits for the answer to `request`. `fetched`: the pod this
    /// attempt read, while the fixed design reads its node.
    Requesting {
        /// The attempt number, counted from 1.
        attempt: u32,
        /// The request awaiting its answer.
        request: ApiRequest,
        /// The pod this attempt read, while the fixed design reads its node.
        fetched: Option<Arc<FetchedPod>>,
    },
    /// The answer `result` to `request` arrived; the goroutine's reaction (the next request,
    /// a backoff, or returning) is a separate step (upstream builds and compares the status
    /// in between, and any other goroutine may run there). Spec: CORE-A13.
    Answered {
        /// The attempt number, counted from 1.
        attempt: u32,
        /// The request answered.
        request: ApiRequest,
        /// The pod this attempt read, while the fixed design reads its node.
        fetched: Option<Arc<FetchedPod>>,
        /// The answer.
        result: ApiResult,
    },
    /// Attempt `attempt`'s next request waits for a token of the client's rate limit: the
    /// token is reserved, and the request goes out when its timer fires at `until`
    /// (client-go's `tryThrottle`). Only with a rate limit. Spec: CORE-THROTTLE.
    Throttled {
        /// The attempt number, counted from 1.
        attempt: u32,
        /// The request to send at `until`.
        request: ApiRequest,
        /// The pod this attempt read, while the fixed design reads its node.
        fetched: Option<Arc<FetchedPod>>,
        /// The instant its token arrives.
        until: Time,
    },
    /// Attempt `attempt` failed; sleeping until `until`.
    Backoff {
        /// The attempt that failed, from 1.
        attempt: u32,
        /// When the sleep ends and the next attempt starts.
        until: Time,
    },
    /// The work function returned; the wrapped function's map update is next (a separate step,
    /// so that N3 and N4 can interleave).
    Finished {
        /// How the work function ended.
        outcome: Outcome,
    },
}

/// How a work function ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// The DELETE succeeded.
    Succeeded,
    /// Every attempt failed (upstream returns the last error).
    Failed,
    /// Fixed design: stopped by its cancelled flag, a failed re-check, or the pod being gone.
    Abandoned,
}

/// The outcome of `AddWork` when the delay is ≤ 0 (semantics §4.3 step 3, N20). Only the
/// [`crate::profile::ImmediatePath::TwoNows`] immediate path can produce [`Immediate::Timer`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Immediate {
    /// The delay is 0: no timer, a nil entry, the work starts at once.
    #[default]
    Nil,
    /// Two `time.Now()` calls gave a positive delay below the clock resolution: a real timer and a
    /// non-nil entry, due at once.
    Timer,
}

/// The timed queue: entries by key and works by id. Spec: CORE-S2, CORE-S3.
#[derive(Clone, Debug, Default)]
pub struct TimedQueue {
    entries: SmallMap<WorkKey, Entry>,
    works: SmallMap<WorkId, Work>,
    /// The ids of `works`, for handing out the lowest free one.
    ids: WorkIds,
    /// The works that became ready since the caller last asked, if it asked to be told
    /// ([`TimedQueue::report_ready`]). Not state: equality and hash ignore it.
    ready: ReadyLog,
    /// The works' client's token bucket, with a rate limit (CORE-THROTTLE): every work's
    /// requests go through the one client.
    throttle: Option<Bucket>,
}

/// Equal when entries, works and free ids are: the ready log is news for a caller, not state.
impl PartialEq for TimedQueue {
    fn eq(&self, other: &Self) -> bool {
        // Destructured so that a new field cannot be left out by accident.
        let TimedQueue {
            entries,
            works,
            ids,
            ready: _,
            throttle,
        } = self;
        *entries == other.entries
            && *works == other.works
            && *ids == other.ids
            && *throttle == other.throttle
    }
}

impl Eq for TimedQueue {}

/// Hashes what [`PartialEq`] compares.
impl Hash for TimedQueue {
    fn hash<H: Hasher>(&self, h: &mut H) {
        let TimedQueue {
            entries,
            works,
            ids,
            ready: _,
            throttle,
        } = self;
        entries.hash(h);
        works.hash(h);
        ids.hash(h);
        // Nothing when there is no rate limit, so that hashes are those of a queue without one.
        if let Some(bucket) = throttle {
            bucket.hash(h);
        }
    }
}

impl TimedQueue {
    /// An empty queue.
    pub fn new() -> TimedQueue {
        TimedQueue::default()
    }

    /// An empty queue whose works' requests go through a client limited to `limit`
    /// (`None`: unlimited). Spec: CORE-THROTTLE.
    pub fn with_rate_limit(limit: Option<RateLimit>) -> TimedQueue {
        TimedQueue {
            throttle: limit.map(Bucket::new),
            ..TimedQueue::default()
        }
    }

    /// The works' client's token bucket, if the client is rate limited.
    pub fn bucket(&self) -> Option<&Bucket> {
        self.throttle.as_ref()
    }

    /// The same, to reserve a token.
    pub(crate) fn bucket_mut(&mut self) -> Option<&mut Bucket> {
        self.throttle.as_mut()
    }

    /// Replaces the bucket, if the client is rate limited.
    pub(crate) fn set_bucket(&mut self, bucket: Bucket) {
        if let Some(b) = &mut self.throttle {
            *b = bucket;
        }
    }

    /// The entries by key (upstream `workers`).
    pub fn entries(&self) -> &SmallMap<WorkKey, Entry> {
        &self.entries
    }

    /// The works by id, including those whose entry is gone.
    pub fn works(&self) -> &SmallMap<WorkId, Work> {
        &self.works
    }

    /// The entry under `key` (upstream `workers[key]`), if any.
    pub fn entry(&self, key: &impl AsKey) -> Option<&Entry> {
        self.entries.get(key as &dyn AsKey)
    }

    /// The work `id`, if it exists.
    pub fn work(&self, id: WorkId) -> Option<&Work> {
        self.works.get(&id)
    }

    /// Forgets when each backoff sleep that has ended by `now` ended: its `until` becomes
    /// [`Time::ZERO`], and `ended` gets `(work, until)`. The core reads a sleep's end only to
    /// know whether it has ended (`until <= now`, CORE-S3), so two states that differ only in
    /// when their ended sleeps ended take the same steps; an observer that bounds when the
    /// retry comes keeps the instant itself (the oracle, ORACLE-SUB).
    pub fn forget_ended_sleeps(&mut self, now: Time, ended: &mut Vec<(WorkId, Time)>) {
        let ids: Vec<WorkId> = self.works.keys().copied().collect();
        for id in ids {
            let Some(w) = self.works.get_mut(&id) else {
                continue;
            };
            if let WorkPhase::Backoff { until, .. } = &mut w.phase {
                if *until > Time::ZERO && *until <= now {
                    ended.push((id, *until));
                    *until = Time::ZERO;
                }
            }
        }
    }

    /// The work `id`, to change; a change that makes it ready is noted for
    /// [`TimedQueue::take_ready`].
    pub(crate) fn work_mut(&mut self, id: WorkId) -> Option<WorkMut<'_>> {
        let work = self.works.get_mut(&id)?;
        let was = Ready::of(&work.phase);
        Some(WorkMut {
            work,
            id,
            was,
            log: &mut self.ready,
        })
    }

    /// From now on, note every work that becomes ready (spawned, marked or answered, or
    /// finished), for
    /// [`TimedQueue::take_ready`].
    pub(crate) fn report_ready(&mut self) {
        self.ready.enable();
    }

    /// Whether works that become ready are noted.
    pub(crate) fn reports_ready(&self) -> bool {
        self.ready.is_enabled()
    }

    /// Whether a work may have become ready since the last [`TimedQueue::take_ready`].
    pub(crate) fn has_ready(&self) -> bool {
        !self.ready.is_empty()
    }

    /// The works that became ready since the last call and still are, each once, starts, then
    /// continuations, then completions, and by id within each (the order the controller's `enabled_steps` lists them in).
    pub(crate) fn take_ready(&mut self) -> Vec<(Ready, WorkId)> {
        let mut ready: Vec<(Ready, WorkId)> = self
            .ready
            .take()
            .into_iter()
            .filter_map(|id| Some((Ready::of(&self.works.get(&id)?.phase)?, id)))
            .collect();
        ready.sort_unstable();
        ready.dedup();
        ready
    }

    /// Upstream `GetWorkerUnsafe`: a timer entry, or `None` for both an absent and a nil entry.
    #[doc(alias = "GetWorkerUnsafe")]
    pub fn get_worker(&self, key: &impl AsKey) -> Option<(Time, Time, WorkId)> {
        match self.entries.get(key as &dyn AsKey)? {
            Entry::Timer {
                created_at,
                fire_at,
                work,
            } => Some((*created_at, *fire_at, *work)),
            Entry::Nil { .. } => None,
        }
    }

    /// Upstream `AddWork` + `CreateWorker`: skipped if the key exists (even as a nil entry);
    /// otherwise a delay `fire_at − created_at` ≤ 0 starts the work at once under a nil entry
    /// (unless `immediate` says a positive sub-resolution delay was observed), and a positive one
    /// arms a timer. Returns the new work. Spec: CORE-A8.
    #[doc(alias = "AddWork")]
    pub fn add_work(
        &mut self,
        key: &impl AsKey,
        created_at: Time,
        fire_at: Time,
        immediate: Immediate,
        out: &mut Vec<Effect>,
    ) -> Option<WorkId> {
        if self.entries.contains_key(key as &dyn AsKey) {
            return None;
        }
        let key = key.view().to_key();
        let id = self.ids.take();
        let timer = fire_at > created_at || immediate == Immediate::Timer;
        let (entry, phase) = if timer {
            out.push(Effect::ArmTimer {
                id: id.timer(),
                fire_at,
            });
            let entry = Entry::Timer {
                created_at,
                fire_at,
                work: id,
            };
            (entry, WorkPhase::Armed)
        } else {
            (Entry::Nil { work: Some(id) }, WorkPhase::Spawned)
        };
        if phase == WorkPhase::Spawned {
            self.ready.note(id);
        }
        self.entries.insert(key.clone(), entry);
        self.works.insert(
            id,
            Work {
                key,
                created_at,
                fire_at,
                cancelled: false,
                phase,
            },
        );
        Some(id)
    }

    /// Fixed design: replace the timer of the entry at `key` (owned by `work`) by one firing at
    /// `fire_at`, keeping `created_at`; a due deadline starts the work at once. Spec: CORE-A8.
    pub fn reschedule(
        &mut self,
        key: &impl AsKey,
        work: WorkId,
        fire_at: Time,
        now: Time,
        out: &mut Vec<Effect>,
    ) {
        let Some(mut w) = self.work_mut(work) else {
            return;
        };
        if w.phase != WorkPhase::Armed {
            return;
        }
        w.fire_at = fire_at;
        if fire_at <= now {
            w.phase = WorkPhase::Spawned;
            out.push(Effect::CancelTimer { id: work.timer() });
        } else {
            out.push(Effect::ArmTimer {
                id: work.timer(),
                fire_at,
            });
        }
        drop(w);
        self.retime_entry(key, work, fire_at);
    }

    /// Upstream `CancelWork`: delete the key; for a non-nil entry stop its timer (and set the
    /// cancelled flag where the profile has one). Returns whether upstream would report a cancel,
    /// which is what emits "Cancelling deletion". Spec: CORE-A9.
    ///
    /// Under [`CancelFlag::BeforeEveryRequest`] (fixed) a nil entry's running work is reachable
    /// too, and the result is true only if the work is certain not to delete the pod (N2). A
    /// work whose DELETE is in flight cannot be recalled: its entry stays, so no second work is
    /// added beside it and no cancel is claimed for it (CANCEL-1). A DELETE waiting for its
    /// client token is not in flight: the work reads its flag when the token is granted.
    #[doc(alias = "CancelWork")]
    pub fn cancel_work(
        &mut self,
        key: &impl AsKey,
        profile: &Profile,
        out: &mut Vec<Effect>,
    ) -> bool {
        let precise = profile.cancel_flag == CancelFlag::BeforeEveryRequest;
        let deleting = |id: WorkId| {
            self.works.get(&id).is_some_and(|w| {
                matches!(&w.phase, WorkPhase::Requesting { request, .. }
                    | WorkPhase::Answered { request, .. }
                    if request.verb == super::effect::Verb::Delete)
            })
        };
        if precise
            && self
                .entries
                .get(key as &dyn AsKey)
                .and_then(Entry::work)
                .is_some_and(deleting)
        {
            return false;
        }
        let Some(entry) = self.entries.remove(key as &dyn AsKey) else {
            return false;
        };
        match entry {
            Entry::Timer { work, .. } => {
                let stopped = self.stop(work, profile, out);
                !precise || stopped
            }
            Entry::Nil { work: Some(work) } if precise => self.stop(work, profile, out),
            Entry::Nil { .. } => false,
        }
    }

    /// `TimedWorker.Cancel`: an armed timer is stopped and its work dropped; a fired one gets its
    /// cancelled flag where the profile has one. Returns whether the work will not delete.
    fn stop(&mut self, id: WorkId, profile: &Profile, out: &mut Vec<Effect>) -> bool {
        let Some(work) = self.works.get_mut(&id) else {
            return false;
        };
        if work.phase == WorkPhase::Armed {
            self.remove_work(id);
            out.push(Effect::CancelTimer { id: id.timer() });
            return true;
        }
        if profile.cancel_flag == CancelFlag::Absent {
            return false;
        }
        work.cancelled = true;
        match &work.phase {
            WorkPhase::Spawned => true,
            // Its flag is read before its next request only under `BeforeEveryRequest`.
            WorkPhase::Marked => profile.cancel_flag == CancelFlag::BeforeEveryRequest,
            WorkPhase::Requesting { request, .. } | WorkPhase::Answered { request, .. } => {
                profile.cancel_flag == CancelFlag::BeforeEveryRequest
                    && request.verb != super::effect::Verb::Delete
            }
            // Not sent yet: its flag is read when its token is granted (PROFILE-4).
            WorkPhase::Throttled { .. } | WorkPhase::Backoff { .. } => {
                profile.cancel_flag == CancelFlag::BeforeEveryRequest
            }
            WorkPhase::Armed | WorkPhase::Finished { .. } => false,
        }
    }

    /// Cancel every entry of `pod` except the one for UID `keep` (the fixed profile's cleanup of
    /// dead incarnations; under name keys this is the single entry of the pod when `keep` is
    /// `None`). Returns whether any cancel reported true.
    pub fn cancel_pod(
        &mut self,
        pod: &PodKey,
        keep: Option<&Uid>,
        profile: &Profile,
        out: &mut Vec<Effect>,
    ) -> bool {
        let keys: Vec<WorkKey> = self.pod_keys(pod, keep).cloned().collect();
        let mut any = false;
        for key in keys {
            any |= self.cancel_work(&key, profile, out);
        }
        any
    }

    /// Whether [`TimedQueue::cancel_pod`] with these arguments would find an entry to cancel:
    /// without one it changes nothing, so a caller holding the queue shared need not copy it.
    pub fn holds_pod(&self, pod: &PodKey, keep: Option<&Uid>) -> bool {
        self.pod_keys(pod, keep).next().is_some()
    }

    /// The keys of `pod`'s entries except the one for UID `keep`, in key order.
    fn pod_keys<'a>(
        &'a self,
        pod: &'a PodKey,
        keep: Option<&'a Uid>,
    ) -> impl Iterator<Item = &'a WorkKey> + 'a {
        let start = KeyView { pod, uid: None };
        self.entries
            .range_from(&start as &dyn AsKey)
            .take_while(move |(k, _)| k.pod == *pod)
            .filter(move |(k, _)| keep.is_none() || k.uid.as_ref() != keep)
            .map(|(k, _)| k)
    }

    /// The wrapped work function's map update once the work function returned, per
    /// [`CompletionPolicy`]; the work is gone afterwards. Spec: CORE-A10.
    pub fn complete(&mut self, id: WorkId, profile: &Profile) -> Option<Outcome> {
        let work = self.works.get(&id)?;
        let WorkPhase::Finished { outcome } = work.phase else {
            return None;
        };
        let work = self.remove_work(id)?;
        let key = work.key;
        let ok = outcome == Outcome::Succeeded;
        match profile.completion {
            CompletionPolicy::Tombstone if ok => {
                self.entries.insert(key, Entry::Nil { work: None });
            }
            CompletionPolicy::TombstoneIfExists if ok => {
                if let Some(entry) = self.entries.get_mut(&key) {
                    *entry = Entry::Nil { work: None };
                }
            }
            CompletionPolicy::Tombstone
            | CompletionPolicy::TombstoneIfExists
            | CompletionPolicy::Delete => {
                self.entries.remove(&key);
            }
            CompletionPolicy::OwnedDelete => {
                if self.entries.get(&key).and_then(Entry::work) == Some(id) {
                    self.entries.remove(&key);
                }
            }
        }
        Some(outcome)
    }

    /// Move the fire time of the timer entry at `key`, if `work` owns it (fixed design).
    pub(crate) fn retime_entry(&mut self, key: &impl AsKey, work: WorkId, fire_at: Time) {
        let entry = self.entries.get_mut(key as &dyn AsKey);
        if let Some(Entry::Timer {
            fire_at: f,
            work: w,
            ..
        }) = entry
        {
            if *w == work {
                *f = fire_at;
            }
        }
    }

    /// Remove the entry at `key` without touching its work: the fixed design replaces an entry
    /// whose work has finished instead of keeping it (a finished work no longer evicts).
    pub(crate) fn forget(&mut self, key: &impl AsKey) {
        self.entries.remove(key as &dyn AsKey);
    }

    /// Drop a work that exits without running (its cancelled flag was set when it started):
    /// upstream skips the wrapped function, so the map is not touched.
    pub(crate) fn drop_work(&mut self, id: WorkId) {
        self.remove_work(id);
    }

    /// Removes a work and frees its id (the only way a work leaves `works`).
    fn remove_work(&mut self, id: WorkId) -> Option<Work> {
        let work = self.works.remove(&id)?;
        self.ids.release(id);
        Some(work)
    }

    /// Renames the pods of every entry, work and outstanding request (see
    /// [`super::Controller::rename`]); ids stay.
    pub(crate) fn rename(&mut self, r: &impl crate::Renaming) {
        let key = |k: &WorkKey| WorkKey {
            pod: r.key(&k.pod),
            uid: k.uid.as_ref().map(|u| r.uid(u)),
        };
        self.entries.rekey(|k, _| key(k));
        for work in self.works.values_mut() {
            work.key = key(&work.key);
            if let WorkPhase::Answered { result, .. } = &mut work.phase {
                match result {
                    ApiResult::Pod(f) => Arc::make_mut(f).pod = r.pod(&f.pod),
                    ApiResult::Node(n) => Arc::make_mut(n).name = r.node(&n.name),
                    _ => {}
                }
            }
            if let WorkPhase::Requesting {
                request, fetched, ..
            }
            | WorkPhase::Throttled {
                request, fetched, ..
            }
            | WorkPhase::Answered {
                request, fetched, ..
            } = &mut work.phase
            {
                request.pod = r.key(&request.pod);
                request.uid = request.uid.as_ref().map(|u| r.uid(u));
                if let super::effect::Verb::GetNode(node) = &mut request.verb {
                    *node = r.node(node);
                }
                if let Some(f) = fetched {
                    Arc::make_mut(f).pod = r.pod(&f.pod);
                }
            }
        }
    }

    /// A renumbering of the works in use onto themselves (so the allocator, which hands out the
    /// lowest free id, is unchanged) that depends on what the works are, and on their ids only
    /// between works that tie: the entries' works in key order first, then the others by (key,
    /// creation, deadline, id). Ids are only ever compared for equality, so applying it
    /// ([`TimedQueue::renumber`]) gives an equivalent state; for the model's symmetry reduction
    /// (spec MODEL-SYM), which uses [`TimedQueue::canonical_order`] directly.
    #[cfg(test)]
    pub(crate) fn canonical_ids(&self) -> BTreeMap<WorkId, WorkId> {
        self.canonical_order()
            .into_iter()
            .zip(self.works.keys().copied())
            .collect()
    }

    /// The works in the order of [`TimedQueue::canonical_ids`]: the `i`-th gets the `i`-th id
    /// in use. Without allocating for a handful of works.
    pub(crate) fn canonical_order(&self) -> SmallVec<[WorkId; 8]> {
        let mut order: SmallVec<[WorkId; 8]> = SmallVec::new();
        for id in self.entries.values().filter_map(Entry::work) {
            if self.works.contains_key(&id) && !order.contains(&id) {
                order.push(id);
            }
        }
        let mut rest: SmallVec<[(&WorkId, &Work); 8]> = self
            .works
            .iter()
            .filter(|(id, _)| !order.contains(id))
            .collect();
        rest.sort_unstable_by(|(a, x), (b, y)| {
            (&x.key, x.created_at, x.fire_at, a).cmp(&(&y.key, y.created_at, y.fire_at, b))
        });
        order.extend(rest.into_iter().map(|(id, _)| *id));
        order
    }

    /// Whether [`TimedQueue::canonical_ids`] renames nothing.
    pub(crate) fn ids_are_canonical(&self) -> bool {
        self.canonical_order()
            .iter()
            .zip(self.works.keys())
            .all(|(a, b)| a == b)
    }

    /// Applies a renumbering from [`TimedQueue::canonical_ids`]: entries, works and the
    /// requests they wait on (a request's id is its work's).
    pub(crate) fn renumber(&mut self, map: &BTreeMap<WorkId, WorkId>) {
        self.renumber_by(|id| map.get(&id).copied().unwrap_or(id));
    }

    /// Gives each work the id `to` maps its id to (a bijection of the ids in use, or an
    /// injective map that [`TimedQueue::relabel`] follows with the allocator).
    pub(crate) fn renumber_by(&mut self, to: impl Fn(WorkId) -> WorkId) {
        for entry in self.entries.values_mut() {
            match entry {
                Entry::Nil { work: Some(w) } | Entry::Timer { work: w, .. } => *w = to(*w),
                Entry::Nil { work: None } => {}
            }
        }
        self.ready.renumber(&to);
        self.works.rekey(|id, w| {
            let id = to(*id);
            if let WorkPhase::Requesting { request, .. }
            | WorkPhase::Throttled { request, .. }
            | WorkPhase::Answered { request, .. } = &mut w.phase
            {
                request.id = super::effect::RequestId(id.0);
            }
            id
        });
    }

    /// The earliest armed timer (eviction or backoff).
    pub fn next_deadline(&self) -> Option<Time> {
        self.works.values().filter_map(Work::timer_due).min()
    }

    /// Whether no work is armed, running or awaiting completion.
    pub fn is_idle(&self) -> bool {
        self.works.is_empty()
    }
}

impl Work {
    /// When this work's timer fires, if one is armed.
    pub fn timer_due(&self) -> Option<Time> {
        match self.phase {
            WorkPhase::Armed => Some(self.fire_at),
            WorkPhase::Backoff { until, .. } | WorkPhase::Throttled { until, .. } => Some(until),
            _ => None,
        }
    }
}

#[cfg(test)]
mod cancel_tests;
#[cfg(test)]
mod key_tests;
#[cfg(test)]
mod lifecycle_tests;
#[cfg(test)]
mod symmetry_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::str_cmp;
    use proptest::prelude::*;

    proptest! {
        /// The fast key order is exactly `str`'s order.
        #[test]
        fn str_cmp_is_str_order(a in "[a-c\\x00\\x{ff}]{0,26}", b in "[a-c\\x00\\x{ff}]{0,26}") {
            prop_assert_eq!(str_cmp(&a, &b), a.cmp(&b));
        }

        /// Also where the two share a long prefix (decided past the first eight-byte words).
        #[test]
        fn str_cmp_is_str_order_past_a_shared_prefix(
            prefix in "[a\\x00]{0,20}", a in "[a-c\\x00]{0,10}", b in "[a-c\\x00]{0,10}"
        ) {
            let (a, b) = (format!("{prefix}{a}"), format!("{prefix}{b}"));
            prop_assert_eq!(str_cmp(&a, &b), a.cmp(&b));
        }

        /// Pod keys and UIDs keep the order of their strings (namespace, then name): listings
        /// and reports are sorted by it.
        #[test]
        fn pod_key_and_uid_order_is_string_order(
            a in ("[ab]{0,9}", "[ab\\x00]{0,10}"),
            b in ("[ab]{0,9}", "[ab\\x00]{0,10}"),
        ) {
            let key = |(ns, name): &(String, String)| PodKey::new(ns, name);
            prop_assert_eq!(key(&a).cmp(&key(&b)), a.cmp(&b));
            let uid = |(_, name): &(String, String)| Uid(name.as_str().into());
            prop_assert_eq!(uid(&a).cmp(&uid(&b)), a.1.cmp(&b.1));
        }
    }

    fn key(name: &str) -> WorkKey {
        WorkKey {
            pod: PodKey::new("ns", name),
            uid: None,
        }
    }

    #[test]
    fn add_skips_existing_keys_including_nil_entries() {
        let mut q = TimedQueue::new();
        let mut out = vec![];
        let a = q.add_work(&key("a"), Time(0), Time(0), Immediate::Nil, &mut out);
        assert_eq!(q.entry(&key("a")), Some(&Entry::Nil { work: a }));
        assert!(out.is_empty(), "no timer for a zero delay");
        let again = q.add_work(&key("a"), Time(0), Time(50), Immediate::Nil, &mut out);
        assert_eq!(again, None);
        let b = q
            .add_work(&key("b"), Time(0), Time(50), Immediate::Nil, &mut out)
            .unwrap();
        assert_eq!(b, WorkId(1));
        assert_eq!(
            out,
            [Effect::ArmTimer {
                id: b.timer(),
                fire_at: Time(50)
            }]
        );
        assert_eq!(q.get_worker(&key("a")), None, "nil entry reads as nil");
        assert_eq!(q.get_worker(&key("b")), Some((Time(0), Time(50), b)));
    }

    #[test]
    fn cancel_reports_only_non_nil_entries() {
        let p = Profile::v1_18();
        let mut q = TimedQueue::new();
        let mut out = vec![];
        q.add_work(&key("a"), Time(0), Time(0), Immediate::Nil, &mut out);
        q.add_work(&key("b"), Time(0), Time(9), Immediate::Nil, &mut out);
        out.clear();
        assert!(!q.cancel_work(&key("a"), &p, &mut out));
        assert!(q.cancel_work(&key("b"), &p, &mut out));
        assert!(!q.cancel_work(&key("c"), &p, &mut out));
        assert!(q.entries().is_empty());
        assert_eq!(q.works().len(), 1, "the nil entry's running work goes on");
        assert_eq!(out, [Effect::CancelTimer { id: TimerId(1) }]);
    }

    use crate::effect::TimerId;

    #[test]
    fn completion_policies_n3_n4() {
        let finished = |q: &mut TimedQueue, id: WorkId| {
            q.work_mut(id).unwrap().phase = WorkPhase::Finished {
                outcome: Outcome::Succeeded,
            };
        };
        let mut out = vec![];
        for (profile, after) in [
            (Profile::v1_18(), Some(Entry::Nil { work: None })),
            (
                Profile {
                    completion: CompletionPolicy::TombstoneIfExists,
                    ..Profile::v1_18()
                },
                None,
            ),
            (Profile::latest(), None),
            (Profile::fixed(), None),
        ] {
            // N3: the work's own entry was cancelled before it completed.
            let mut q = TimedQueue::new();
            let w = q
                .add_work(&key("a"), Time(0), Time(0), Immediate::Nil, &mut out)
                .unwrap();
            q.cancel_work(&key("a"), &profile, &mut out);
            finished(&mut q, w);
            q.complete(w, &profile);
            assert_eq!(q.entry(&key("a")), after.as_ref(), "{}", profile.name);
        }
        // N4: a newer entry exists when the old work completes; only OwnedDelete keeps it.
        for profile in [Profile::v1_18(), Profile::latest(), Profile::fixed()] {
            let mut q = TimedQueue::new();
            let old = q
                .add_work(&key("a"), Time(0), Time(0), Immediate::Nil, &mut out)
                .unwrap();
            q.cancel_work(&key("a"), &profile, &mut out);
            let new = q
                .add_work(&key("a"), Time(1), Time(300), Immediate::Nil, &mut out)
                .unwrap();
            finished(&mut q, old);
            q.complete(old, &profile);
            let kept = q.entry(&key("a")).and_then(Entry::work) == Some(new);
            assert_eq!(kept, profile.name == "fixed", "{}", profile.name);
            assert!(
                q.work(new).is_some(),
                "the newer timer stays armed (orphaned)"
            );
        }
    }
}
