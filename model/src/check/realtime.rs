//! A counterexample made into what runs on a real controller (PROXY-11): a real-time scenario
//! (the configuration's objects and the path's environment operations, at the path's instants)
//! and a steering schedule (PROXY-8) that keeps the controller's observable acts in the path's
//! order where real time would not. The real controller's timers run on the real clock, so the
//! schedule speaks only of what crosses the proxy: watch events, requests, answers.
//!
//! The rules, each read off the path:
//! * an answer is held while the path has the environment act between it and the next step of
//!   the work that waits for it, until the last thing the controller is seen doing or receiving
//!   in between (a real work's next request follows its answer at once);
//! * a watch event is held until the last request the controller sends, or answer it
//!   receives, between the change and the path's delivery of it (a lagging informer);
//! * a request is held back from the API server while the path changes its object between the
//!   request and the API server's answer, until the API server has made that change.
//!
//! A path that puts an environment change between two steps of a work with nothing the work
//! waits for in between is reordered where the model allows it (rule 4, [`reorder`]), else
//! refused.
//!
//! An environment operation at an instant where the controller acted first is placed
//! [`AFTER_MS`] later, and waits for the controller's last request or answer before it at
//! that instant (rule 5, [`gates`]); one before the controller's first act of its instant is
//! placed [`BEFORE_MS`] earlier; the holds keep whatever the path has after it waiting for it.

use super::action::{Action, EnvOp};
use super::replay::{env_input, EnvInput};
use super::state::SysState;
use super::trace::Trace;
use super::transition::TaintSys;
use acts::{acts, Act};
use gates::gates;
use holds::{forcible, holds};
use std::fmt::Write as _;
use taintcheck_core::api::{Node, PodKey};
use taintcheck_core::time::Duration;
use taintcheck_core::Actor;
use taintcheck_formats::scenario::write::{instant, pod_name, Writer};
use taintcheck_formats::schedule::Schedule;

/// Where the path's clock starts on the scenario's: the controller has listed the objects and
/// the configuration's initial taints are put on then.
pub const ORIGIN_MS: i64 = 1_000;
/// How much later than its instant an operation the controller acted before is placed.
pub const AFTER_MS: i64 = 150;
/// How much earlier an operation that comes before the controller's acts of its instant is.
pub const BEFORE_MS: i64 = 100;
/// How long a hold waits at most: its release comes within the placement's shift and a
/// loopback round trip, or the run diverged from the path.
pub const HOLD_MS: u64 = 450;
/// How long an environment operation waits at most, past its instant, for the controller's
/// act the path puts before it (rule 5): a loaded machine delays that act by more than
/// [`AFTER_MS`], an idle one does not.
pub const GATE_MS: u64 = 2_000;
/// How long a hold released by the controller's receiving a watch event waits more: the
/// model's delivery puts the event in the cache and runs the handlers at once, a real
/// informer a moment after the bytes arrive.
pub const SETTLE_MS: u64 = 50;
/// How long a hold released by the controller's receiving an answer waits more: the answer and
/// a held watch event come on two connections, which nothing orders once their bytes are out.
pub const ANSWER_SETTLE_MS: u64 = 5;

/// The path as a real-time scenario and a schedule.
#[derive(Clone, Debug)]
pub struct RealTime {
    /// The scenario (YAML, specs/scenario-format.md).
    pub scenario: String,
    /// The schedule (JSON, specs/proxy.md).
    pub schedule: Schedule,
    /// Where a rule found nothing the proxy can tell apart, and so left the order to real
    /// time.
    pub notes: Vec<String>,
}

/// The scenario and schedule of `trace`, a counterexample to `property` under `model`; `Err`
/// says why the path has no real-time twin.
pub fn realtime(model: &TaintSys, trace: &Trace, property: &str) -> Result<RealTime, String> {
    if model.config.termination_grace().is_some() {
        return Err(format!(
            "`{}` gives pods a termination grace: the real control plane has no kubelet to \
             confirm a termination (HARNESS-6)",
            model.config.name
        ));
    }
    if model.config.rate_limit.is_some() {
        return Err(format!(
            "`{}` limits the controller's client to its own token bucket: the harness runs \
             every controller with kube-controller-manager's (20 requests/s, burst 30), which \
             a path this short never meets (HARNESS-6)",
            model.config.name
        ));
    }
    // The path starts after the configuration's first instant (MODEL-INIT): a pod that instant
    // deleted is not in its first state, and a real run without it would be another run (a
    // controller that never had that pod's work).
    if let Some(gone) = trace.states.first().and_then(|first| {
        model
            .config
            .pods
            .iter()
            .find(|p| !first.api.pods.contains_key(&p.key()))
    }) {
        return Err(format!(
            "the configuration's first instant deletes {} before the path starts (MODEL-INIT): \
             a real run starts from the configuration, where the controller's work for it comes \
             at the same instant as the path's first operations",
            gone.key()
        ));
    }
    let mut notes = Vec::new();
    let (reordered, acts) = imposable(model, trace, property, &mut notes)?;
    let trace = reordered.as_ref().unwrap_or(trace);
    let initial = trace.states.first().ok_or("an empty path")?;
    let at = |step: usize| placement(trace, &acts, step);

    // The scenario: the objects untainted, their taints on at the origin, then the operations.
    let mut w = Writer::default();
    let zero = instant(Duration(0));
    for n in initial.api.nodes.values() {
        w.put_node(
            &Node {
                name: n.node.name.clone(),
                taints: vec![],
            },
            true,
            zero.clone(),
        );
    }
    for p in initial.api.pods.values() {
        w.put_pod(&p.pod, true, zero.clone());
    }
    for n in initial.api.nodes.values() {
        w.taint_diff(&n.node, instant(Duration(ORIGIN_MS)));
    }
    let mut until = ORIGIN_MS + trace.end_ms();
    for (i, step) in trace.steps.iter().enumerate() {
        let Action::Env(op) = &step.kind else {
            continue;
        };
        let t = at(i);
        until = until.max(t);
        write_op(
            &mut w,
            op,
            &trace.states[i],
            &trace.states[i + 1],
            &acts[i + 1..],
            instant(Duration(t)),
        )?;
    }
    // Long enough for every deadline the run sets (a successor's too) to pass on the real
    // clock, with the latency bound and the model's processing bound as slack.
    let longest = trace
        .states
        .iter()
        .flat_map(|s| s.api.pods.values())
        .flat_map(|p| p.pod.tolerations.iter().filter_map(|t| t.seconds))
        .max()
        .unwrap_or(0);
    until += longest.max(0) * 1_000 + 2 * ORIGIN_MS + model.config.processing_bound_ms;

    let mut schedule = Schedule {
        holds: holds(&acts, &mut notes),
    };
    let gates = gates(trace, &acts, &schedule.holds, at);
    schedule.holds.extend(gates);
    let mut scenario = String::new();
    let name = format!("{}-{}", model.config.name, property.to_lowercase());
    let _ = writeln!(
        scenario,
        "# Written by `taintcheck check --schedule-out` (PROXY-11) from the counterexample to\n\
         # {property} on `{}` under profile {}; its schedule is {name}.json.",
        model.config.name, model.profile.name
    );
    for note in &notes {
        let _ = writeln!(scenario, "# {note}");
    }
    let _ = writeln!(scenario, "name: {name}");
    let _ = writeln!(
        scenario,
        "description: {}",
        serde_json::json!(format!(
            "{} to {property} on `{}` under {}, in real time: its clock starts at {}, the \
             configuration's taints are put on then, and each environment operation follows at \
             the path's instant.",
            if reordered.is_some() {
                "A reordering of the model's shortest counterexample"
            } else {
                "The model's shortest counterexample"
            },
            model.config.name,
            model.profile.name,
            instant(Duration(ORIGIN_MS))
        ))
    );
    let _ = writeln!(scenario, "refs: [{property}]");
    w.write_objects(&mut scenario);
    let _ = writeln!(scenario, "until: {}", instant(Duration(until)));
    Ok(RealTime {
        scenario,
        schedule,
        notes,
    })
}

/// At most this many reorderings of one path (rule 4): each removes one change the proxy
/// cannot impose, and a path has a handful.
const REORDERINGS: usize = 8;

/// `trace`, or the reordering of it that the proxy can impose (rule 4, [`reorder::postponed`]),
/// with what each step shows; `Err`: why neither can be imposed.
fn imposable(
    model: &TaintSys,
    trace: &Trace,
    property: &str,
    notes: &mut Vec<String>,
) -> Result<(Option<Trace>, Vec<Act>), String> {
    let mut reordered: Option<Trace> = None;
    for _ in 0..=REORDERINGS {
        let current = reordered.as_ref().unwrap_or(trace);
        let shown = acts(model, current)?;
        let Err(u) = forcible(&shown) else {
            return Ok((reordered, shown));
        };
        let Some(next) = reorder::postponed(model, current, property, &u) else {
            return Err(u.message(current));
        };
        notes.push(format!(
            "reordered (rule 4): step {} ({}) taken just before step {} of its work, after step \
             {} ({}); the model takes this order and it still violates {property}",
            u.from + 1,
            current.steps[u.from].action,
            u.to + 1,
            u.env + 1,
            current.steps[u.env].action,
        ));
        reordered = Some(next);
    }
    let current = reordered.as_ref().unwrap_or(trace);
    Err(forcible(&acts(model, current)?)
        .err()
        .map_or_else(|| "too many reorderings".into(), |u| u.message(current)))
}

/// Writes the operation `op` (the states before and after it: `before`, `after`) at `at`;
/// `rest`: the acts after it.
fn write_op(
    w: &mut Writer,
    op: &EnvOp,
    before: &SysState,
    after: &SysState,
    rest: &[Act],
    at: String,
) -> Result<(), String> {
    match env_input(op, after, None) {
        EnvInput::PutNode(node) => w.taint_diff(&node, at),
        EnvInput::DeleteNode(name) => w.delete_node(&name, at),
        EnvInput::PutPod(pod) => w.modify_pod(&pod, at),
        EnvInput::DeletePod(key) => w.delete_pod(&key, at),
        // A successor whose predecessor the path has already deleted (the controller's DELETE)
        // is a plain create: a real delete would find nothing.
        EnvInput::RecreatePod(pod) if !before.api.pods.contains_key(&pod.key) => {
            w.put_pod(&pod, false, at)
        }
        EnvInput::RecreatePod(pod) => {
            w.delete_pod(&pod.key, at.clone());
            w.put_pod(&pod, false, at);
        }
        EnvInput::RemovePod(key) => {
            w.forget_pod(&key);
            w.op(at, "forceDelete", serde_json::json!(pod_name(&key)));
        }
        EnvInput::Restart => w.op(at, "restartController", serde_json::json!({})),
        EnvInput::FailNext(_) => {
            // The request the path answers next is the one that fails.
            let Some(request) = rest.iter().find_map(|a| match a {
                Act::Answer { request, .. } => Some(request.clone()),
                _ => None,
            }) else {
                return Ok(());
            };
            let request = request.ok_or("a failing request the path never sent")?;
            let name = request.name.clone().unwrap_or_default();
            let ns = request
                .namespace
                .clone()
                .unwrap_or_else(|| "default".into());
            w.op_with(
                at,
                "failRequests",
                serde_json::json!(request.verb),
                &[
                    ("pod", serde_json::json!(pod_name(&PodKey::new(&ns, &name)))),
                    ("times", serde_json::json!(1)),
                    ("result", serde_json::json!("failed")),
                ],
            );
        }
        EnvInput::Relist(_) => return Err("an informer relists (ENV-13)".into()),
    }
    Ok(())
}

/// Where step `i` (an environment operation) goes on the scenario's clock (ms).
fn placement(trace: &Trace, acts: &[Act], i: usize) -> i64 {
    let t = trace.steps[i].time_ms;
    let same_instant = |j: &usize| trace.steps[*j].time_ms == t;
    let shows = |j: usize| matches!(acts[j], Act::Request { .. } | Act::Internal { .. });
    let acted_before = (0..i).rev().take_while(same_instant).any(|j| {
        matches!(acts[j], Act::Request { .. } | Act::Answer { .. })
            || matches!(acts[j], Act::Internal { by: Actor::Work(_) })
    });
    let acts_after = (i + 1..acts.len()).take_while(same_instant).any(shows);
    let base = ORIGIN_MS + t;
    if matches!(acts[i], Act::Fault) {
        return base - BEFORE_MS;
    }
    if acted_before {
        base + AFTER_MS
    } else if acts_after && t > 0 {
        base - BEFORE_MS
    } else {
        base
    }
}

mod acts;
mod gates;
mod holds;
mod reorder;
#[cfg(test)]
mod tests;
