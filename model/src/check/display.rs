//! Human-readable actions, steps and counterexamples, and the Explorer's SVG timeline.
//! Nothing here decides anything; it only renders what the model and the core did.

use super::action::{Action, EnvOp};
use super::outcome::Outcome;
use super::state::SysState;
use stateright::Path;
use taintcheck_core::api::{Pod, Taint};
use taintcheck_core::{Effect, Immediate, NodePhase, Note, Step, Verb, Worker};

mod state;
mod statement;
pub mod timeline;

/// `[k=v:NoExecute, k2:NoExecute]`.
pub fn taints(taints: &[Taint]) -> String {
    let items: Vec<String> = taints.iter().map(taint).collect();
    format!("[{}]", items.join(", "))
}

/// Upstream `Taint.ToString`'s two common forms.
pub fn taint(t: &Taint) -> String {
    if t.value.is_empty() {
        format!("{}:{}", t.key, t.effect)
    } else {
        format!("{}={}:{}", t.key, t.value, t.effect)
    }
}

/// `default/p1 (uid p1-1) on n1 tolerating [k:NoExecute for 2s]`.
pub fn pod(p: &Pod) -> String {
    let tols: Vec<String> = p
        .tolerations
        .iter()
        .map(|t| {
            let key = if t.key.is_empty() { "*" } else { &t.key };
            let what = match t.operator {
                taintcheck_core::api::Operator::Equal => format!("{key}={}", t.value),
                _ => key.to_string(),
            };
            let effect = t.effect.as_ref().map(|e| e.as_str()).unwrap_or("*");
            match t.seconds {
                Some(s) => format!("{what}:{effect} for {s}s"),
                None => format!("{what}:{effect} forever"),
            }
        })
        .collect();
    format!(
        "{} (uid {}) {} tolerating [{}]",
        p.key,
        p.uid,
        match &p.node_name {
            Some(n) => format!("on {n}"),
            None => "pending".to_string(),
        },
        tols.join(", ")
    )
}

/// The Explorer's action label.
pub fn action(a: &Action) -> String {
    match a {
        Action::Tick(t) => format!("clock advances to {}ms", t.0),
        Action::InformerDeliverNode => "node informer delivers the next event".into(),
        Action::InformerDeliverPod => "pod informer delivers the next event".into(),
        Action::Controller(step) => controller_step(step),
        Action::ApiRespond(id) => format!("api server answers request #{}", id.0),
        Action::Env(op) => env(op),
    }
}

fn controller_step(step: &Step) -> String {
    match step {
        Step::DispatchNode => "node dispatcher sends the next node item to its shard".into(),
        Step::DispatchPod => "pod dispatcher sends the next pod item to its shard".into(),
        Step::WorkerTakeNode(w) => format!("worker {w} takes a node item"),
        Step::WorkerTakePod(w) => format!("worker {w} takes a pod item"),
        Step::WorkerContinue {
            worker,
            immediate,
            pick,
        } => {
            let pick = match pick {
                0 => String::new(),
                n => format!(" with listed pod +{n}"),
            };
            match immediate {
                Immediate::Nil => format!("worker {worker} continues{pick}"),
                Immediate::Timer => {
                    format!("worker {worker} continues{pick} (two Now()s: a real timer)")
                }
            }
        }
        Step::FireTimer(id) => format!("timer #{} fires", id.0),
        Step::StartWork(id) => format!("work #{} starts", id.0),
        Step::ContinueWork(id) => format!("work #{} takes its next step", id.0),
        Step::CompleteWork(id) => format!("work #{} completes (map update)", id.0),
    }
}

/// The action with what the state says about it (which node a worker handles).
pub fn describe(s: &SysState, a: &Action) -> String {
    let Action::Controller(Step::WorkerContinue {
        worker,
        immediate,
        pick,
    }) = a
    else {
        return action(a);
    };
    let timer = match immediate {
        Immediate::Nil => "",
        Immediate::Timer => " (two Now()s: a real timer)",
    };
    match s.ctrl.shards().get(*worker).map(|sh| &sh.worker) {
        Some(Worker::Node { node, phase, .. }) => match phase {
            NodePhase::Updated { taints: t } => {
                format!(
                    "worker {worker} handles node {node}: taints {}, lists its pods{timer}",
                    taints(t)
                )
            }
            NodePhase::Pods {
                taints: t,
                pods,
                next,
                ..
            } => match pods.get(next + usize::from(*pick)) {
                Some(p) => format!(
                    "worker {worker} handles node {node}: taints {} for pod {}{timer}",
                    taints(t),
                    p.key
                ),
                None => format!("worker {worker} finishes node {node}"),
            },
        },
        Some(Worker::Draining { pod }) => {
            format!(
                "worker {worker} handles pod item {} on {}{timer}",
                pod.key,
                pod.node_str()
            )
        }
        _ => action(a),
    }
}

fn env(op: &EnvOp) -> String {
    match op {
        EnvOp::AddTaint { node, taint } => format!("env: add taint #{taint} to node {node}"),
        EnvOp::RemoveTaint { node, key } => {
            format!("env: remove taint {key}:NoExecute from node {node}")
        }
        EnvOp::AppendToleration { pod, choice } => {
            format!("env: append toleration #{choice} to {pod}")
        }
        EnvOp::SetSeconds {
            pod,
            toleration,
            seconds,
        } => match seconds {
            Some(s) => {
                format!("env: set tolerationSeconds of {pod} toleration {toleration} to {s}s")
            }
            None => format!("env: make {pod} toleration {toleration} tolerate forever"),
        },
        EnvOp::DeletePod { pod } => format!("env: delete pod {pod}"),
        EnvOp::RecreatePod { pod, node } => match node {
            Some(n) => format!("env: recreate pod {pod} with a new uid on {n}"),
            None => format!("env: recreate pod {pod} with a new uid, pending"),
        },
        EnvOp::BindPod { pod, node } => format!("env: scheduler binds {pod} to {node}"),
        EnvOp::DeleteNode { node } => format!("env: delete node {node}"),
        EnvOp::Restart => "env: restart the controller".into(),
        EnvOp::FailNextCall => "env: the next API call will fail".into(),
        EnvOp::KubeletConfirms { pod } => format!("env: the kubelet confirms {pod} terminated"),
        EnvOp::ForceDelete { pod } => format!("env: force delete (or PodGC) removes {pod}"),
        EnvOp::DropWatch(w) => format!("env: the {w:?} watch expires (410 Gone)"),
    }
}

/// One effect in words.
pub fn effect(e: &Effect) -> String {
    match e {
        Effect::Event(ev) => format!("event \"{}\"", ev.message()),
        Effect::Api(r) => {
            let target = match &r.verb {
                Verb::Get => format!("GET {}", r.pod),
                Verb::GetNode(node) => format!("GET node {node} (for {})", r.pod),
                Verb::PatchDisruptionTarget => format!("PATCH DisruptionTarget {}", r.pod),
                Verb::Delete => format!("DELETE {}", r.pod),
            };
            let preconditions = match (&r.uid, r.version) {
                (Some(uid), Some(rv)) => format!(" (uid {uid}, resourceVersion {rv})"),
                (Some(uid), None) => format!(" (uid {uid})"),
                (None, Some(rv)) => format!(" (resourceVersion {rv})"),
                (None, None) => String::new(),
            };
            format!("{target}{preconditions} as request #{}", r.id.0)
        }
        Effect::ArmTimer { id, fire_at } => format!("arm timer #{} for {}ms", id.0, fire_at.0),
        Effect::CancelTimer { id } => format!("stop timer #{}", id.0),
        Effect::Decision(d) => {
            let p = &d.pod;
            match d.note {
                Note::EvictNow => format!("evict {p} now"),
                Note::Scheduled { fire_at } => {
                    format!("schedule eviction of {p} at {}ms", fire_at.0)
                }
                Note::AlreadyExisting => format!("{p}: work already exists, skipped"),
                Note::KeptExisting { fire_at } => {
                    format!("keep the existing eviction of {p} at {}ms", fire_at.0)
                }
                Note::Rescheduled { fire_at } => {
                    format!("move the eviction of {p} to {}ms", fire_at.0)
                }
                Note::ToleratedForever => format!("{p} tolerated forever: cancel"),
                Note::ForeverNotCancelled => {
                    format!("{p} tolerated forever, but the scheduled deletion is kept")
                }
                Note::ZeroTaints => format!("processPodOnNode({p}) with zero taints"),
                Note::NotOurNode => format!("{p} is bound to another node: nothing done"),
                Note::Suppressed => format!("work for {p} was cancelled before it started"),
                Note::RecheckAbandoned => format!("re-check: {p} no longer to be deleted"),
                Note::LiveRecheckAbandoned => {
                    format!("live read: {p} is another or an unbound pod now, abandoned")
                }
                Note::LiveRecheckDeferred => {
                    format!("live read: the API does not call for deleting {p} now, retry later")
                }
                Note::GaveUp => format!("give up deleting {p}"),
            }
        }
    }
}

/// What a step did: the action, then the notes and effects it produced.
pub fn step(before: &SysState, a: &Action, out: &Outcome) -> String {
    let mut s = describe(before, a);
    let mut parts: Vec<String> = out.notes.as_slice().to_vec();
    parts.extend(out.effects.iter().map(effect));
    if !parts.is_empty() {
        s.push_str(" → ");
        s.push_str(&parts.join("; "));
    }
    s
}

/// A path as numbered steps with times: `  3. t=2000ms  <step>`. `outcome` is the model's
/// transition, notes included (`None`: not enabled).
pub fn steps(
    path: &Path<SysState, Action>,
    outcome: impl Fn(&SysState, &Action) -> Option<Outcome>,
) -> Vec<String> {
    let mut lines = Vec::new();
    for (i, (state, action)) in path.clone().into_vec().into_iter().enumerate() {
        let Some(action) = action else { continue };
        let text = match outcome(&state, &action) {
            Some(out) => step(&state, &action, &out),
            None => action_text(&action),
        };
        lines.push(format!("{:>3}. t={}ms  {}", i + 1, state.now.0, text));
    }
    lines
}

fn action_text(a: &Action) -> String {
    action(a)
}

/// What the timeline explains besides the path: its title, the property asked about, and the
/// model's judgement of a state.
pub struct Explain<O, V> {
    /// The header's first line.
    pub title: String,
    /// The property the picture is about, shown first with its statement.
    pub focus: Option<&'static str>,
    /// The model's transition, notes included, as for [`steps`].
    pub outcome: O,
    /// The names of the `always` properties a state violates, in the model's order.
    pub violated: V,
    /// The user-defined properties' statements (the built-ins' come from specs/spec.md).
    pub statements: Vec<(&'static str, String)>,
}

/// The Explorer's timeline of `path` ([`timeline`]): the property asked about (or else every
/// property the path violates) with the step that first violates it, then the steps over the
/// model's clock and in words.
pub fn svg<O, V>(path: Path<SysState, Action>, explain: Explain<O, V>) -> String
where
    O: Fn(&SysState, &Action) -> Option<Outcome>,
    V: Fn(&SysState) -> Vec<&'static str>,
{
    let path = path.into_vec();
    let mut first_violation: Vec<(&'static str, usize)> = Vec::new();
    for (i, (state, _)) in path.iter().enumerate() {
        for name in (explain.violated)(state) {
            if !first_violation.iter().any(|(n, _)| *n == name) {
                first_violation.push((name, i));
            }
        }
    }
    let mut verdicts: Vec<timeline::Verdict> = Vec::new();
    if let Some(focus) = explain.focus {
        verdicts.push(verdict(focus, &first_violation, &explain.statements));
    }
    for (name, _) in &first_violation {
        if Some(*name) != explain.focus {
            verdicts.push(verdict(name, &first_violation, &explain.statements));
        }
    }
    let steps = path
        .windows(2)
        .filter_map(|w| {
            let ((before, action), (after, _)) = (&w[0], &w[1]);
            let action = action.as_ref()?;
            let outcome = (explain.outcome)(before, action);
            let text = match &outcome {
                Some(out) => step(before, action, out),
                None => self::action(action),
            };
            let deletes = before
                .api
                .pods
                .iter()
                .any(|(k, p)| after.api.pods.get(k).is_none_or(|q| q.pod.uid != p.pod.uid));
            Some(timeline::StepView {
                now: before.now,
                action,
                outcome,
                text,
                deletes,
            })
        })
        .collect();
    timeline::svg(&timeline::Picture {
        title: explain.title,
        verdicts,
        steps,
    })
}

fn verdict(
    name: &'static str,
    first_violation: &[(&'static str, usize)],
    statements: &[(&'static str, String)],
) -> timeline::Verdict {
    let id = name.split(' ').next().unwrap_or(name);
    let user = statements.iter().find(|(n, _)| *n == name);
    timeline::Verdict {
        name,
        statement: match user {
            Some((_, s)) => s.clone(),
            None => statement::of(id).unwrap_or_default(),
        },
        violated_at: first_violation
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, i)| *i),
    }
}
