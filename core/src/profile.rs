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
    /// attempts and requests (it cannot recall a request already sent). With a client rate
    /// limit it is read again when the request's token is granted, right before the request
    /// goes out: a work cancelled while it waits sends nothing, and its token is spent.
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

/// Where a named profile comes from: the Kubernetes releases whose switches it has, and the
/// upstream commits (`kubernetes/kubernetes`) they were read from. Spec: specs/profiles.md
/// ("Profiles and Kubernetes releases").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Provenance {
    /// The profile's name ([`Profile::NAMES`]).
    pub name: &'static str,
    /// The Kubernetes releases whose controller has exactly this profile's switches.
    pub kubernetes: &'static str,
    /// The upstream commits the switches were read from.
    pub commits: &'static str,
}

/// The named profiles' provenance, in [`Profile::NAMES`] order.
pub const PROVENANCE: [Provenance; 3] = [
    Provenance {
        name: "v1.18",
        kubernetes: "1.18.0 to the last 1.18.x patch before backport #93814 (1.18.6 included)",
        commits: "taint_manager.go 99600aa1, timed_workers.go ab6399db",
    },
    Provenance {
        name: "latest",
        kubernetes: "newest upstream (after 1.33; first release not pinned), \
                     gate TaintTolerationComparisonOperators on (alpha in 1.35)",
        commits: "taint_eviction.go 5ce22905, timed_workers.go 008b3652",
    },
    Provenance {
        name: "fixed",
        kubernetes: "none: our corrected design (latest's switches plus the fixes)",
        commits: "none",
    },
];

/// A range of Kubernetes releases and the switches upstream's controller has in it: the answer
/// to "which profile applies to my cluster", including the ranges no named profile pins.
#[derive(Clone, Copy, Debug)]
pub struct Release {
    /// The releases, as a reader would say them.
    pub label: &'static str,
    /// First and last minor version `1.x` the range covers (`None`: up to the newest).
    pub minors: (u32, Option<u32>),
    /// Upstream's switches in these releases (its `name` is `label`).
    pub switches: Profile,
    /// What the range rests on, and its caveats.
    pub sources: &'static str,
}

impl Release {
    /// Upstream's switches by release, oldest first. 1.18 and the newest ranges overlap other
    /// rows where the sources do not say which patch or release took a change.
    pub fn all() -> [Release; 6] {
        let base = Profile::v1_18();
        let forever = Profile {
            cancel_on_forever: true,
            ..base
        };
        let condition = Profile {
            delete_sequence: DeleteSequence::GetPatchDelete,
            ..forever
        };
        let same_now = Profile {
            immediate_path: ImmediatePath::SameNow,
            ..condition
        };
        let if_exists = Profile {
            completion: CompletionPolicy::TombstoneIfExists,
            ..same_now
        };
        let named = |name: &'static str, p: Profile| Profile { name, ..p };
        [
            Release {
                label: "1.18.0 to 1.18.x before #93814",
                minors: (18, Some(18)),
                switches: named("1.18.0 to 1.18.x before #93814", base),
                sources: "taint_manager.go 99600aa1, timed_workers.go ab6399db; 1.18.6 is in \
                          this range, 1.18.8 or 1.18.9 took the backport (which one is not \
                          established)",
            },
            Release {
                label: "1.18.x from #93814, 1.19 to 1.25",
                minors: (18, Some(25)),
                switches: named("1.18.x from #93814, 1.19 to 1.25", forever),
                sources: "PR #93722 (backports #93814, #93815, #93816); mid-era snapshot \
                          01f5e9c4; in 1.25 the PodDisruptionConditions gate (alpha, off by \
                          default) switches delete_sequence to GetPatchDelete",
            },
            Release {
                label: "1.26 to 1.29",
                minors: (26, Some(29)),
                switches: named("1.26 to 1.29", condition),
                sources: "PodDisruptionConditions beta and on by default from 1.26 (with the \
                          gate off: DeleteOnly); the 1.26 column is inferred from the mid \
                          snapshot and PR history, 1.29 from a copy of the 1.29 code",
            },
            Release {
                label: "1.30 to 1.32",
                minors: (30, Some(32)),
                switches: named("1.30 to 1.32", same_now),
                sources: "PR #123026 (now, now on the immediate path); taint_eviction.go \
                          003e8629 for ~1.31 to 1.33",
            },
            Release {
                label: "1.33 until the release with 4766d191",
                minors: (33, None),
                switches: named("1.33 until the release with 4766d191", if_exists),
                sources: "PR #129577 (tombstone only if the key exists, merged 2025-01); \
                          which release first has timed_workers.go 4766d191 is not established",
            },
            Release {
                label: "newest upstream (008b3652)",
                minors: (34, None),
                switches: named("newest upstream (008b3652)", Profile::latest()),
                sources: "taint_eviction.go 5ce22905 (ObservedGeneration, 1.34+), \
                          timed_workers.go 4766d191 then 008b3652 (4766d191 alone: Delete with \
                          cancel_flag Absent); comparison_operators needs the alpha gate of 1.35",
            },
        ]
    }

    /// The ranges that may hold Kubernetes `1.minor.patch` (more than one where the sources do
    /// not settle it); empty before 1.18, which no profile covers. Within 1.18 the backport
    /// #93814 is known to be after 1.18.6 and in 1.18.8 or 1.18.9.
    pub fn for_version(minor: u32, patch: Option<u32>) -> Vec<Release> {
        let mut rows: Vec<Release> = Release::all()
            .into_iter()
            .filter(|r| r.minors.0 <= minor && r.minors.1.is_none_or(|last| minor <= last))
            .collect();
        match (minor, patch) {
            (18, Some(p)) if p <= 6 => rows.truncate(1),
            (18, Some(p)) if p >= 10 => {
                rows.remove(0);
            }
            _ => {}
        }
        rows
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

    /// The named profile's provenance; `None` for a profile built by hand.
    pub fn provenance(&self) -> Option<&'static Provenance> {
        PROVENANCE.iter().find(|p| p.name == self.name)
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

    #[test]
    fn provenance_covers_every_named_profile_in_order() {
        let names: Vec<_> = PROVENANCE.iter().map(|p| p.name).collect();
        assert_eq!(names, Profile::NAMES);
        for name in Profile::NAMES {
            let p = Profile::by_name(name).unwrap();
            assert_eq!(p.provenance().map(|v| v.name), Some(name));
        }
    }

    #[test]
    fn release_rows_agree_with_the_profiles_they_name() {
        let same = |a: &Profile, b: &Profile| a.switches() == b.switches();
        let rows = Release::all();
        assert!(same(&rows[0].switches, &Profile::v1_18()));
        assert!(same(&rows[5].switches, &Profile::latest()));
        // The releases between differ from both upstream profiles: no profile pins them.
        for row in &rows[1..5] {
            assert!(!same(&row.switches, &Profile::v1_18()), "{}", row.label);
            assert!(!same(&row.switches, &Profile::latest()), "{}", row.label);
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
            ("comparison_operators", ["false", "true", "true"]),
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

    /// The release rows of specs/profiles.md's table of releases: each range changes the
    /// switches its row names, from 1.18's to the newest's.
    #[test]
    fn release_rows_have_the_switches_of_the_spec_table() {
        let columns = |p: &Profile| {
            format!(
                "{} {:?} {:?} {:?} {:?}",
                p.cancel_on_forever,
                p.immediate_path,
                p.completion,
                p.cancel_flag,
                p.delete_sequence
            )
        };
        let rows: Vec<_> = Release::all()
            .iter()
            .map(|r| {
                assert_eq!(r.switches.name, r.label);
                columns(&r.switches)
            })
            .collect();
        assert_eq!(
            rows,
            [
                "false TwoNows Tombstone Absent DeleteOnly",
                "true TwoNows Tombstone Absent DeleteOnly",
                "true TwoNows Tombstone Absent GetPatchDelete",
                "true SameNow Tombstone Absent GetPatchDelete",
                "true SameNow TombstoneIfExists Absent GetPatchDelete",
                "true SameNow Delete BeforeStart GetPatchDelete",
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
        let by_hand = Profile {
            name: "by hand",
            ..Profile::latest()
        };
        assert_eq!(by_hand.provenance(), None);
    }

    #[test]
    fn a_version_finds_its_ranges() {
        let labels =
            |m, p| -> Vec<_> { Release::for_version(m, p).iter().map(|r| r.label).collect() };
        assert_eq!(labels(31, None), ["1.30 to 1.32"]);
        assert_eq!(labels(18, None).len(), 2, "1.18 patches differ");
        assert_eq!(labels(18, Some(6)), ["1.18.0 to 1.18.x before #93814"]);
        assert_eq!(labels(18, Some(8)).len(), 2, "1.18.8 or 1.18.9 took #93814");
        assert_eq!(labels(18, Some(12)), ["1.18.x from #93814, 1.19 to 1.25"]);
        assert_eq!(
            labels(35, None).len(),
            2,
            "the release of 4766d191 is not established"
        );
        assert!(labels(17, None).is_empty());
    }
}
