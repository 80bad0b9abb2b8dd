//! A path the proxy cannot impose, reordered into one it can where the model allows it
//! (PROXY-11, rule 4). A work's step that the path takes just before an environment change,
//! with nothing sent until the work's next step after it, cannot be kept apart from that next
//! step on a real controller. Taking the earlier step later, just before the next one, often
//! can: the earlier step then waits for an answer the proxy holds (the step that takes in a
//! DELETE's answer, with the map update that follows it). The reordered path is replayed
//! through the model from the same initial state, and kept only if the model takes every
//! action in the new order and the property is still violated, cut at its first violation: it
//! is a counterexample in its own right, not an approximation of one.

use super::super::action::Action;
use super::super::shortest::{discovered, first_discovery};
use super::super::trace::Trace;
use super::super::transition::TaintSys;
use super::acts::acts;
use super::holds::{previous_step, Unforcible};
use stateright::{Model, Path};

/// `trace` with the work's step `u.from` taken just before its step `u.to`, if the model takes
/// that order, it still violates `property` (an id, `EVICT-1`, or a whole name), and the moved
/// step then waits for an answer the proxy can hold. A step that would not wait (a timer's
/// firing, a work's start) happens on the real controller at its own instant, whatever the
/// proxy does: taking it later in the path would only trade one race for another.
pub(super) fn postponed(
    model: &TaintSys,
    trace: &Trace,
    property: &str,
    u: &Unforcible,
) -> Option<Trace> {
    let named = format!("{property} ");
    let wanted = model
        .properties()
        .into_iter()
        .find(|p| p.name == property || p.name.starts_with(&named))?;
    let mut actions: Vec<Action> = trace.steps.iter().map(|s| s.kind.clone()).collect();
    if !(u.from < u.env && u.env < u.to && u.to < actions.len()) {
        return None;
    }
    let moved = actions.remove(u.from);
    actions.insert(u.to - 1, moved);
    let init = trace.states.first()?.clone();
    let path = Path::from_actions(model, init, &actions)?;
    let path = first_discovery(model, wanted.name, path);
    if !discovered(model, &wanted, path.last_state()) {
        return None;
    }
    let trace = Trace::of(model, &path);
    let moved = u.to - 1;
    let shown = acts(model, &trace).ok()?;
    let waits = moved >= shown.len() || previous_step(&shown, moved).is_some_and(|(_, w)| w);
    waits.then_some(trace)
}
