//! Shortest counterexamples (and examples of `sometimes` properties), found by a
//! breadth-first pass of our own.
//!
//! stateright 0.31's BFS records a discovery for an `always` property *every* time it visits a
//! violating state, overwriting the one before (`bfs.rs`, `check_block`). Our safety properties
//! are sticky history bits, so every descendant of a violating state violates too, and the path
//! the checker keeps is the last violating state it visited: usually among the deepest, not the
//! shortest (on `default`, EVICT-1's was 39 steps where 8 suffice). This pass walks the state
//! graph level by level, states and actions in their deterministic order, and keeps the *first*
//! violating state per property: a shortest counterexample, and the same one on every run.
//! Spec: CHECK-2.

use super::action::Action;
use super::state::SysState;
use super::transition::TaintSys;
use stateright::{Expectation, Model, Path, Property};
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use taintcheck_core::fx::{Fx, FxBuild};

/// How a state was first reached: its parent's fingerprint and the action taken there.
pub(super) type Parents = HashMap<u64, Option<(u64, Action)>, FxBuild>;

/// A shortest path to a state that violates each named `always` property, for every name that
/// some reachable state violates. Names that are not `always` properties of the model are ignored.
pub fn counterexamples(
    model: &TaintSys,
    names: &[&'static str],
) -> BTreeMap<&'static str, Path<SysState, Action>> {
    let always: Vec<&'static str> = model
        .properties()
        .iter()
        .filter(|p| p.expectation == Expectation::Always && names.contains(&p.name))
        .map(|p| p.name)
        .collect();
    discoveries(model, &always)
}

/// A shortest path to a discovery for each named property that has one: a state violating an
/// `always` property, or a state satisfying a `sometimes` property (its example; the witness
/// bits are sticky too, MODEL-S6). Names that are not properties of the model are ignored.
///
/// `model` is the whole model, or a share of it ([`super::partition`]): the paths then start at
/// the share's roots, and are shortest from them.
pub fn discoveries<M>(
    model: &M,
    names: &[&'static str],
) -> BTreeMap<&'static str, Path<SysState, Action>>
where
    M: Model<State = SysState, Action = Action>,
{
    let properties = model.properties();
    let mut wanted: Vec<_> = properties
        .iter()
        .filter(|p| names.contains(&p.name))
        .collect();
    let mut found = BTreeMap::new();
    let mut parents: Parents = HashMap::default();
    let mut level: Vec<(u64, SysState)> = Vec::new();
    for init in model.init_states() {
        let fp = fingerprint(&init);
        if let Entry::Vacant(e) = parents.entry(fp) {
            e.insert(None);
            level.push((fp, init));
        }
    }
    let mut actions = Vec::new();
    while !wanted.is_empty() && !level.is_empty() {
        for (fp, state) in &level {
            wanted.retain(|p| {
                if !discovered(model, p, state) {
                    return true;
                }
                found.insert(p.name, path_to(model, &parents, *fp));
                false
            });
        }
        if wanted.is_empty() {
            break;
        }
        let mut next = Vec::new();
        for (fp, state) in &level {
            model.actions(state, &mut actions);
            for action in actions.drain(..) {
                let Some(succ) = model.next_state(state, action.clone()) else {
                    continue;
                };
                if !model.within_boundary(&succ) {
                    continue;
                }
                let succ_fp = fingerprint(&succ);
                if let Entry::Vacant(e) = parents.entry(succ_fp) {
                    e.insert(Some((*fp, action)));
                    next.push((succ_fp, succ));
                }
            }
        }
        level = next;
    }
    found
}

/// The path from an initial state to the state with fingerprint `fp`, replayed so that it carries
/// every intermediate state.
pub(super) fn path_to<M>(model: &M, parents: &Parents, mut fp: u64) -> Path<SysState, Action>
where
    M: Model<State = SysState, Action = Action>,
{
    let mut actions = Vec::new();
    while let Some(Some((parent, action))) = parents.get(&fp) {
        actions.push(action.clone());
        fp = *parent;
    }
    actions.reverse();
    let init = model
        .init_states()
        .into_iter()
        .find(|s| fingerprint(s) == fp)
        .expect("every chain of parents ends at an initial state");
    Path::from_actions(model, init, &actions).expect("the recorded actions replay")
}

/// Fx, as the symmetry representatives use (SipHash showed in profiles of `taintcheck check`).
pub(super) fn fingerprint(state: &SysState) -> u64 {
    let mut h = Fx::default();
    state.hash(&mut h);
    h.finish()
}

/// Whether `state` is a discovery for `p`: it violates an `always` property or satisfies a
/// `sometimes` one.
pub(super) fn discovered<M: Model>(model: &M, p: &Property<M>, state: &M::State) -> bool {
    (p.condition)(model, state) == (p.expectation == Expectation::Sometimes)
}

/// `path` cut at its first state that is a discovery for the property `name` (the path a DFS or
/// simulation found, made no longer than it needs to be; not necessarily a shortest one).
pub fn first_discovery(
    model: &TaintSys,
    name: &str,
    path: Path<SysState, Action>,
) -> Path<SysState, Action> {
    let Some(property) = model.properties().into_iter().find(|p| p.name == name) else {
        return path;
    };
    let steps = path.into_vec();
    let cut = steps
        .iter()
        .position(|(state, _)| discovered(model, &property, state))
        .unwrap_or(steps.len() - 1);
    let init = steps[0].0.clone();
    let actions: Vec<Action> = steps[..cut].iter().filter_map(|(_, a)| a.clone()).collect();
    Path::from_actions(model, init, &actions).expect("a prefix of a checked path replays")
}
