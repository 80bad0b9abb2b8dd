//! Rule 5 (PROXY-11): an environment operation the path puts after the controller's act at the
//! same instant is placed [`AFTER_MS`](super::AFTER_MS) later, and waits for that act too: on a
//! loaded machine the controller's act can come later than the placement's shift (seen: a
//! status PATCH sent after a successor created 150 ms after the timer that led to it), and the
//! operation would then overtake it. A fixed shift alone leaves the order to the load.

use super::acts::Act;
use super::holds::settle;
use super::GATE_MS;
use crate::check::action::Action;
use crate::check::trace::Trace;
use taintcheck_formats::schedule::{Held, Hold, Resource, Until};

/// One `operations` hold per placed instant whose first environment operation comes after a
/// request or an answer of the controller at the same instant of the path; `at(i)`: where
/// step `i` is placed on the scenario's clock (ms). `holds`: the schedule's other holds. An
/// answer one of them holds back may wait for this very operation (rule 1 holds an answer
/// until the change's event has reached the controller), so the operation then waits for the
/// request instead, which the proxy sees before any hold.
pub(super) fn gates(
    trace: &Trace,
    acts: &[Act],
    holds: &[Hold],
    at: impl Fn(usize) -> i64,
) -> Vec<Hold> {
    let held = |u: Until| match u {
        Until::Answer(r) if holds.iter().any(|h| h.hold == Held::Answer(r.clone())) => {
            Until::Request(r)
        }
        u => u,
    };
    let sign = |act: &Act| sign(act).map(held);
    let mut out: Vec<Hold> = Vec::new();
    for (i, step) in trace.steps.iter().enumerate() {
        if !matches!(step.kind, Action::Env(_)) || matches!(acts[i], Act::Fault) {
            continue;
        }
        let Ok(placed) = u64::try_from(at(i)) else {
            continue;
        };
        if out.iter().any(|h| h.hold == Held::Operations(placed)) {
            // The first operation of an instant is held; the others follow it.
            continue;
        }
        let t = step.time_ms;
        let same_instant = (0..i).rev().take_while(|&j| trace.steps[j].time_ms == t);
        let Some(until) = same_instant.into_iter().find_map(|j| sign(&acts[j])) else {
            continue;
        };
        // The release is latched: a request the path sends earlier too, or its answer, would
        // let it go then.
        let (Until::Request(r) | Until::Answer(r)) = &until else {
            continue;
        };
        let sent = acts[..i]
            .iter()
            .filter(|a| matches!(a, Act::Request { request, .. } if request == r))
            .count();
        if sent > 1 {
            continue;
        }
        out.push(Hold {
            hold: Held::Operations(placed),
            settle_ms: settle(&until),
            until,
            at_most_ms: GATE_MS,
        });
    }
    out
}

/// What the controller is seen doing in `act`: a request about a pod or a node, or receiving
/// the answer to one. An Event is posted by the recorder's goroutine, in no fixed order with
/// the requests, so it is no sign.
fn sign(act: &Act) -> Option<Until> {
    match act {
        Act::Request { request, .. } if request.resource != Resource::Events => {
            Some(Until::Request(request.clone()))
        }
        Act::Answer {
            request: Some(r), ..
        } if r.resource != Resource::Events => Some(Until::Answer(r.clone())),
        _ => None,
    }
}
