//! Version profiles: every behavioural difference between upstream releases (and our corrected
//! design) as a named switch. The core reads switches, never version numbers: the releases and
//! their switch sets are data ([`crate::releases`]), not a change to the steps. Each switch's
//! doc cites the release, file and function it was read from (paths in `k8s.io/kubernetes`;
//! `nodelifecycle/scheduler/` up to 1.28, `tainteviction/` from 1.29). Spec: specs/profiles.md
//! (PROFILE-*).

use crate::time::Duration;

/// A set of behaviour switches. `Copy` and small: the composed controller carries one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Profile {
    /// Name as accepted by [`Profile::by_name`].
    pub name: &'static str,
    /// Cancel the scheduled deletion when every used toleration is forever (`processPodOnNode`,
    /// `taint_manager.go`). Off in 1.18.0–1.18.8 (it logs "won't be cancelled" and lets the
    /// timer fire, T1, issue #90794); on from 1.18.9 (backport #93814 of PR #93722) and in
    /// every later release. Spec: PROFILE-1.
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
    /// Whether `Lt`/`Gt` tolerations can match: kube-controller-manager's own gate
    /// `TaintTolerationComparisonOperators` (1.35+ alpha, off by default), read by
    /// `GetMatchingTolerations` (`pkg/apis/core/v1/helper/helpers.go`) in the controller's
    /// process and passed to `Toleration.ToleratesTaint` (`k8s.io/api` `core/v1/toleration.go`).
    /// No `Lt`/`Gt` before 1.35. Passed to [`crate::matching::verdict`]. Spec: PROFILE-11.
    pub comparison_operators: bool,
}

/// `AddWork`'s timestamps on the immediate path (semantics §4.3 step 3, N20).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ImmediatePath {
    /// 1.18.0 to 1.29.15 (`processPodOnNode`): `time.Now(), time.Now()`. The delay is a few ns
    /// and usually positive, so a real timer and a non-nil entry are created; on a coarse clock
    /// it is 0 and the nil entry is used. The caller chooses per step ([`crate::Immediate`]) so
    /// the model explores both.
    TwoNows,
    /// 1.30.0+ (`taint_eviction.go` `processPodOnNode`, PR #123026): `now, now`; the delay is
    /// exactly 0 and the entry is always nil.
    SameNow,
}

/// The wrapped work function's map update after the work function returns (semantics §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CompletionPolicy {
    /// 1.18.0 to 1.32.13 (`timed_workers.go` `getWrappedWorkerFunc`): on success
    /// `workers[k] = nil` whatever k holds now (N3, N4); on failure delete k.
    Tombstone,
    /// PR #129577 as merged on the main branch: on success write the nil tombstone only if k
    /// still exists. No release ships it (1.32.13 has `Tombstone`, 1.33.0 `Delete`).
    TombstoneIfExists,
    /// 1.33.0+ (`timed_workers.go` `getWrappedWorkerFunc`): delete k after success or failure,
    /// whatever it holds now (N4).
    Delete,
    /// Fixed design: delete k only if the entry is still the one this work was created for.
    OwnedDelete,
}

/// How `TimedWorker.Cancel` reaches a work whose timer has fired.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CancelFlag {
    /// 1.18.0 to 1.34.5 (`timed_workers.go` `TimedWorker.Cancel`): `Timer.Stop()` only; once
    /// fired, the work runs.
    Absent,
    /// 1.35.0+ (`timed_workers.go` `createWorker`, `TimedWorker.Cancel`, PR #134945): an atomic
    /// flag set by `Cancel`, checked once when the work's goroutine starts.
    BeforeStart,
    /// Fixed design: also checked before every API request, so a cancel stops a work between
    /// attempts and requests (it cannot recall a request already sent). With a client rate
    /// limit it is read again when the request's token is granted, right before the request
    /// goes out: a work cancelled while it waits sends nothing, and its token is spent.
    BeforeEveryRequest,
}

/// The requests of one deletion attempt (semantics §6.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeleteSequence {
    /// 1.18.0 to 1.24.17, 1.25 (gate `PodDisruptionConditions` off by default), and any later
    /// release run with that gate off (`deletePodHandler`, `addConditionAndDeletePod`):
    /// `Delete(ns, name)`.
    DeleteOnly,
    /// 1.26.0–1.26.10, 1.27.0–1.27.7, 1.28.0–1.28.3 (`taint_manager.go`,
    /// `addConditionAndDeletePod`): GET; the `DisruptionTarget` condition by server-side apply
    /// (`ApplyStatus`, `Force: true`), sent on every attempt and by name only (the apply
    /// configuration carries no UID); DELETE by name.
    GetApplyDelete,
    /// 1.25 with `PodDisruptionConditions` on, 1.26.11+, 1.27.8+, 1.28.4+ and every later
    /// release (`addConditionAndDeletePod`): GET, PATCH the `DisruptionTarget` condition
    /// (`PatchPodStatus`, built from the GET, so carrying the fetched UID) only when
    /// `UpdatePodCondition` changed the status, DELETE by name.
    GetPatchDelete,
    /// Fixed design (PR #140198's live read, made atomic): GET the pod, then GET its node; go on
    /// only if the fetched pod is the decided UID, bound, on a node whose NoExecute taints it
    /// does not tolerate forever; then PATCH (skipped when the condition is there) and DELETE,
    /// both conditioned on the UID and on the resourceVersion read, so the pod the DELETE
    /// removes is the object that was exposed when the node was read (JUST-1).
    LiveReadPatchDelete,
}

impl DeleteSequence {
    /// The most requests one successful attempt sends: each takes a token of the client's
    /// bucket (CORE-THROTTLE), so N evictions under a rate limit need N times this many.
    pub fn requests(self) -> u32 {
        match self {
            DeleteSequence::DeleteOnly => 1,
            DeleteSequence::GetApplyDelete | DeleteSequence::GetPatchDelete => 3,
            DeleteSequence::LiveReadPatchDelete => 4,
        }
    }
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
    /// The named profiles, in the order the CLI lists them. Release profiles (`1.31`, …) are
    /// [`crate::releases::RELEASES`].
    pub const NAMES: [&'static str; 3] = ["v1.18", "latest", "fixed"];

    /// Kubernetes 1.18.0 to 1.18.8 (`taint_manager.go`, `timed_workers.go` of
    /// `pkg/controller/nodelifecycle/scheduler`; 1.18.9 took backport #93814), as the seeds
    /// analyse them.
    pub const V1_18: Profile = Profile {
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
    };

    /// The newest release as shipped: 1.35.0 to 1.37.x (`pkg/controller/tainteviction`,
    /// PRs #134665 and #134945) with kube-controller-manager's default gates, so
    /// `TaintTolerationComparisonOperators` (alpha) off.
    pub const LATEST: Profile = Profile {
        name: "latest",
        cancel_on_forever: true,
        immediate_path: ImmediatePath::SameNow,
        completion: CompletionPolicy::Delete,
        cancel_flag: CancelFlag::BeforeStart,
        delete_sequence: DeleteSequence::GetPatchDelete,
        ..Profile::V1_18
    };

    /// Our corrected design: every race a controller can remove is removed (specs/profiles.md).
    /// Its matcher has the comparison operators on: it is not bound to a release's gates.
    pub const FIXED: Profile = Profile {
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
        comparison_operators: true,
        ..Profile::LATEST
    };

    /// [`Profile::V1_18`].
    pub fn v1_18() -> Profile {
        Profile::V1_18
    }

    /// [`Profile::LATEST`].
    pub fn latest() -> Profile {
        Profile::LATEST
    }

    /// [`Profile::FIXED`].
    pub fn fixed() -> Profile {
        Profile::FIXED
    }

    /// Whether the controller keeps the arrival record ([`crate::Arrivals`], CORE-S9) that
    /// [`DeadlinePolicy::EarliestLegal`] and the re-check read. Upstream profiles keep none, so
    /// their states are unchanged.
    pub fn keeps_arrivals(&self) -> bool {
        self.deadline_policy == DeadlinePolicy::EarliestLegal || self.recheck_before_delete
    }

    /// The profile called `name`: one of [`Profile::NAMES`], or a release profile
    /// ([`crate::releases::profile_by_name`]: `1.31`, `1.26.4`, `1.26.0-1.26.10`, or a range's
    /// name with its one switch-changing gate flipped).
    pub fn by_name(name: &str) -> Option<Profile> {
        match name {
            "v1.18" => Some(Profile::V1_18),
            "latest" => Some(Profile::LATEST),
            "fixed" => Some(Profile::FIXED),
            _ => crate::releases::profile_by_name(name),
        }
    }

    /// The release ranges whose default switches are this profile's (every switch but the
    /// name): where a named profile comes from, or which releases a hand-built one matches.
    pub fn releases(&self) -> Vec<&'static crate::releases::Release> {
        crate::releases::RELEASES
            .iter()
            .filter(|r| r.profile().switches() == self.switches())
            .collect()
    }
}

/// One switch of a profile: its field name, its spec id and its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Switch {
    /// The [`Profile`] field.
    pub name: &'static str,
    /// Its id in specs/profiles.md (`PROFILE-n`).
    pub spec: &'static str,
    /// Its value as specs/profiles.md writes it.
    pub value: String,
}

impl Profile {
    /// Every switch with its value, in the order of specs/profiles.md's table.
    pub fn switches(&self) -> Vec<Switch> {
        let s = |name, spec, value: String| Switch { name, spec, value };
        vec![
            s(
                "cancel_on_forever",
                "PROFILE-1",
                self.cancel_on_forever.to_string(),
            ),
            s(
                "immediate_path",
                "PROFILE-2",
                format!("{:?}", self.immediate_path),
            ),
            s("completion", "PROFILE-3", format!("{:?}", self.completion)),
            s(
                "cancel_flag",
                "PROFILE-4",
                format!("{:?}", self.cancel_flag),
            ),
            s(
                "delete_sequence",
                "PROFILE-5",
                format!("{:?}", self.delete_sequence),
            ),
            s("attempts", "PROFILE-6", self.attempts.to_string()),
            s(
                "attempt_backoff",
                "PROFILE-6",
                format!("{} ms", self.attempt_backoff.0),
            ),
            s("durable_retry", "PROFILE-6", self.durable_retry.to_string()),
            s(
                "max_backoff",
                "PROFILE-6",
                format!("{} ms", self.max_backoff.0),
            ),
            s("work_key", "PROFILE-7", format!("{:?}", self.work_key)),
            s(
                "uid_precondition",
                "PROFILE-8",
                self.uid_precondition.to_string(),
            ),
            s(
                "version_precondition",
                "PROFILE-12",
                self.version_precondition.to_string(),
            ),
            s(
                "recheck_before_delete",
                "PROFILE-9",
                self.recheck_before_delete.to_string(),
            ),
            s(
                "deadline_policy",
                "PROFILE-10",
                format!("{:?}", self.deadline_policy),
            ),
            s(
                "comparison_operators",
                "PROFILE-11",
                self.comparison_operators.to_string(),
            ),
        ]
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
        assert_eq!(Profile::by_name("1.17"), None);
        assert_eq!(Profile::by_name("1.18").map(|p| p.name), Some("1.18"));
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

    /// The switches of the three named profiles, row by row as specs/profiles.md's table of
    /// switches writes them (PROFILE-1 to PROFILE-12).
    #[test]
    fn named_profiles_have_the_switches_of_the_spec_table() {
        let table = [
            ("cancel_on_forever", ["false", "true", "true"]),
            ("immediate_path", ["TwoNows", "SameNow", "SameNow"]),
            ("completion", ["Tombstone", "Delete", "OwnedDelete"]),
            (
                "cancel_flag",
                ["Absent", "BeforeStart", "BeforeEveryRequest"],
            ),
            (
                "delete_sequence",
                ["DeleteOnly", "GetPatchDelete", "LiveReadPatchDelete"],
            ),
            ("attempts", ["5", "5", "5"]),
            ("attempt_backoff", ["10 ms", "10 ms", "10 ms"]),
            ("durable_retry", ["false", "false", "true"]),
            ("max_backoff", ["10 ms", "10 ms", "5000 ms"]),
            ("work_key", ["Name", "Name", "Uid"]),
            ("uid_precondition", ["false", "false", "true"]),
            ("version_precondition", ["false", "false", "true"]),
            ("recheck_before_delete", ["false", "false", "true"]),
            (
                "deadline_policy",
                ["FirstWins", "FirstWins", "EarliestLegal"],
            ),
            ("comparison_operators", ["false", "false", "true"]),
        ];
        for (column, name) in Profile::NAMES.into_iter().enumerate() {
            let profile = Profile::by_name(name).unwrap();
            assert_eq!(profile.name, name);
            let switches: Vec<_> = profile
                .switches()
                .into_iter()
                .map(|s| (s.name, s.value))
                .collect();
            let expected: Vec<_> = table
                .iter()
                .map(|(switch, values)| (*switch, values[column].to_string()))
                .collect();
            assert_eq!(switches, expected, "{name}");
        }
        // Every switch cites its id; PROFILE-6 covers the four retry switches.
        let ids: Vec<_> = Profile::v1_18().switches().iter().map(|s| s.spec).collect();
        assert_eq!(
            ids[..6],
            [
                "PROFILE-1",
                "PROFILE-2",
                "PROFILE-3",
                "PROFILE-4",
                "PROFILE-5",
                "PROFILE-6"
            ]
        );
    }

    /// Only the fixed design keeps the arrival record (CORE-S9): it is read by its deadline
    /// policy (PROFILE-10) and by its re-check (PROFILE-9), each alone enough.
    #[test]
    fn the_arrival_record_is_kept_for_either_reader() {
        assert!(!Profile::v1_18().keeps_arrivals() && !Profile::latest().keeps_arrivals());
        assert!(Profile::fixed().keeps_arrivals());
        let recheck_only = Profile {
            recheck_before_delete: true,
            ..Profile::latest()
        };
        let deadline_only = Profile {
            deadline_policy: DeadlinePolicy::EarliestLegal,
            ..Profile::latest()
        };
        assert!(recheck_only.keeps_arrivals() && deadline_only.keeps_arrivals());
    }
}
