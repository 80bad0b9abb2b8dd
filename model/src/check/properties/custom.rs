//! User-defined properties in the model: the declared ones of a configuration
//! ([`Declared`]) and Rust predicates a test adds ([`crate::check::builder::Check`]), listed
//! after the built-ins and checked exactly like them (same checker, same shortest-path pass,
//! same reports). Spec: PROP-1..PROP-4 (specs/spec.md, "User-defined properties").
//!
//! stateright takes a property's condition as a plain `fn`, so each user property `i` gets the
//! `fn` [`condition::<i>`](condition), which looks its test up in the model: hence
//! [`MAX_CUSTOM`].
//!
//! The history the declared claims need ([`CustomHistory`]) exists only when a configuration
//! declares properties (`History::custom` is `None` otherwise), and holds only what the
//! declared claims read: first taint sightings only for anchored claims, marked UIDs only for
//! `marked_at_most_once`, recent deletion instants only for `at_most_deletions`. Each part is
//! sorted and bounded by the configuration (nodes × taints, incarnations, `count + 1`).

use super::vocabulary::{counts, Claim, Declared};
use super::{eviction_timing, PropertyInfo};
use crate::check::action::Action;
use crate::check::state::{ApiPod, CustomHistory, SysState};
use crate::check::symmetry::Symmetry;
use std::collections::BTreeSet;
use std::fmt;
use std::sync::{Arc, Mutex};
use taintcheck_core::api::{PodKey, Uid};
use taintcheck_core::shared::Shared;
use taintcheck_core::time::Time;
use taintcheck_core::{Effect, EventKind, Verb};

use taintcheck_formats::properties::name_problem;
pub use taintcheck_formats::properties::MAX_CUSTOM;

/// A Rust property's test of a state.
pub type Predicate = Arc<dyn Fn(&SysState) -> bool + Send + Sync>;

/// What decides a user property.
#[derive(Clone)]
enum Test {
    /// A declared claim; its bit in [`CustomHistory::hit`] is the property's index.
    Declared(Claim),
    /// A Rust predicate over states.
    Rust(Predicate),
}

#[derive(Clone)]
struct Entry {
    info: PropertyInfo,
    test: Test,
}

/// A model's user-defined properties, in report order (declared first, then Rust ones).
#[derive(Clone, Default)]
pub struct Custom {
    entries: Vec<Entry>,
    /// Some declared claim needs history.
    declared: bool,
}

impl fmt::Debug for Custom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.entries.iter().map(|e| e.info.name))
            .finish()
    }
}

/// `name` as a `&'static str`, leaked once per distinct name for the life of the process
/// (reports and stateright name properties by `&'static str`).
fn intern(name: &str) -> &'static str {
    static NAMES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(n) = names.get(name) {
        return n;
    }
    let leaked: &'static str = Box::leak(name.to_owned().into_boxed_str());
    names.insert(leaked);
    leaked
}

impl Custom {
    /// The properties a configuration declares (already validated by its reader).
    pub fn declared(declared: &[Declared]) -> Custom {
        let entries = declared
            .iter()
            .take(MAX_CUSTOM)
            .map(|d| {
                let name = intern(&d.name);
                Entry {
                    info: PropertyInfo {
                        name,
                        id: name,
                        always: d.claim.is_safety(),
                    },
                    test: Test::Declared(d.claim.clone()),
                }
            })
            .collect();
        Custom {
            entries,
            declared: !declared.is_empty(),
        }
    }

    /// Adds a Rust property: `always` (every reachable state satisfies `test`) or `sometimes`
    /// (some reachable state does). Err: the name is taken or invalid, or the model is full.
    pub fn add(&mut self, name: &str, always: bool, test: Predicate) -> Result<(), String> {
        if let Some(problem) = name_problem(name) {
            return Err(format!("property {name:?}: Invalid value: {problem}"));
        }
        if self.entries.iter().any(|e| e.info.name == name) {
            return Err(format!("property {name:?}: Duplicate value"));
        }
        if self.entries.len() >= MAX_CUSTOM {
            return Err(format!(
                "property {name:?}: at most {MAX_CUSTOM} user-defined properties"
            ));
        }
        let name = intern(name);
        self.entries.push(Entry {
            info: PropertyInfo {
                name,
                id: name,
                always,
            },
            test: Test::Rust(test),
        });
        Ok(())
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Why symmetry reduction (MODEL-SYM) under `symmetry` could change a verdict: the first
    /// property it could misjudge, if any (spec PROP-SYM). A declared claim is judged by
    /// [`Claim::symmetry_problem`]; a Rust predicate cannot be inspected (it may read any name,
    /// or a work id the representative renumbers), so it is always one.
    pub fn symmetry_problem(&self, symmetry: &Symmetry) -> Option<String> {
        self.entries
            .iter()
            .enumerate()
            .find_map(|(i, e)| match &e.test {
                Test::Declared(claim) => claim.symmetry_problem(symmetry.classes()).map(|why| {
                    let kind = if claim.is_safety() {
                        "always"
                    } else {
                        "sometimes"
                    };
                    format!("properties[{i}].{kind}.{}.pods: {why}", claim.name())
                }),
                Test::Rust(_) => Some(format!(
                "property {:?} is a Rust predicate, which symmetry reduction cannot inspect: it \
                 may tell apart the pods, nodes or works a representative renames (state it in \
                 the configuration's properties: to check it with --symmetry)",
                e.info.name
            )),
            })
    }

    /// Their names, ids and kinds, in report order.
    pub fn infos(&self) -> impl Iterator<Item = &PropertyInfo> {
        self.entries.iter().map(|e| &e.info)
    }

    /// Each one's statement in words, for the Explorer's header.
    pub fn statements(&self) -> Vec<(&'static str, String)> {
        let statement = |e: &Entry| match &e.test {
            Test::Declared(claim) => claim.to_string(),
            Test::Rust(_) if e.info.always => "A Rust predicate every state satisfies.".into(),
            Test::Rust(_) => "A Rust predicate some state satisfies.".into(),
        };
        self.entries
            .iter()
            .map(|e| (e.info.name, statement(e)))
            .collect()
    }

    /// Whether property `i` holds in `s` (for a `sometimes` property: `s` is an example).
    pub(in crate::check) fn holds(&self, i: usize, s: &SysState) -> bool {
        let Some(e) = self.entries.get(i) else {
            return true;
        };
        match &e.test {
            Test::Rust(test) => test(s),
            Test::Declared(claim) => {
                let h = s.history.custom.as_deref();
                let hit = h.is_some_and(|h| h.hit & (1 << i) != 0);
                match claim {
                    Claim::DeletedWithin {
                        pods, taint, to, ..
                    } => !hit && !overdue(s, pods, taint.as_ref(), *to),
                    Claim::EvictedInTime {
                        pods,
                        slack,
                        across_restarts,
                    } => super::bounded_for(
                        s,
                        s.ctrl.profile().comparison_operators,
                        *slack,
                        !across_restarts,
                        |k| pods.matches(k),
                    ),
                    c if c.is_safety() => !hit,
                    _ => hit,
                }
            }
        }
    }

    /// The history of an initial state: the taints it starts with. `None` without declared
    /// properties (no cost then).
    pub(in crate::check) fn initial(&self, s: &SysState) -> Option<Shared<CustomHistory>> {
        if !self.declared {
            return None;
        }
        let mut h = CustomHistory::default();
        self.sight_taints(&mut h, s);
        Some(Shared::new(h))
    }

    /// Records what the step `before` --`action`--> `next` (with `effects`) did that a declared
    /// claim reads: deletions the API server applied for the controller, events, new taints.
    pub(in crate::check) fn observe(
        &self,
        next: &mut SysState,
        before: &SysState,
        action: &Action,
        effects: &[Effect],
    ) {
        let Some(mut h) = next.history.custom.clone() else {
            return;
        };
        // Most steps (informer deliveries, dispatching, internal worker steps) touch nothing a
        // claim reads: no copy for them.
        let relevant = matches!(
            action,
            Action::Env(_) | Action::Tick(_) | Action::ApiRespond(_)
        ) || effects.iter().any(|e| matches!(e, Effect::Event(_)));
        if !relevant {
            return;
        }
        let mut changed = CustomHistory::clone(&h);
        match action {
            Action::Env(_) => self.sight_taints(&mut changed, next),
            Action::Tick(_) => self.forget_old_deletions(&mut changed, next.now),
            Action::ApiRespond(id) => {
                // Applied: the object is gone, or became Terminating (API-2).
                let deleted = before
                    .ctrl
                    .pending_requests()
                    .find(|r| r.id == *id && r.verb == Verb::Delete)
                    .and_then(|r| before.api.pods.get(&r.pod))
                    .filter(|p| {
                        p.deletion.is_none()
                            && next
                                .api
                                .pods
                                .get(&p.pod.key)
                                .is_none_or(|q| q.pod.uid != p.pod.uid || q.deletion.is_some())
                    });
                if let Some(p) = deleted {
                    self.deletion(&mut changed, p, next);
                }
            }
            _ => {}
        }
        for e in effects {
            if let Effect::Event(ev) = e {
                let uid = next.api.pods.get(&ev.pod).map(|p| p.pod.uid.clone());
                self.event(&mut changed, &ev.pod, ev.kind, uid);
            }
        }
        if changed != *h {
            *h.make_mut() = changed;
            next.history.custom = Some(h);
        }
    }

    /// Notes the first sighting of each NoExecute taint on each node, if a claim anchors on
    /// taints.
    fn sight_taints(&self, h: &mut CustomHistory, s: &SysState) {
        if !self.declared_claims().any(|c| c.taint().is_some()) {
            return;
        }
        for n in s.api.nodes.values() {
            for t in n.node.no_execute_taints() {
                let key = (n.node.name.clone(), t.key.clone(), t.value.clone());
                if let Err(i) = h.first_tainted.binary_search_by(|e| e.0.cmp(&key)) {
                    h.first_tainted.insert(i, (key, s.now));
                }
            }
        }
    }

    /// Drops the deletion instants no window of any `at_most_deletions` claim can still hold.
    fn forget_old_deletions(&self, h: &mut CustomHistory, now: Time) {
        let claims: Vec<_> = self.declared_claims().collect();
        h.deletions
            .retain(|(i, at)| match claims.get(usize::from(*i)) {
                Some(Claim::AtMostDeletions { window, .. }) => now.0 - at.0 < window.0,
                _ => false,
            });
    }

    /// The claims, by property index (`None` for Rust properties).
    fn declared_claims(&self) -> impl Iterator<Item = &Claim> {
        self.entries.iter().filter_map(|e| match &e.test {
            Test::Declared(c) => Some(c),
            Test::Rust(_) => None,
        })
    }

    /// A deletion of `p` applied in the step to `next`.
    fn deletion(&self, h: &mut CustomHistory, p: &ApiPod, next: &SysState) {
        let now = next.now;
        let timing = eviction_timing(next, p, next.ctrl.profile().comparison_operators);
        let restarted = next.env.restarted_at.is_some();
        for (i, e) in self.entries.iter().enumerate() {
            let Test::Declared(claim) = &e.test else {
                continue;
            };
            if !claim.pods().matches(&p.pod.key) {
                continue;
            }
            let early = |least: taintcheck_core::time::Duration, h: &CustomHistory| {
                anchor(h, p, claim).is_none_or(|a| now.0 < a.0 + least.0)
            };
            let hit = match claim {
                Claim::NeverDeleted { .. } => true,
                Claim::Deleted {
                    when,
                    after_restart,
                    ..
                } => when.is_none_or(|w| timing == Some(w)) && (restarted || !after_restart),
                Claim::DeletedOnlyIfExposed { .. } => !p.exposed_in_api,
                Claim::NotDeletedBefore { after, .. } => early(*after, h),
                Claim::DeletedWithin { from, .. } => early(*from, h),
                Claim::AtMostDeletions { count, window, .. } => {
                    let i8 = i as u8;
                    h.deletions
                        .retain(|(j, at)| *j != i8 || now.0 - at.0 < window.0);
                    let pos = h.deletions.partition_point(|d| *d <= (i8, now));
                    h.deletions.insert(pos, (i8, now));
                    h.deletions.iter().filter(|(j, _)| *j == i8).count() > usize::from(*count)
                }
                Claim::MarkedAtMostOnce { .. }
                | Claim::Event { .. }
                | Claim::EvictedInTime { .. } => false,
            };
            if hit {
                h.hit |= 1 << i;
            }
        }
    }

    /// An event `kind` about `key` (whose API object, if any, has `uid`).
    fn event(&self, h: &mut CustomHistory, key: &PodKey, kind: EventKind, uid: Option<Uid>) {
        let mut repeated = false;
        if kind == EventKind::MarkingForDeletion
            && self
                .declared_claims()
                .any(|c| matches!(c, Claim::MarkedAtMostOnce { .. }))
        {
            if let Some(uid) = uid {
                match h.marked.binary_search(&uid) {
                    Ok(_) => repeated = true,
                    Err(i) => h.marked.insert(i, uid),
                }
            }
        }
        for (i, e) in self.entries.iter().enumerate() {
            let Test::Declared(claim) = &e.test else {
                continue;
            };
            let hit = match claim {
                Claim::MarkedAtMostOnce { pods } => repeated && pods.matches(key),
                Claim::Event { event, pods } => *event == kind && pods.matches(key),
                _ => false,
            };
            if hit {
                h.hit |= 1 << i;
            }
        }
    }
}

/// The instant a deletion of `p` is measured from: the later of its bind and the first
/// sighting of a counted taint on its node (`None`: no counted taint was ever seen there).
fn anchor(h: &CustomHistory, p: &ApiPod, claim: &Claim) -> Option<Time> {
    let node = p.pod.node_name.as_ref()?;
    let filter = claim.taint().flatten();
    let first = h
        .first_tainted
        .iter()
        .filter(|((n, key, value), _)| {
            n == node
                && filter.is_none_or(|f| {
                    **key == *f.key && f.value.as_deref().is_none_or(|v| **value == *v)
                })
        })
        .map(|(_, at)| *at)
        .min()?;
    Some(first.max(p.bound_since.unwrap_or(first)))
}

/// DeletedWithin's deadline: some matching pod is still on a node later than `to` past the
/// instant a counted taint present there since appeared (or past its bind, if later).
fn overdue(
    s: &SysState,
    pods: &super::vocabulary::Pattern,
    taint: Option<&super::vocabulary::TaintFilter>,
    to: taintcheck_core::time::Duration,
) -> bool {
    s.api.pods.values().any(|p| {
        let (Some(node), Some(bound)) = (p.pod.node_name.as_ref(), p.bound_since) else {
            return false;
        };
        if !pods.matches(&p.pod.key) {
            return false;
        }
        let Some(n) = s.api.nodes.get(node) else {
            return false;
        };
        n.node
            .taints
            .iter()
            .zip(&n.taint_since)
            .filter(|(t, _)| {
                t.effect == taintcheck_core::api::TaintEffect::NoExecute && counts(taint, t)
            })
            .any(|(_, since)| s.now.0 > (*since).max(bound).0 + to.0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::config::CheckConfig;
    use crate::check::symmetry::Permutation;
    use crate::check::transition::TaintSys;
    use stateright::{Model, Representative};
    use std::collections::{HashSet, VecDeque};
    use std::hash::{Hash, Hasher};
    use taintcheck_core::api::NodeName;
    use taintcheck_core::fx::Fx;
    use taintcheck_core::profile::Profile;

    /// Two interchangeable nodes with a pod each; `k` may be added to either, at different
    /// instants; claims that keep first sightings and marked UIDs.
    const TWO_NODES: &str = "nodes: [{name: n1}, {name: n2}]
pods: [{name: a, node: n1}, {name: b, node: n2}]
taints: [k]
operations: [add_taint]
budget: 2
workers: 1
properties:
  - {name: early, always: {not_deleted_before: {taint: k, after: 1s}}}
  - {name: once, always: {marked_at_most_once: {}}}
";

    fn model() -> TaintSys {
        let config = CheckConfig::parse("<config>", "config", TWO_NODES).expect("valid");
        TaintSys::new(Profile::latest(), config)
    }

    /// PROP-SYM: a renaming moves each first sighting to the node's new name and each marked
    /// UID to its pod's new one, and keeps both lists sorted.
    #[test]
    fn renaming_moves_sightings_with_their_node_and_uids_with_their_pod() {
        let s = model().initial_state();
        let uid = |name: &str| {
            let pod = s.api.pods.get(&PodKey::new("default", name));
            pod.expect("configured").pod.uid.clone()
        };
        let (a, b) = (PodKey::new("default", "a"), PodKey::new("default", "b"));
        let (n1, n2): (NodeName, NodeName) = ("n1".into(), "n2".into());
        let swap = Permutation::new(
            [(a.clone(), b.clone()), (b, a)],
            [(n1.clone(), n2.clone()), (n2.clone(), n1.clone())],
            &s.symmetry,
        );
        let sighting = |n: &NodeName, at| ((n.clone(), "k".into(), "".into()), Time(at));
        let mut h = Shared::new(CustomHistory {
            hit: 1,
            first_tainted: vec![sighting(&n1, 0), sighting(&n2, 1000)],
            marked: vec![uid("a")],
            deletions: vec![(0, Time(5))],
        });
        CustomHistory::rename(&mut h, &swap);
        let expected = CustomHistory {
            hit: 1,
            first_tainted: vec![sighting(&n1, 1000), sighting(&n2, 0)],
            marked: vec![uid("b")],
            deletions: vec![(0, Time(5))],
        };
        assert_eq!(*h, expected);
    }

    /// MODEL-SYM with PROP-SYM: on every reachable state, each first sighting the
    /// representative keeps is that of a taint the API shows on that node since then (taints
    /// are only added here), including the states whose representative swaps the nodes.
    #[test]
    fn representatives_keep_sightings_on_their_nodes() {
        let model = model();
        let mut seen = HashSet::new();
        let mut queue: VecDeque<SysState> = model.init_states().into();
        let (mut states, mut moved) = (0, 0);
        while let Some(s) = queue.pop_front() {
            let mut fingerprint = Fx::default();
            s.hash(&mut fingerprint);
            if !seen.insert(fingerprint.finish()) {
                continue;
            }
            states += 1;
            let rep = s.representative();
            let (h, before) = (
                rep.history.custom.as_deref().expect("declared"),
                s.history.custom.as_deref().expect("declared"),
            );
            for ((node, key, value), at) in &h.first_tainted {
                let n = rep.api.nodes.get(node).expect("a sighting names a node");
                let shown = n.node.taints.iter().zip(&n.taint_since);
                assert!(
                    shown
                        .into_iter()
                        .any(|(t, since)| t.key == *key && t.value == *value && since == at),
                    "{node}: {key}={value} at {at:?} in {rep:?}"
                );
            }
            moved += usize::from(h.first_tainted != before.first_tainted);
            let mut actions = Vec::new();
            model.actions(&s, &mut actions);
            let next = actions.into_iter().filter_map(|a| model.next_state(&s, a));
            queue.extend(next.filter(|t| model.within_boundary(t)));
        }
        assert!(
            moved > 0,
            "no representative of {states} states renamed a node"
        );
    }
}
