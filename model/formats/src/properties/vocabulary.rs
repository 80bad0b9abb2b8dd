//! The declarative vocabulary of user-defined properties (a configuration's `properties:`):
//! claims about which pods the controller deletes, when, and which events it records, over the
//! API server's objects and the clock. Spec: PROP-1..PROP-4 (specs/spec.md, "User-defined
//! properties").
//!
//! A claim is either a safety claim (checked `always`: a step that breaks it is remembered, so
//! the counterexample ends at that step) or an occurrence claim (checked `sometimes`: its
//! example ends at the first step where it happens). What a claim needs of the past lives in
//! `CustomHistory` (the model's `check::properties::custom`).

use taintcheck_core::api::{PodKey, Taint};
use taintcheck_core::time::Duration;
use taintcheck_core::EventKind;

/// A user-defined property as a configuration states it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Declared {
    /// The user's name: also its id (`--expect`, `explore --property`, ITF file names).
    pub name: String,
    /// What it claims.
    pub claim: Claim,
}

/// What a declared property claims. "Deleted" means a DELETE the controller sent that the API
/// server applied (the eviction), never the environment's own deletions (ENV-5).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Claim {
    /// Safety: no matching pod is ever deleted.
    NeverDeleted {
        /// The pods it is about.
        pods: Pattern,
    },
    /// Safety: no matching pod is deleted earlier than `after` past its anchor (the later of
    /// its bind and the first instant the API showed a matching taint on its node; no such
    /// taint ever: any deletion is early).
    NotDeletedBefore {
        /// The pods it is about.
        pods: Pattern,
        /// The taints that count (`None`: every NoExecute taint).
        taint: Option<TaintFilter>,
        /// The least delay.
        after: Duration,
    },
    /// Safety: a matching pod is deleted no earlier than `from` past its anchor (as
    /// [`Claim::NotDeletedBefore`]) and is no longer on its node later than `to` past the
    /// instant a matching taint present on the node since then appeared (or the pod's bind,
    /// if later).
    DeletedWithin {
        /// The pods it is about.
        pods: Pattern,
        /// The taints that count (`None`: every NoExecute taint).
        taint: Option<TaintFilter>,
        /// The least delay.
        from: Duration,
        /// The greatest delay.
        to: Duration,
    },
    /// Safety: no window of length `window` holds more than `count` deletions of matching pods.
    AtMostDeletions {
        /// The pods it is about.
        pods: Pattern,
        /// The most deletions a window may hold.
        count: u8,
        /// The window's length.
        window: Duration,
    },
    /// Safety: no incarnation (UID) of a matching pod gets two "Marking for deletion" events.
    MarkedAtMostOnce {
        /// The pods it is about.
        pods: Pattern,
    },
    /// Safety: a matching pod is deleted only if, at some instant since its bind, its node
    /// showed a NoExecute taint the pod does not tolerate forever.
    DeletedOnlyIfExposed {
        /// The pods it is about.
        pods: Pattern,
    },
    /// Safety: no matching pod (not Terminating) is still bound to its node later than `slack`
    /// past the instant its tolerations of the taints the API shows ran out (or its last
    /// toleration change, if later). The taints count from the controller's last restart at
    /// the earliest, unless `across_restarts`.
    EvictedInTime {
        /// The pods it is about.
        pods: Pattern,
        /// The processing time allowed past the deadline.
        slack: Duration,
        /// Deadlines run from the taints' own arrival, across controller restarts.
        across_restarts: bool,
    },
    /// Occurrence: a matching pod is deleted (`when`: with or without a tolerationSeconds
    /// waited out; `after_restart`: after a controller restart).
    Deleted {
        /// The pods it is about.
        pods: Pattern,
        /// How the deletion is timed, if that matters.
        when: Option<Timing>,
        /// Only a deletion after the controller restarted counts.
        after_restart: bool,
    },
    /// Occurrence: the controller records event `event` about a matching pod.
    Event {
        /// Which of the two events.
        event: EventKind,
        /// The pods it is about.
        pods: Pattern,
    },
}

impl Claim {
    /// Every claim's name in a configuration, safety claims first.
    pub const NAMES: [&'static str; 9] = [
        "never_deleted",
        "not_deleted_before",
        "deleted_within",
        "at_most_deletions",
        "marked_at_most_once",
        "deleted_only_if_exposed",
        "evicted_in_time",
        "deleted",
        "event",
    ];

    /// A safety claim (checked `always`), else an occurrence claim (checked `sometimes`).
    pub fn is_safety(&self) -> bool {
        !matches!(self, Claim::Deleted { .. } | Claim::Event { .. })
    }

    /// The pods it is about.
    pub fn pods(&self) -> &Pattern {
        match self {
            Claim::NeverDeleted { pods }
            | Claim::NotDeletedBefore { pods, .. }
            | Claim::DeletedWithin { pods, .. }
            | Claim::AtMostDeletions { pods, .. }
            | Claim::MarkedAtMostOnce { pods }
            | Claim::DeletedOnlyIfExposed { pods }
            | Claim::EvictedInTime { pods, .. }
            | Claim::Deleted { pods, .. }
            | Claim::Event { pods, .. } => pods,
        }
    }

    /// Its name in a configuration (one of [`Claim::NAMES`]).
    pub fn name(&self) -> &'static str {
        let i = match self {
            Claim::NeverDeleted { .. } => 0,
            Claim::NotDeletedBefore { .. } => 1,
            Claim::DeletedWithin { .. } => 2,
            Claim::AtMostDeletions { .. } => 3,
            Claim::MarkedAtMostOnce { .. } => 4,
            Claim::DeletedOnlyIfExposed { .. } => 5,
            Claim::EvictedInTime { .. } => 6,
            Claim::Deleted { .. } => 7,
            Claim::Event { .. } => 8,
        };
        Claim::NAMES[i]
    }

    /// Why symmetry reduction (MODEL-SYM) could change this claim's verdict, if it could; the
    /// reduction may permute the pods of each of `classes` among themselves (each UID with its
    /// pod), and nodes. Spec: PROP-SYM.
    ///
    /// The reduction is sound for a property whose condition has the same value on a state `s`
    /// and on every renamed `σ(s)`. A claim reads pods only through its `pods` pattern; nodes
    /// only as a pod's node, with the taints the API shows there and their first sightings
    /// (`CustomHistory::first_tainted`, renamed with the node); taints by key and value, which
    /// no renaming touches; UIDs only for equality (`CustomHistory::marked`, renamed with the
    /// pods); and otherwise instants, counts and its own bit. So its condition is invariant,
    /// and the claim symmetric, when its pattern matches all or none of each class. A pattern
    /// that splits a class tells two pods apart that a representative may swap: refused.
    pub fn symmetry_problem(&self, classes: &[Vec<PodKey>]) -> Option<String> {
        let pods = self.pods();
        classes.iter().find_map(|class| {
            let matched = class.iter().find(|k| pods.matches(k))?;
            let other = class.iter().find(|k| !pods.matches(k))?;
            Some(format!(
                "{:?} matches pod {} but not pod {}; symmetry reduction treats the two as \
                 interchangeable and would merge states that differ only in which is which",
                pods.0, matched.name, other.name
            ))
        })
    }

    /// The taints it anchors on, if it anchors on taints.
    pub fn taint(&self) -> Option<Option<&TaintFilter>> {
        match self {
            Claim::NotDeletedBefore { taint, .. } | Claim::DeletedWithin { taint, .. } => {
                Some(taint.as_ref())
            }
            _ => None,
        }
    }
}

impl std::fmt::Display for Claim {
    /// The claim in words, for the Explorer's header (as specs/spec.md, PROP-2, defines it).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = |d: &Duration| format!("{}ms", d.0);
        let taint = |t: &Option<TaintFilter>| match t {
            Some(t) => match &t.value {
                Some(v) => format!("the taint {}={v}", t.key),
                None => format!("a taint {}", t.key),
            },
            None => "a NoExecute taint".into(),
        };
        match self {
            Claim::NeverDeleted { pods } => write!(f, "No pod matching {} is evicted.", pods.0),
            Claim::NotDeletedBefore {
                pods,
                taint: t,
                after,
            } => write!(
                f,
                "No pod matching {} is evicted earlier than {} after {} first showed on its node \
                 (or its bind, if later).",
                pods.0,
                ms(after),
                taint(t)
            ),
            Claim::DeletedWithin {
                pods,
                taint: t,
                from,
                to,
            } => write!(
                f,
                "A pod matching {} is evicted no earlier than {} after {} first showed on its \
                 node, and is gone {} after such a taint present since appeared (or its bind).",
                pods.0,
                ms(from),
                taint(t),
                ms(to)
            ),
            Claim::AtMostDeletions {
                pods,
                count,
                window,
            } => write!(
                f,
                "At most {count} evictions of pods matching {} within any {}.",
                pods.0,
                ms(window)
            ),
            Claim::MarkedAtMostOnce { pods } => write!(
                f,
                "No pod object matching {} gets two \"Marking for deletion\" events.",
                pods.0
            ),
            Claim::DeletedOnlyIfExposed { pods } => write!(
                f,
                "A pod matching {} is evicted only if, since its bind, its node showed a \
                 NoExecute taint it does not tolerate forever.",
                pods.0
            ),
            Claim::EvictedInTime {
                pods,
                slack,
                across_restarts,
            } => write!(
                f,
                "No pod matching {} stays on its node later than {} past the instant its \
                 tolerations of its node's NoExecute taints ran out{}.",
                pods.0,
                ms(slack),
                if *across_restarts {
                    ", counting the taints from their arrival across controller restarts"
                } else {
                    ", counting the taints from the controller's last restart"
                }
            ),
            Claim::Deleted {
                pods,
                when,
                after_restart,
            } => write!(
                f,
                "A pod matching {} is evicted{}{}.",
                pods.0,
                match when {
                    None => "",
                    Some(Timing::AtOnce) => " at once (no tolerationSeconds to wait)",
                    Some(Timing::AfterToleration) => " after a tolerationSeconds ran out",
                },
                if *after_restart {
                    " after a controller restart"
                } else {
                    ""
                }
            ),
            Claim::Event { event, pods } => write!(
                f,
                "The controller records {} about a pod matching {}.",
                match event {
                    EventKind::MarkingForDeletion => "\"Marking for deletion\"",
                    EventKind::CancellingDeletion => "\"Cancelling deletion\"",
                },
                pods.0
            ),
        }
    }
}

/// How an eviction is timed, as the API shows the pod's node and tolerations when it is
/// applied: its earliest legal eviction (the spec's `E`) against its exposure start (the latest
/// arrival of a NoExecute taint on its node, or its bind if later).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timing {
    /// No tolerationSeconds left to wait at the exposure start (`E` at or before it).
    AtOnce,
    /// After a tolerationSeconds ran out (`E` later than the exposure start).
    AfterToleration,
}

/// A pod name pattern: `*` stands for any run of characters (`db-*`, `*`, `web`). Pods live in
/// the configuration's one namespace, so the name is the whole key that matters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern(pub String);

impl Pattern {
    /// Whether the pod `key` matches.
    pub fn matches(&self, key: &PodKey) -> bool {
        glob(self.0.as_bytes(), key.name.as_bytes())
    }
}

/// `*`-only glob matching, iterative with one backtrack point (linear in practice, never
/// recursive).
fn glob(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() && pattern[p] == b'*' {
            star = Some((p, t));
            p += 1;
        } else if p < pattern.len() && pattern[p] == text[t] {
            p += 1;
            t += 1;
        } else if let Some((sp, st)) = star {
            p = sp + 1;
            t = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|c| *c == b'*')
}

/// The taints a claim counts: a key, and a value if one is given (`key` or `key=value`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaintFilter {
    /// The taint's key.
    pub key: String,
    /// The taint's value, if it must be this one.
    pub value: Option<String>,
}

impl TaintFilter {
    /// Whether `t` counts.
    pub fn matches(&self, t: &Taint) -> bool {
        *t.key == *self.key && self.value.as_deref().is_none_or(|v| *t.value == *v)
    }
}

/// Whether `t` counts for `filter` (`None`: every taint counts).
pub fn counts(filter: Option<&TaintFilter>, t: &Taint) -> bool {
    filter.is_none_or(|f| f.matches(t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_names_with_stars() {
        let key = |n: &str| PodKey::new("default", n);
        let p = |s: &str| Pattern(s.to_owned());
        assert!(p("db-*").matches(&key("db-0")));
        assert!(!p("db-*").matches(&key("web")));
        assert!(p("*").matches(&key("web")));
        assert!(p("web").matches(&key("web")));
        assert!(!p("web").matches(&key("web-1")));
        assert!(p("*-1").matches(&key("web-1")));
        assert!(p("w*b*1").matches(&key("web-1")));
        assert!(!p("w*x").matches(&key("web")));
    }

    #[test]
    fn a_claim_is_symmetric_when_its_pattern_matches_all_or_none_of_a_class() {
        let keys = |names: &[&str]| names.iter().map(|n| PodKey::new("default", n)).collect();
        let classes: Vec<Vec<PodKey>> = vec![keys(&["db-0", "db-1"]), keys(&["web-0", "web-1"])];
        let never = |p: &str| Claim::NeverDeleted {
            pods: Pattern(p.into()),
        };
        for symmetric in ["*", "db-*", "web-*", "cache-*"] {
            assert_eq!(never(symmetric).symmetry_problem(&classes), None);
        }
        assert_eq!(
            never("db-0").symmetry_problem(&classes).as_deref(),
            Some(
                "\"db-0\" matches pod db-0 but not pod db-1; symmetry reduction treats the two \
                 as interchangeable and would merge states that differ only in which is which"
            )
        );
        assert!(never("*-1").symmetry_problem(&classes).is_some());
        assert_eq!(never("db-0").symmetry_problem(&[]), None, "nothing renamed");
    }

    #[test]
    fn claims_read_as_sentences() {
        let claim = Claim::NotDeletedBefore {
            pods: Pattern("db-*".into()),
            taint: Some(TaintFilter {
                key: "node.kubernetes.io/unreachable".into(),
                value: None,
            }),
            after: Duration(600_000),
        };
        assert_eq!(
            claim.to_string(),
            "No pod matching db-* is evicted earlier than 600000ms after a taint \
             node.kubernetes.io/unreachable first showed on its node (or its bind, if later)."
        );
    }
}
