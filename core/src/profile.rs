//! Version profiles: every behavioural difference between upstream versions (and our corrected
//! design) as a named switch. The core reads switches, never version numbers, so a new version is
//! a new constructor, not a change to the steps. Spec: specs/profiles.md (PROFILE-*).

use crate::time::Duration;

/// A set of behaviour switches. `Copy` and small: the composed controller carries one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Profile {
    /// Name as accepted by [`Profile::by_name`].
    pub name: &'static str,
    /// Cancel the scheduled deletion when every used toleration is forever. Off in 1.18.0–1.18.x
    /// before #93814 (1.18.6 logs "won't be cancelled" and lets the timer fire, T1, issue #90794);
    /// on from PR #93722. Spec: PROFILE-1.
    pub cancel_on_forever: bool,
    /// Timestamps passed to `AddWork` on the "not all taints tolerated" path. Spec: PROFILE-2.
    pub immediate_path: ImmediatePath,
    /// What the wrapped work function does to the map once the work function returns.
    /// Spec: PROFILE-3.
    pub completion: CompletionPolicy,
    /// Whether a cancel can stop a work whose timer already fired. Spec: PROFILE-4.
    pub cancel_flag: CancelFlag,
    /// The API calls of one deletion attempt. Spec: PROFILE-5.
    pub delete_sequence: DeleteSequence,
    /// Attempts before a failed deletion is dropped (`retries`, 5 in every version). Ignored when
    /// `durable_retry` is set. Spec: PROFILE-6.
    pub attempts: u32,
    /// Sleep after each failed attempt, including the last (10 ms upstream). Spec: PROFILE-6.
    pub attempt_backoff: Duration,
    /// Fixed design: retry failed deletions forever, doubling the backoff up to
    /// `max_backoff`, instead of dropping them after `attempts`. Spec: PROFILE-6.
    pub durable_retry: bool,
    /// Upper bound of the doubling backoff under `durable_retry`.
    pub max_backoff: Duration,
    /// What the timed queue is keyed by. Spec: PROFILE-7.
    pub work_key: WorkKeyPolicy,
    /// Fixed design: mutating requests carry the decided pod's UID as a precondition.
    /// Upstream's DELETE is by name only (semantics §6.2). Spec: PROFILE-8.
    pub uid_precondition: bool,
    /// Fixed design: under [`DeleteSequence::LiveReadPatchDelete`], the PATCH and DELETE carry
    /// the resourceVersion the live read returned, so they apply only to the object that was
    /// read. Off, the live read is PR #140198's as proposed, which a toleration change between
    /// the two GETs defeats (JUST-1, configuration `live-read`). Spec: PROFILE-12.
    pub version_precondition: bool,
    /// Fixed design: before every mutating request, re-evaluate the decision against the informer
    /// caches and abandon the work if it no longer holds (N1, N11). Spec: PROFILE-9.
    pub recheck_before_delete: bool,
    /// What a recomputation does to an existing timer. Spec: PROFILE-10.
    pub deadline_policy: DeadlinePolicy,
    /// Whether `Lt`/`Gt` tolerations can match (gate `TaintTolerationComparisonOperators`,
    /// alpha in 1.35). Passed to [`crate::matching::verdict`]. Spec: PROFILE-11.
    pub comparison_operators: bool,
}

/// `AddWork`'s timestamps on the immediate path (semantics §4.3 step 3, N20).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ImmediatePath {
    /// ≤ 1.29: `time.Now(), time.Now()`. The delay is a few ns and usually positive, so a real
    /// timer and a non-nil entry are created; on a coarse clock it is 0 and the nil entry is used.
    /// The caller chooses per step ([`crate::Immediate`]) so the model explores both.
    TwoNows,
    /// PR #123026 (1.30+): `now, now`; the delay is exactly 0 and the entry is always nil.
    SameNow,
}

/// The wrapped work function's map update after the work function returns (semantics §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CompletionPolicy {
    /// 1.18–1.32: on success `workers[k] = nil` whatever k holds now (N3, N4); on failure delete k.
    Tombstone,
    /// PR #129577 (1.33): on success write the nil tombstone only if k still exists.
    TombstoneIfExists,
    /// `4766d191`+: delete k after success or failure, whatever it holds now (N4).
    Delete,
    /// Fixed design: delete k only if the entry is still the one this work was created for.
    OwnedDelete,
}

/// How `TimedWorker.Cancel` reaches a work whose timer has fired.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CancelFlag {
    /// ≤ `4766d191`: `Timer.Stop()` only; once fired, the work runs.
    Absent,
    /// `008b3652`: an atomic flag checked once when the goroutine starts.
    BeforeStart,
    /// Fixed design: also checked before every API request, so a cancel stops a work between
    /// attempts and requests (it cannot recall a request already sent).
    BeforeEveryRequest,
}

/// The requests of one deletion attempt (semantics §6.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeleteSequence {
    /// 1.18 and mid: `Delete(ns, name)`.
    DeleteOnly,
    /// 1.26+ (`PodDisruptionConditions`) and newest: GET, PATCH the `DisruptionTarget` condition
    /// (built from the GET, so carrying the fetched UID), DELETE by name.
    GetPatchDelete,
    /// Fixed design (PR #140198's live read, made atomic): GET the pod, then GET its node; go on
    /// only if the fetched pod is the decided UID, bound, on a node whose NoExecute taints it
    /// does not tolerate forever; then PATCH (skipped when the condition is there) and DELETE,
    /// both conditioned on the UID and on the resourceVersion read, so the pod the DELETE
    /// removes is the object that was exposed when the node was read (JUST-1).
    LiveReadPatchDelete,
}

/// The timed queue's key (semantics §5.5: upstream `KeyFromWorkArgs` ignores the UID).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WorkKeyPolicy {
    /// Upstream: `namespace/name` (I1, I3, N5, N6).
    Name,
    /// Fixed design: `namespace/name` plus UID, so a successor never inherits a predecessor's work.
    Uid,
}

/// What `processPodOnNode` does when a finite toleration time is computed and a timer exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeadlinePolicy {
    /// Upstream (every version): the existing timer is kept unless its `CreatedAt` is not before
    /// `now`, which never happens on a real clock (N9, T2, T3).
    FirstWins,
    /// Fixed design: the deadline is the earliest legal eviction `E` (spec EVICT-2) computed from
    /// the controller's own arrival record ([`crate::Arrivals`]): per taint its first
    /// observation plus its toleration's time, from the pod's arrival at the earliest. It moves
    /// earlier or later on every change, and the re-check re-derives it before every request.
    EarliestLegal,
}

impl Profile {
    /// Every profile name, in the order the CLI lists them.
    pub const NAMES: [&'static str; 3] = ["v1.18", "latest", "fixed"];

    /// Kubernetes 1.18.6 (`taint_manager.go` `99600aa1`, `timed_workers.go` `ab6399db`), as the
    /// seeds analyse it.
    pub fn v1_18() -> Profile {
        Profile {
            name: "v1.18",
            cancel_on_forever: false,
            immediate_path: ImmediatePath::TwoNows,
            completion: CompletionPolicy::Tombstone,
            cancel_flag: CancelFlag::Absent,
            delete_sequence: DeleteSequence::DeleteOnly,
            attempts: 5,
            attempt_backoff: Duration(10),
            durable_retry: false,
            max_backoff: Duration(10),
            work_key: WorkKeyPolicy::Name,
            uid_precondition: false,
            version_precondition: false,
            recheck_before_delete: false,
            deadline_policy: DeadlinePolicy::FirstWins,
            comparison_operators: false,
        }
    }

    /// Newest upstream (`taint_eviction.go` `5ce22905`, `timed_workers.go` `008b3652`), with the
    /// comparison-operator gate on.
    pub fn latest() -> Profile {
        Profile {
            name: "latest",
            cancel_on_forever: true,
            immediate_path: ImmediatePath::SameNow,
            completion: CompletionPolicy::Delete,
            cancel_flag: CancelFlag::BeforeStart,
            delete_sequence: DeleteSequence::GetPatchDelete,
            comparison_operators: true,
            ..Profile::v1_18()
        }
    }

    /// Our corrected design: every race a controller can remove is removed (specs/profiles.md).
    pub fn fixed() -> Profile {
        Profile {
            name: "fixed",
            completion: CompletionPolicy::OwnedDelete,
            cancel_flag: CancelFlag::BeforeEveryRequest,
            delete_sequence: DeleteSequence::LiveReadPatchDelete,
            durable_retry: true,
            max_backoff: Duration(5_000),
            work_key: WorkKeyPolicy::Uid,
            uid_precondition: true,
            version_precondition: true,
            recheck_before_delete: true,
            deadline_policy: DeadlinePolicy::EarliestLegal,
            ..Profile::latest()
        }
    }

    /// Whether the controller keeps the arrival record ([`crate::Arrivals`], CORE-S9) that
    /// [`DeadlinePolicy::EarliestLegal`] and the re-check read. Upstream profiles keep none, so
    /// their states are unchanged.
    pub fn keeps_arrivals(&self) -> bool {
        self.deadline_policy == DeadlinePolicy::EarliestLegal || self.recheck_before_delete
    }

    /// The profile called `name` (one of [`Profile::NAMES`]).
    pub fn by_name(name: &str) -> Option<Profile> {
        match name {
            "v1.18" => Some(Profile::v1_18()),
            "latest" => Some(Profile::latest()),
            "fixed" => Some(Profile::fixed()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for name in Profile::NAMES {
            assert_eq!(Profile::by_name(name).map(|p| p.name), Some(name));
        }
        assert_eq!(Profile::by_name("1.18"), None);
    }

    #[test]
    fn upstream_profiles_keep_upstream_identity_and_retries() {
        for p in [Profile::v1_18(), Profile::latest()] {
            assert_eq!(p.work_key, WorkKeyPolicy::Name);
            assert_eq!(p.deadline_policy, DeadlinePolicy::FirstWins);
            assert_eq!((p.attempts, p.attempt_backoff), (5, Duration(10)));
            assert!(!p.durable_retry && !p.uid_precondition && !p.recheck_before_delete);
        }
    }
}
