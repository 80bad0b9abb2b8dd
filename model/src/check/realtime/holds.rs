//! The holds a counterexample's order needs (PROXY-11's three rules), and whether it can be
//! forced from outside the controller at all.

use super::super::trace::Trace;
use super::acts::{Act, Object};
use super::{ANSWER_SETTLE_MS, HOLD_MS, SETTLE_MS};
use taintcheck_core::api::PodKey;
use taintcheck_core::{Actor, RequestId};
use taintcheck_formats::schedule::{Held, Hold, RequestMatch, Until, WatchMatch};

/// An environment change the path puts between two steps of a work that sends nothing in
/// between: indices into the path's steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Unforcible {
    pub env: usize,
    /// The work's step before the change.
    pub from: usize,
    /// The work's next step, after it.
    pub to: usize,
}

impl Unforcible {
    pub(super) fn message(&self, trace: &Trace) -> String {
        format!(
            "cannot be forced from outside the controller: the counterexample puts step {} \
             ({}) between steps {} and {} of its work, which sends nothing in between that \
             the proxy could hold",
            self.env + 1,
            trace.steps[self.env].action,
            self.from + 1,
            self.to + 1
        )
    }
}

/// Whether every environment change the path puts between two steps of a work can be put there
/// from outside: a work's step follows its previous one at once unless it waits for an answer
/// the proxy can hold.
pub(super) fn forcible(acts: &[Act]) -> Result<(), Unforcible> {
    for k in 0..acts.len() {
        let Some((p, waits)) = previous_step(acts, k) else {
            continue;
        };
        if let (false, Some(e)) = (
            waits,
            (p + 1..k).find(|&e| matches!(acts[e], Act::Env { .. })),
        ) {
            return Err(Unforcible {
                env: e,
                from: p,
                to: k,
            });
        }
    }
    Ok(())
}

/// If step `k` is a work's (any of its steps, those that send nothing, as its completion's map
/// update, too) and not its first: the work's step before it, and whether the work waits in
/// between for an answer to one of its requests, which the proxy can hold.
pub(super) fn previous_step(acts: &[Act], k: usize) -> Option<(usize, bool)> {
    let (Act::Request {
        by: by @ Actor::Work(_),
        ..
    }
    | Act::Internal {
        by: by @ Actor::Work(_),
    }) = acts.get(k)?
    else {
        return None;
    };
    let p = acts[..k].iter().rposition(|a| match a {
        Act::Request { by: b, .. } | Act::Internal { by: b } => b == by,
        _ => false,
    })?;
    let waits = acts[p + 1..k].iter().any(|a| {
        matches!(a, Act::Answer { id, .. } if acts[..=p].iter().any(|r| matches!(r,
            Act::Request { id: Some(x), by: b, .. } if x == id && b == by)))
    });
    Some((p, waits))
}

/// The holds the path's order needs.
pub(super) fn holds(acts: &[Act], notes: &mut Vec<String>) -> Vec<Hold> {
    let mut out = Vec::new();
    for (m, act) in acts.iter().enumerate() {
        match act {
            Act::Answer {
                id,
                request: Some(request),
            } => answer_hold(acts, m, *id, request, &mut out, notes),
            Act::Env { objects, watch } => {
                delivery_hold(acts, m, objects, watch.as_ref(), &mut out, notes)
            }
            Act::Request {
                request,
                id: Some(id),
                ..
            } => request_hold(acts, m, *id, request, &mut out, notes),
            _ => {}
        }
    }
    // A hold takes the first thing it matches: one whose match comes earlier in the path too
    // would take that one.
    out.retain(|h: &Hold| {
        let first = match &h.hold {
            Held::Request(r) | Held::Answer(r) => {
                acts.iter()
                    .filter(|a| matches!(a, Act::Request { request, .. } if request == r))
                    .count()
                    <= 1
            }
            Held::Event(w) => {
                acts.iter()
                    .filter(|a| matches!(a, Act::Delivery { watch: Some(x), .. } if x == w))
                    .count()
                    <= 1
            }
            Held::Operations(_) => true,
        };
        if !first {
            let (_, what, _) = h.describe();
            notes.push(format!(
                "{what} happens more than once in the path: a hold would take the first; left \
                 to real time"
            ));
        }
        first
    });
    out
}

/// Rule 1: the answer to request `id` (at `m`) waits while the path has the environment act
/// before the sending work's next step.
fn answer_hold(
    acts: &[Act],
    m: usize,
    id: RequestId,
    request: &RequestMatch,
    out: &mut Vec<Hold>,
    notes: &mut Vec<String>,
) {
    let by = acts[..m].iter().rev().find_map(|a| match a {
        Act::Request {
            id: Some(x), by, ..
        } if *x == id => Some(*by),
        _ => None,
    });
    let Some(by) = by else { return };
    let next = (m + 1..acts.len()).find(|&k| match &acts[k] {
        Act::Request { by: b, .. } | Act::Internal { by: b } => *b == by,
        _ => false,
    });
    let Some(k) = next else { return };
    if !acts[m + 1..k].iter().any(|a| matches!(a, Act::Env { .. })) {
        return;
    }
    match last_sign(&acts[m + 1..k], by) {
        Some(until) => out.push(Hold {
            hold: Held::Answer(request.clone()),
            settle_ms: settle(&until),
            until,
            at_most_ms: HOLD_MS,
        }),
        None => notes.push(format!(
            "the answer to {}: nothing the controller does or receives between it and its \
             work's next request tells the environment's change apart; left to real time",
            request.describe()
        )),
    }
}

/// Rule 2: the environment's change at `i` reaches the controller only after the last thing
/// the path has it do or receive before its informer delivers the change (or, if the path never
/// delivers it, before the path ends).
fn delivery_hold(
    acts: &[Act],
    i: usize,
    objects: &[Object],
    watch: Option<&WatchMatch>,
    out: &mut Vec<Hold>,
    notes: &mut Vec<String>,
) {
    let j = (i + 1..acts.len())
        .find(|&j| matches!(&acts[j], Act::Delivery { object, .. } if objects.contains(object)))
        .unwrap_or(acts.len());
    let Some(until) = acts[i + 1..j].iter().rev().find_map(|a| match a {
        Act::Request { request, .. } => Some(Until::Request(request.clone())),
        Act::Answer {
            request: Some(r), ..
        } => Some(Until::Answer(r.clone())),
        _ => None,
    }) else {
        return;
    };
    match watch {
        Some(watch) => out.push(Hold {
            hold: Held::Event(watch.clone()),
            settle_ms: settle(&until),
            until,
            at_most_ms: HOLD_MS,
        }),
        None => notes.push(
            "an environment change the controller sees late in the path has no watch event a \
             rule tells apart (a taint added, a toleration changed); left to real time"
                .into(),
        ),
    }
}

/// Rule 3: request `id` (sent at `k`) waits while the path changes its pod before the API
/// server answers it, until the API server has made the change (its watch event leaves it).
fn request_hold(
    acts: &[Act],
    k: usize,
    id: RequestId,
    request: &RequestMatch,
    out: &mut Vec<Hold>,
    notes: &mut Vec<String>,
) {
    if request.verb == "get" {
        return;
    }
    let Some(m) =
        (k + 1..acts.len()).find(|&m| matches!(acts[m], Act::Answer { id: x, .. } if x == id))
    else {
        return;
    };
    let pod = request
        .name
        .as_ref()
        .map(|n| PodKey::new(request.namespace.as_deref().unwrap_or("default"), n));
    let change = acts[k + 1..m].iter().rev().find_map(|a| match a {
        Act::Env { objects, watch }
            if pod
                .as_ref()
                .is_some_and(|p| objects.contains(&Object::Pod(p.clone()))) =>
        {
            Some(watch.clone())
        }
        _ => None,
    });
    match change {
        None => {}
        Some(Some(watch)) => out.push(Hold {
            hold: Held::Request(request.clone()),
            until: Until::Arrives(watch),
            at_most_ms: HOLD_MS,
            settle_ms: 0,
        }),
        Some(None) => notes.push(format!(
            "{}: the change the path makes to its pod before the API server applies it has no \
             watch event a rule tells apart; left to real time",
            request.describe()
        )),
    }
}

/// The last thing in `between` the controller is seen doing (not `by`) or receiving.
/// How long a hold released by `until` waits more: a request reaching the proxy has left the
/// controller, an event or an answer is handled a moment after its bytes arrive.
pub(super) fn settle(until: &Until) -> u64 {
    match until {
        Until::Event(_) => SETTLE_MS,
        Until::Answer(_) => ANSWER_SETTLE_MS,
        Until::Request(_) | Until::Arrives(_) => 0,
    }
}

fn last_sign(between: &[Act], by: Actor) -> Option<Until> {
    between.iter().rev().find_map(|a| match a {
        Act::Request { request, by: b, .. } if *b != by => Some(Until::Request(request.clone())),
        Act::Answer {
            request: Some(r), ..
        } => Some(Until::Answer(r.clone())),
        Act::Delivery { watch: Some(w), .. } => Some(Until::Event(w.clone())),
        _ => None,
    })
}
