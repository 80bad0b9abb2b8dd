//! Kubernetes releases and the switches upstream's controller has in each, read from each
//! release's own code in the Go module cache: every minor from 1.18 to the newest, split at the
//! patch where a minor's patches differ. Ranges with the same switches share one
//! [`SwitchSet`]; the core reads switches, never versions. Feature gates that change a switch
//! are applied by [`Release::with_gates`]. Spec: specs/profiles.md (PROFILE-R1 .. PROFILE-R4).

mod pinned;

pub use pinned::PINNED;

use crate::profile::{CompletionPolicy, DeleteSequence, ImmediatePath, Profile};

/// One distinct set of upstream switches and the releases that have it.
#[derive(Clone, Copy, Debug)]
pub struct SwitchSet {
    /// The releases with these switches (default gates), as a reader says them.
    pub label: &'static str,
    /// The switches (`name` is the label).
    pub switches: Profile,
}

/// 1.18.0 to 1.18.8: `Profile::v1_18`.
const A: Profile = Profile {
    name: "1.18.0-1.18.8",
    ..Profile::V1_18
};
/// #93722's cancel on forever (backport #93814 in 1.18.9).
const B: Profile = Profile {
    name: "1.18.9-1.25",
    cancel_on_forever: true,
    ..A
};
/// `PodDisruptionConditions` by server-side apply (`ApplyStatus`, forced, every attempt).
const C: Profile = Profile {
    name: "1.26.0-1.26.10, 1.27.0-1.27.7, 1.28.0-1.28.3",
    delete_sequence: DeleteSequence::GetApplyDelete,
    ..B
};
/// `PodDisruptionConditions` by `PatchPodStatus`, only when the condition changes.
const D: Profile = Profile {
    name: "1.26.11-1.26.15, 1.27.8-1.27.16, 1.28.4-1.29",
    delete_sequence: DeleteSequence::GetPatchDelete,
    ..B
};
/// PR #123026: `now, now` on the immediate path.
const E: Profile = Profile {
    name: "1.30-1.32",
    immediate_path: ImmediatePath::SameNow,
    ..D
};
/// `4766d191`: the key deleted when a work returns; no tombstone.
const F: Profile = Profile {
    name: "1.33-1.34",
    completion: CompletionPolicy::Delete,
    ..E
};

/// Every distinct switch set of upstream releases with default gates, oldest first. The first
/// is `v1.18`'s, the last `latest`'s.
pub const SWITCH_SETS: [SwitchSet; 7] = [
    set(A),
    set(B),
    set(C),
    set(D),
    set(E),
    set(F),
    SwitchSet {
        label: "1.35-1.37",
        switches: Profile {
            name: "1.35-1.37",
            ..Profile::LATEST
        },
    },
];

const fn set(switches: Profile) -> SwitchSet {
    SwitchSet {
        label: switches.name,
        switches,
    }
}

/// A kube-controller-manager feature gate that a release profile knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// `PodDisruptionConditions` (1.25 alpha, 1.26 beta, 1.31 GA locked, removed in 1.34):
    /// off, a deletion attempt is the DELETE alone (PROFILE-5).
    PodDisruptionConditions,
    /// `SeparateTaintEvictionController` (1.29 beta, 1.34 GA locked): off, the node lifecycle
    /// controller runs the same `tainteviction` code itself; no switch changes.
    SeparateTaintEvictionController,
    /// `TaintTolerationComparisonOperators` (1.35 alpha): read by `GetMatchingTolerations` in
    /// kube-controller-manager's own process (PROFILE-11).
    TaintTolerationComparisonOperators,
}

impl Gate {
    /// Every gate, in the order kube-controller-manager's `--help` lists them (alphabetical).
    pub const ALL: [Gate; 3] = [
        Gate::PodDisruptionConditions,
        Gate::SeparateTaintEvictionController,
        Gate::TaintTolerationComparisonOperators,
    ];

    /// The gate's name as `--feature-gates` spells it.
    pub const fn name(self) -> &'static str {
        match self {
            Gate::PodDisruptionConditions => "PodDisruptionConditions",
            Gate::SeparateTaintEvictionController => "SeparateTaintEvictionController",
            Gate::TaintTolerationComparisonOperators => "TaintTolerationComparisonOperators",
        }
    }

    /// The gate called `name`, if any release profile knows it.
    pub fn by_name(name: &str) -> Option<Gate> {
        Gate::ALL.into_iter().find(|g| g.name() == name)
    }
}

/// A gate as one release ships it (`pkg/features/kube_features.go`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GateDefault {
    /// The gate.
    pub gate: Gate,
    /// Its default in kube-controller-manager.
    pub default: bool,
    /// `LockToDefault`: kube-controller-manager refuses any other value.
    pub locked: bool,
    /// The profile's name with the gate flipped (set only for gates that change a switch).
    pub flipped: &'static str,
}

const fn gate(gate: Gate, default: bool, locked: bool, flipped: &'static str) -> GateDefault {
    GateDefault {
        gate,
        default,
        locked,
        flipped,
    }
}

/// A release range: a minor, or the patches of a minor that share switches.
#[derive(Clone, Copy, Debug)]
pub struct Release {
    /// The profile name: `1.31` for a whole minor, or the newest patches of a split minor;
    /// `1.26.0-1.26.10` for the older patches of a split minor.
    pub name: &'static str,
    /// `1.minor`.
    pub minor: u32,
    /// First and last patch (inclusive; the last is the newest release pinned).
    pub patches: (u32, u32),
    /// Index into [`SWITCH_SETS`].
    pub set: usize,
    /// The gates this release has that a profile reads, with their defaults.
    pub gates: &'static [GateDefault],
}

const STEC: GateDefault = gate(Gate::SeparateTaintEvictionController, true, false, "");
const STEC_LOCKED: GateDefault = gate(Gate::SeparateTaintEvictionController, true, true, "");
const PDC_LOCKED: GateDefault = gate(Gate::PodDisruptionConditions, true, true, "");

const fn minor(
    name: &'static str,
    minor: u32,
    patches: (u32, u32),
    set: usize,
    gates: &'static [GateDefault],
) -> Release {
    Release {
        name,
        minor,
        patches,
        set,
        gates,
    }
}

/// Every release range, oldest first. The last patch of each minor is the newest release the Go
/// module proxy served when the profiles were read (PROFILE-R1).
pub const RELEASES: [Release; 24] = [
    minor("1.18.0-1.18.8", 18, (0, 8), 0, &[]),
    minor("1.18", 18, (9, 20), 1, &[]),
    minor("1.19", 19, (0, 16), 1, &[]),
    minor("1.20", 20, (0, 15), 1, &[]),
    minor("1.21", 21, (0, 14), 1, &[]),
    minor("1.22", 22, (0, 17), 1, &[]),
    minor("1.23", 23, (0, 17), 1, &[]),
    minor("1.24", 24, (0, 17), 1, &[]),
    minor(
        "1.25",
        25,
        (0, 16),
        1,
        &[gate(
            Gate::PodDisruptionConditions,
            false,
            false,
            "1.25,PodDisruptionConditions=true",
        )],
    ),
    minor(
        "1.26.0-1.26.10",
        26,
        (0, 10),
        2,
        &[gate(
            Gate::PodDisruptionConditions,
            true,
            false,
            "1.26.0-1.26.10,PodDisruptionConditions=false",
        )],
    ),
    minor(
        "1.26",
        26,
        (11, 15),
        3,
        &[gate(
            Gate::PodDisruptionConditions,
            true,
            false,
            "1.26,PodDisruptionConditions=false",
        )],
    ),
    minor(
        "1.27.0-1.27.7",
        27,
        (0, 7),
        2,
        &[gate(
            Gate::PodDisruptionConditions,
            true,
            false,
            "1.27.0-1.27.7,PodDisruptionConditions=false",
        )],
    ),
    minor(
        "1.27",
        27,
        (8, 16),
        3,
        &[gate(
            Gate::PodDisruptionConditions,
            true,
            false,
            "1.27,PodDisruptionConditions=false",
        )],
    ),
    minor(
        "1.28.0-1.28.3",
        28,
        (0, 3),
        2,
        &[gate(
            Gate::PodDisruptionConditions,
            true,
            false,
            "1.28.0-1.28.3,PodDisruptionConditions=false",
        )],
    ),
    minor(
        "1.28",
        28,
        (4, 15),
        3,
        &[gate(
            Gate::PodDisruptionConditions,
            true,
            false,
            "1.28,PodDisruptionConditions=false",
        )],
    ),
    minor(
        "1.29",
        29,
        (0, 15),
        3,
        &[
            gate(
                Gate::PodDisruptionConditions,
                true,
                false,
                "1.29,PodDisruptionConditions=false",
            ),
            STEC,
        ],
    ),
    minor(
        "1.30",
        30,
        (0, 14),
        4,
        &[
            gate(
                Gate::PodDisruptionConditions,
                true,
                false,
                "1.30,PodDisruptionConditions=false",
            ),
            STEC,
        ],
    ),
    minor("1.31", 31, (0, 14), 4, &[PDC_LOCKED, STEC]),
    minor("1.32", 32, (0, 13), 4, &[PDC_LOCKED, STEC]),
    minor("1.33", 33, (0, 13), 5, &[PDC_LOCKED, STEC]),
    minor("1.34", 34, (0, 5), 5, &[STEC_LOCKED]),
    minor(
        "1.35",
        35,
        (0, 6),
        6,
        &[
            STEC_LOCKED,
            gate(
                Gate::TaintTolerationComparisonOperators,
                false,
                false,
                "1.35,TaintTolerationComparisonOperators=true",
            ),
        ],
    ),
    minor(
        "1.36",
        36,
        (0, 5),
        6,
        &[
            STEC_LOCKED,
            gate(
                Gate::TaintTolerationComparisonOperators,
                false,
                false,
                "1.36,TaintTolerationComparisonOperators=true",
            ),
        ],
    ),
    minor(
        "1.37",
        37,
        (0, 2),
        6,
        &[
            STEC_LOCKED,
            gate(
                Gate::TaintTolerationComparisonOperators,
                false,
                false,
                "1.37,TaintTolerationComparisonOperators=true",
            ),
        ],
    ),
];

/// What a release profile rests on: the files of one pinned release and their SHA-256, as the
/// Go module cache holds them. Checked by `tests/provenance.rs` (PROFILE-R3).
#[derive(Clone, Copy, Debug)]
pub struct Pinned {
    /// `1.minor.patch`.
    pub release: &'static str,
    /// The files read, with their hashes.
    pub files: &'static [UpstreamFile],
}

/// One upstream file a profile was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UpstreamFile {
    /// `k8s.io/kubernetes` (at `v1.X.Y`) or a staging module (`k8s.io/api` at `v0.X.Y`).
    pub module: &'static str,
    /// The path within the module.
    pub path: &'static str,
    /// Hex SHA-256 of the file.
    pub sha256: &'static str,
}

impl UpstreamFile {
    /// The module's directory name in the Go module cache for Kubernetes `release`
    /// (`k8s.io/kubernetes@v1.31.4`, `k8s.io/api@v0.31.4`).
    pub fn module_dir(&self, release: &str) -> String {
        let version = match self.module {
            "k8s.io/kubernetes" => format!("v{release}"),
            _ => format!("v0.{}", release.strip_prefix("1.").unwrap_or(release)),
        };
        format!("{}@{version}", self.module)
    }
}

/// Why a version or a gate setting names no profile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReleaseError {
    /// Not `1.MINOR` or `1.MINOR.PATCH`.
    Malformed,
    /// A well-formed version no range covers (before 1.18, or newer than the newest pinned).
    Unknown,
    /// `NAME=BOOL` malformed.
    GateSyntax(String),
    /// A gate no release profile knows.
    UnknownGate(String),
    /// A gate this release does not have.
    NotInRelease(Gate),
    /// A gate locked to its default, set to the other value.
    Locked(Gate, bool),
}

impl std::fmt::Display for ReleaseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (first, last) = (RELEASES[0], RELEASES[RELEASES.len() - 1]);
        match self {
            ReleaseError::Malformed => write!(f, "expected 1.MINOR or 1.MINOR.PATCH"),
            ReleaseError::Unknown => write!(
                f,
                "no profile: the releases read are 1.{}.{} to 1.{}.{}",
                first.minor, first.patches.0, last.minor, last.patches.1
            ),
            ReleaseError::GateSyntax(text) => {
                write!(f, "{text:?}: expected NAME=true or NAME=false")
            }
            ReleaseError::UnknownGate(name) => write!(
                f,
                "unrecognized feature gate: {name} (known: {})",
                Gate::ALL.map(Gate::name).join(", ")
            ),
            ReleaseError::NotInRelease(gate) => {
                write!(
                    f,
                    "feature gate {} does not exist in this release",
                    gate.name()
                )
            }
            ReleaseError::Locked(gate, value) => write!(
                f,
                "cannot set feature gate {} to {value}, feature is locked to {}",
                gate.name(),
                !value
            ),
        }
    }
}

impl Release {
    /// The range holding `1.minor.patch`; with no patch, the minor's newest patches.
    pub fn find(minor: u32, patch: Option<u32>) -> Option<&'static Release> {
        RELEASES.iter().rev().find(|r| {
            r.minor == minor && patch.is_none_or(|p| r.patches.0 <= p && p <= r.patches.1)
        })
    }

    /// `1.31`, `v1.31`, `1.31.4` or `v1.31.4`: the range holding it.
    pub fn parse(text: &str) -> Result<&'static Release, ReleaseError> {
        let mut parts = text.strip_prefix('v').unwrap_or(text).split('.');
        let number = |p: Option<&str>| -> Result<u32, ReleaseError> {
            let p = p.ok_or(ReleaseError::Malformed)?;
            let canonical = p == "0" || (!p.starts_with('0') && !p.is_empty());
            match p.parse() {
                Ok(n) if canonical => Ok(n),
                _ => Err(ReleaseError::Malformed),
            }
        };
        if number(parts.next())? != 1 {
            return Err(ReleaseError::Malformed);
        }
        let minor = number(parts.next())?;
        let patch = parts.next().map(|p| number(Some(p))).transpose()?;
        if parts.next().is_some() {
            return Err(ReleaseError::Malformed);
        }
        Release::find(minor, patch).ok_or(ReleaseError::Unknown)
    }

    /// `1.31.0-1.31.14`: the range's patches.
    pub fn span(&self) -> String {
        let m = self.minor;
        format!("1.{m}.{}-1.{m}.{}", self.patches.0, self.patches.1)
    }

    /// The switch set of this range (default gates).
    pub fn switch_set(&self) -> &'static SwitchSet {
        &SWITCH_SETS[self.set]
    }

    /// The profile: this range's switches with its default gates, named after the range.
    pub fn profile(&self) -> Profile {
        Profile {
            name: self.name,
            ..self.switch_set().switches
        }
    }

    /// The profile with `gates` (`--feature-gates`) set; a gate left at its default changes
    /// nothing. Refused like kube-controller-manager refuses it: an unknown gate, a gate this
    /// release lacks, a locked gate set to the other value.
    pub fn with_gates(&self, gates: &[(Gate, bool)]) -> Result<Profile, ReleaseError> {
        let mut profile = self.profile();
        for &(gate, value) in gates {
            let known = self
                .gates
                .iter()
                .find(|g| g.gate == gate)
                .ok_or(ReleaseError::NotInRelease(gate))?;
            if value == known.default {
                continue;
            }
            if known.locked {
                return Err(ReleaseError::Locked(gate, value));
            }
            match gate {
                Gate::PodDisruptionConditions if !value => {
                    profile.delete_sequence = DeleteSequence::DeleteOnly;
                }
                Gate::PodDisruptionConditions => {
                    profile.delete_sequence = DeleteSequence::GetPatchDelete;
                }
                Gate::TaintTolerationComparisonOperators => {
                    profile.comparison_operators = value;
                }
                Gate::SeparateTaintEvictionController => {}
            }
            if !known.flipped.is_empty() {
                profile.name = known.flipped;
            }
        }
        Ok(profile)
    }

    /// The pinned releases of this range, oldest first.
    pub fn pinned(&self) -> impl Iterator<Item = &'static Pinned> + '_ {
        PINNED
            .iter()
            .filter(|p| Release::parse(p.release).is_ok_and(|r| r.name == self.name))
    }

    /// The ranges sharing `set`, oldest first.
    pub fn of_set(set: usize) -> impl Iterator<Item = &'static Release> {
        RELEASES.iter().filter(move |r| r.set == set)
    }
}

/// `NAME=BOOL[,NAME=BOOL...]` as kube-controller-manager's `--feature-gates` takes it.
pub fn parse_gates(text: &str) -> Result<Vec<(Gate, bool)>, ReleaseError> {
    text.split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|setting| {
            let (name, value) = setting
                .split_once('=')
                .ok_or_else(|| ReleaseError::GateSyntax(setting.to_string()))?;
            let gate = Gate::by_name(name.trim())
                .ok_or_else(|| ReleaseError::UnknownGate(name.trim().to_string()))?;
            let value = value
                .trim()
                .parse()
                .map_err(|_| ReleaseError::GateSyntax(setting.to_string()))?;
            Ok((gate, value))
        })
        .collect()
}

/// The range a release profile's name (plain or gate-flipped) belongs to.
pub fn release_of(name: &str) -> Option<&'static Release> {
    RELEASES
        .iter()
        .find(|r| {
            r.name == name
                || r.gates
                    .iter()
                    .any(|g| !name.is_empty() && g.flipped == name)
        })
        .or_else(|| Release::parse(name).ok())
}

/// The release profile called `name`: a range's name (`1.31`, `1.26.0-1.26.10`), a version
/// (`1.26.4`), or a range's gate-flipped name (`1.35,TaintTolerationComparisonOperators=true`).
pub fn profile_by_name(name: &str) -> Option<Profile> {
    if let Some(r) = RELEASES.iter().find(|r| r.name == name) {
        return Some(r.profile());
    }
    let flipped = RELEASES.iter().find_map(|r| {
        r.gates
            .iter()
            .find(|g| g.flipped == name && !name.is_empty())
            .map(|g| (r, g))
    });
    if let Some((r, g)) = flipped {
        return r.with_gates(&[(g.gate, !g.default)]).ok();
    }
    Release::parse(name).ok().map(Release::profile)
}

#[cfg(test)]
mod tests;
