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
//! An environment operation at an instant where the controller acted first is placed
//! [`AFTER_MS`] later, one before the controller's first act of its instant [`BEFORE_MS`]
//! earlier; the holds keep whatever the path has after it waiting for it.

use super::action::{Action, EnvOp};
use super::replay::{env_input, EnvInput};
use super::state::{Delta, SysState};
use super::trace::Trace;
use super::transition::TaintSys;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use taintcheck_core::api::{Node, NodeName, Pod, PodKey};
use taintcheck_core::effect::{ApiRequest, Effect, EventRecord};
use taintcheck_core::time::Duration;
use taintcheck_core::{Actor, RequestId, Step, Verb};
use taintcheck_formats::scenario::write::{instant, pod_name, Writer};
use taintcheck_formats::schedule::{
    Held, Hold, RequestMatch, Resource, Schedule, Until, WatchMatch,
};

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
/// How long a hold released by the controller's receiving a watch event waits more: the
/// model's delivery puts the event in the cache and runs the handlers at once, a real
/// informer a moment after the bytes arrive.
pub const SETTLE_MS: u64 = 50;

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

/// What one step of the path shows from outside the controller.
#[derive(Clone, Debug)]
enum Act {
    /// The environment changed the API; `watch`: the event it sends, when a rule tells it apart.
    Env {
        objects: Vec<Object>,
        watch: Option<WatchMatch>,
    },
    /// An informer delivered the change of `object`.
    Delivery {
        object: Object,
        watch: Option<WatchMatch>,
    },
    /// The controller sent a request (an Event's POST too); `by`: the work, for requests.
    Request {
        request: RequestMatch,
        id: Option<RequestId>,
        by: Actor,
    },
    /// A controller step that shows nothing.
    Internal { by: Actor },
    /// The API server answered (and applied) request `id`.
    Answer {
        id: RequestId,
        request: Option<RequestMatch>,
    },
    /// The environment arms a fault: the proxy fails the next such request whenever it is
    /// armed before it, so its instant does not matter.
    Fault,
    /// The clock.
    Tick,
}

/// An object an act is about.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Object {
    Node(NodeName),
    Pod(PodKey),
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
    let initial = trace.states.first().ok_or("an empty path")?;
    let mut notes = Vec::new();
    let acts = acts(model, trace)?;
    forcible(trace, &acts)?;
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

    let schedule = Schedule {
        holds: holds(&acts, &mut notes),
    };
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
            "The model's shortest counterexample to {property} on `{}` under {}, in real time: \
             its clock starts at {}, the configuration's taints are put on then, and each \
             environment operation follows at the path's instant.",
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

/// What each step of the path shows from outside.
fn acts(model: &TaintSys, trace: &Trace) -> Result<Vec<Act>, String> {
    let mut senders: BTreeMap<RequestId, RequestMatch> = BTreeMap::new();
    let mut out = Vec::new();
    for (i, step) in trace.steps.iter().enumerate() {
        let (before, after) = (&trace.states[i], &trace.states[i + 1]);
        let act = match &step.kind {
            Action::Tick(_) => Act::Tick,
            Action::InformerDeliverNode => match before.nodes.pending.front() {
                Some(Delta::Upsert(n)) => {
                    let name = n.node.name.clone();
                    let removed = before.nodes.cache.get(&name).and_then(|old| {
                        old.node
                            .taints
                            .iter()
                            .find(|t| !n.node.taints.iter().any(|x| x.same_identity(t)))
                            .map(|t| t.key.to_string())
                    });
                    Act::Delivery {
                        watch: removed.map(|key| WatchMatch {
                            removes_taint: Some(key),
                            ..node_watch(&name, "MODIFIED")
                        }),
                        object: Object::Node(name),
                    }
                }
                Some(Delta::Delete(name)) => Act::Delivery {
                    watch: Some(node_watch(name, "DELETED")),
                    object: Object::Node(name.clone()),
                },
                None => Act::Tick,
            },
            Action::InformerDeliverPod => match before.pods.pending.front() {
                Some(Delta::Upsert(p)) => {
                    let old = before.pods.cache.get(&p.pod.key);
                    let added = old.is_none_or(|o| o.pod.uid != p.pod.uid);
                    // A successor: another UID held the name before (in the API's history).
                    let successor = trace.states[0]
                        .api
                        .pods
                        .get(&p.pod.key)
                        .is_some_and(|first| first.pod.uid != p.pod.uid);
                    Act::Delivery {
                        watch: added.then(|| WatchMatch {
                            successor,
                            ..pod_watch(&p.pod, "ADDED")
                        }),
                        object: Object::Pod(p.pod.key.clone()),
                    }
                }
                Some(Delta::Delete(key)) => Act::Delivery {
                    watch: None,
                    object: Object::Pod(key.clone()),
                },
                None => Act::Tick,
            },
            Action::Controller(s) => {
                let effects = model
                    .outcome(before, &step.kind)
                    .map(|o| o.effects)
                    .unwrap_or_default();
                let by = Step::actor(s);
                let mut shown = effects.iter().filter_map(|e| match e {
                    Effect::Api(r) => Some((request_match(r), Some(r.id))),
                    Effect::Event(e) => Some((event_match(e), None)),
                    _ => None,
                });
                match (shown.next(), shown.next()) {
                    (Some((request, id)), None) => {
                        if let Some(id) = id {
                            senders.insert(id, request.clone());
                        }
                        Act::Request { request, id, by }
                    }
                    (None, _) => Act::Internal { by },
                    // Two acts in one step (an Event and a request): the request is what a
                    // rule orders by, the Event goes out from another goroutine.
                    (Some(first), Some(second)) => {
                        let (request, id) = if first.1.is_some() { first } else { second };
                        if let Some(id) = id {
                            senders.insert(id, request.clone());
                        }
                        Act::Request { request, id, by }
                    }
                }
            }
            Action::ApiRespond(id) => Act::Answer {
                id: *id,
                request: senders.get(id).cloned(),
            },
            Action::Env(op) => env_act(op, before, after)?,
        };
        out.push(act);
    }
    Ok(out)
}

/// Whether every environment change the path puts between two steps of a work can be put there
/// from outside: a work's step follows its previous one at once unless it waits for an answer
/// the proxy can hold.
fn forcible(trace: &Trace, acts: &[Act]) -> Result<(), String> {
    for (k, act) in acts.iter().enumerate() {
        let Act::Request {
            by: by @ Actor::Work(_),
            ..
        } = act
        else {
            continue;
        };
        let Some(p) = acts[..k].iter().rposition(|a| match a {
            Act::Request { by: b, .. } | Act::Internal { by: b } => b == by,
            _ => false,
        }) else {
            continue;
        };
        let waits = acts[p + 1..k].iter().any(|a| {
            matches!(a, Act::Answer { id, .. } if acts[..=p].iter().any(|r| matches!(r,
                Act::Request { id: Some(x), by: b, .. } if x == id && b == by)))
        });
        if let (false, Some(e)) = (
            waits,
            (p + 1..k).find(|&e| matches!(acts[e], Act::Env { .. })),
        ) {
            return Err(format!(
                "cannot be forced from outside the controller: the counterexample puts step {} \
                 ({}) between steps {} and {} of its work, which sends nothing in between that \
                 the proxy could hold",
                e + 1,
                trace.steps[e].action,
                p + 1,
                k + 1
            ));
        }
    }
    Ok(())
}

/// The environment's act: the objects it changes and the watch event a rule can tell apart.
fn env_act(op: &EnvOp, before: &SysState, after: &SysState) -> Result<Act, String> {
    let pod_after = |key: &PodKey| after.api.pods.get(key).map(|p| p.pod.clone());
    Ok(match op {
        EnvOp::AddTaint { node, .. } => Act::Env {
            objects: vec![Object::Node(node.clone())],
            watch: None,
        },
        EnvOp::RemoveTaint { node, key } => Act::Env {
            objects: vec![Object::Node(node.clone())],
            watch: Some(WatchMatch {
                removes_taint: Some(key.to_string()),
                ..node_watch(node, "MODIFIED")
            }),
        },
        EnvOp::DeleteNode { node } => Act::Env {
            objects: vec![Object::Node(node.clone())],
            watch: Some(node_watch(node, "DELETED")),
        },
        EnvOp::AppendToleration { pod, .. } | EnvOp::SetSeconds { pod, .. } => Act::Env {
            objects: vec![Object::Pod(pod.clone())],
            watch: None,
        },
        EnvOp::BindPod { pod, .. } => Act::Env {
            objects: vec![Object::Pod(pod.clone())],
            watch: None,
        },
        EnvOp::RecreatePod { pod, .. } => Act::Env {
            objects: vec![Object::Pod(pod.clone())],
            watch: pod_after(pod).map(|p| WatchMatch {
                successor: true,
                ..pod_watch(&p, "ADDED")
            }),
        },
        EnvOp::DeletePod { pod } | EnvOp::KubeletConfirms { pod } | EnvOp::ForceDelete { pod } => {
            let gone = before.api.pods.get(pod).map(|p| p.pod.clone());
            Act::Env {
                objects: vec![Object::Pod(pod.clone())],
                watch: gone.map(|p| pod_watch(&p, "DELETED")),
            }
        }
        EnvOp::Restart => Act::Env {
            objects: vec![],
            watch: None,
        },
        EnvOp::FailNextCall => Act::Fault,
        EnvOp::DropWatch(_) => {
            return Err(
                "an informer's watch expires (ENV-13): the proxy does not end a watch with \
                 410 Gone yet"
                    .into(),
            )
        }
    })
}

/// Writes the operation `op` (the state after it: `after`) at `at`; `rest`: the acts after it.
fn write_op(
    w: &mut Writer,
    op: &EnvOp,
    after: &SysState,
    rest: &[Act],
    at: String,
) -> Result<(), String> {
    match env_input(op, after, None) {
        EnvInput::PutNode(node) => w.taint_diff(&node, at),
        EnvInput::DeleteNode(name) => w.delete_node(&name, at),
        EnvInput::PutPod(pod) => w.modify_pod(&pod, at),
        EnvInput::DeletePod(key) => w.delete_pod(&key, at),
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

/// The holds the path's order needs.
fn holds(acts: &[Act], notes: &mut Vec<String>) -> Vec<Hold> {
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
    if !matches!(acts[k], Act::Request { .. }) {
        return;
    }
    if !acts[m + 1..k].iter().any(|a| matches!(a, Act::Env { .. })) {
        return;
    }
    match last_sign(&acts[m + 1..k], by) {
        Some(until) => out.push(Hold {
            hold: Held::Answer(request.clone()),
            settle_ms: if matches!(until, Until::Event(_)) {
                SETTLE_MS
            } else {
                0
            },
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
            until,
            at_most_ms: HOLD_MS,
            settle_ms: 0,
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

fn node_watch(name: &NodeName, kind: &str) -> WatchMatch {
    WatchMatch {
        resource: Resource::Nodes,
        namespace: None,
        name: name.to_string(),
        kind: Some(kind.into()),
        node: None,
        removes_taint: None,
        successor: false,
    }
}

fn pod_watch(pod: &Pod, kind: &str) -> WatchMatch {
    WatchMatch {
        resource: Resource::Pods,
        namespace: Some(pod.key.namespace.to_string()),
        name: pod.key.name.to_string(),
        kind: Some(kind.into()),
        node: pod.node_name.as_ref().map(|n| n.to_string()),
        removes_taint: None,
        successor: false,
    }
}

/// The proxy's match of a request the core sends.
fn request_match(r: &ApiRequest) -> RequestMatch {
    let pod = |verb: &str, subresource: Option<&str>| RequestMatch {
        verb: verb.into(),
        resource: Resource::Pods,
        namespace: Some(r.pod.namespace.to_string()),
        name: Some(r.pod.name.to_string()),
        subresource: subresource.map(Into::into),
        message: None,
    };
    match &r.verb {
        Verb::Get => pod("get", None),
        Verb::GetNode(node) => RequestMatch {
            verb: "get".into(),
            resource: Resource::Nodes,
            namespace: None,
            name: Some(node.to_string()),
            subresource: None,
            message: None,
        },
        Verb::PatchDisruptionTarget => pod("patch", Some("status")),
        Verb::Delete => pod("delete", None),
    }
}

/// The proxy's match of an Event the core records: its namespace and the words before the
/// pod (the message names the pod by its real name, which a run renames).
fn event_match(e: &EventRecord) -> RequestMatch {
    let message = e.message();
    let words = message.split(" Pod ").next().unwrap_or(&message);
    let words = words.strip_suffix(" of").unwrap_or(words);
    RequestMatch {
        verb: "create".into(),
        resource: Resource::Events,
        namespace: Some(e.pod.namespace.to_string()),
        name: None,
        subresource: None,
        message: Some(words.to_string()),
    }
}

#[cfg(test)]
mod tests;
