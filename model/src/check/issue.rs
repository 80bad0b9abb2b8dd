//! `taintcheck report`: a violated property written up as the issue an upstream maintainer
//! would want to read: title, affected Kubernetes versions (the releases with the profile's switches), one
//! paragraph, the configuration, the numbered timeline with times and the upstream function of
//! each step ([`upstream`](super::upstream)), the expected behaviour and the commands that
//! reproduce it. Deterministic (the shortest counterexample of CHECK-2, no timings), so it is
//! snapshot-tested. Spec: CHECK-5.

use super::config::CheckConfig;
use super::display;
use super::properties::{PropertyInfo, PROPERTIES};
use super::shortest;
use super::trace::Trace;
use super::transition::TaintSys;
use super::upstream;
use std::fmt::Write;

/// What a violation of a property means, in a maintainer's words: the title's phrase and the
/// behaviour expected instead.
struct Meaning {
    id: &'static str,
    title: &'static str,
    expected: &'static str,
}

const MEANINGS: &[Meaning] = &[
    Meaning {
        id: "EVICT-1",
        title: "pod evicted after the controller observed its NoExecute taint removed",
        expected: "Once the controller's caches show the node without a NoExecute taint the pod \
                   does not tolerate forever, no DELETE for that pod is sent: a timer that \
                   already fired re-checks before deleting, or is cancelled in time.",
    },
    Meaning {
        id: "EVICT-2",
        title: "pod evicted before its tolerationSeconds elapsed",
        expected: "A pod is deleted no earlier than its earliest legal eviction: over the \
                   NoExecute taints it does not tolerate forever, the least of (the later of \
                   the taint's and the pod's arrival) plus the matching toleration's seconds, \
                   with the tolerations the pod has now.",
    },
    Meaning {
        id: "LIVE-1",
        title: "pod not evicted in time",
        expected: "A pod bound to a node with a NoExecute taint it does not tolerate forever is \
                   deleted by its earliest legal eviction plus the processing bound; a change of \
                   its tolerations starts no earlier obligation.",
    },
    Meaning {
        id: "LIVE-2",
        title: "a controller restart resets the tolerationSeconds countdown",
        expected: "A pod's eviction deadline counts from when the taint was added, also across a \
                   restart of kube-controller-manager.",
    },
    Meaning {
        id: "UID-1",
        title: "a pod deleted that no eviction decision was made for",
        expected: "Only the pod object (UID) an eviction decision was made for is deleted; a \
                   successor recreated with the same name is judged on its own.",
    },
    Meaning {
        id: "JUST-1",
        title: "pod deleted though the API never showed it an untolerated taint since its bind",
        expected: "A pod is deleted only if, at some instant since it was bound, the API server \
                   showed its node with a NoExecute taint it does not tolerate forever.",
    },
    Meaning {
        id: "CANCEL-1",
        title: "\"Cancelling deletion\" event while the deletion goes ahead",
        expected: "After the event \"Cancelling deletion of Pod ns/name\", no DELETE for that pod \
                   is sent or applied unless a new eviction decision or a new work start for it \
                   comes in between.",
    },
    Meaning {
        id: "CANCEL-2",
        title: "a write for a pod after \"Cancelling deletion\" of it",
        expected: "After the event \"Cancelling deletion of Pod ns/name\", no PATCH of its \
                   status and no DELETE for that pod is sent unless a new eviction decision or \
                   a new work start for it comes in between, so no DisruptionTarget condition \
                   is left on a pod that stays.",
    },
    Meaning {
        id: "QUEUE-1",
        title: "a work-queue key handled twice or by the wrong shard",
        expected: "Every key in flight is in its queue's processing set and in one place, on the \
                   shard fnv32a(node) mod workers.",
    },
    Meaning {
        id: "CORE-PRE",
        title: "processPodOnNode reached with zero taints",
        expected: "processPodOnNode is never called with an empty taint list.",
    },
    Meaning {
        id: "CONV-1",
        title: "taintedNodes diverges from the API when the controller is idle",
        expected: "When nothing is in flight, taintedNodes equals the API's non-empty NoExecute \
                   taint lists.",
    },
    Meaning {
        id: "TIMER-1",
        title: "an armed eviction timer orphaned: no later cancel can stop it",
        expected: "Every armed, uncancelled timer is the one its key's entry in the timed-worker \
                   map names, so a later CancelWork of that key stops it.",
    },
];

/// Why no report can be written.
#[derive(Debug, PartialEq, Eq)]
pub enum NoReport {
    /// Not a property id or name of an `always` property.
    UnknownProperty(String),
    /// The model has no reachable violation of it.
    Holds(&'static str),
}

/// The `always` property named by its id or full name.
pub fn property(name: &str) -> Option<&'static PropertyInfo> {
    PROPERTIES
        .iter()
        .find(|p| p.always && (p.id == name || p.name == name))
}

/// The report on `property`'s shortest counterexample in `model`. `selection` is the command
/// line selecting the model (`--config C --profile P` and overrides).
pub fn write(model: &TaintSys, property: &str, selection: &str) -> Result<String, NoReport> {
    let info =
        self::property(property).ok_or_else(|| NoReport::UnknownProperty(property.into()))?;
    let meaning = MEANINGS
        .iter()
        .find(|m| m.id == info.id)
        .expect("every always property has a meaning");
    let path = shortest::counterexamples(model, &[info.name])
        .remove(info.name)
        .ok_or(NoReport::Holds(info.id))?;
    let trace = Trace::of(model, &path);
    let profile = &model.profile;
    let ranges = profile.releases();
    let releases: Vec<String> = ranges.iter().map(|r| r.span()).collect();
    // A patch release of the first range names it to `profiles --kubernetes` (a profile's name
    // may not: `v1.18` there is the newest 1.18 range, `fixed` no release).
    let files = match ranges.first() {
        Some(r) => format!(
            "; the upstream files it was read from: `taintcheck profiles --kubernetes 1.{}.{}`",
            r.minor, r.patches.0
        ),
        None => String::new(),
    };
    let versions = if releases.is_empty() {
        "none: no release has these switches".to_string()
    } else {
        format!("{} with default gates", releases.join(", "))
    };
    let config = &model.config;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# NoExecute taint eviction: {} ({})\n",
        meaning.title, info.id
    );
    let _ = writeln!(
        s,
        "**Affected versions:** Kubernetes {versions} (taintcheck profile `{}`{files}).\n",
        profile.name
    );
    let _ = writeln!(s, "## What goes wrong\n");
    let last = trace
        .steps
        .last()
        .expect("a violation takes at least one step");
    let _ = writeln!(
        s,
        "The NoExecute taint manager of kube-controller-manager can get here: {title}. \
         taintcheck's model of the controller (profile `{profile}`) reaches it with {nodes} \
         node(s), {pods} pod(s) and {workers} worker(s) in {steps} steps over {ms} ms of model \
         time, and the property {name} fails at the last step: {action}{outcome}.\n",
        title = meaning.title,
        profile = profile.name,
        name = info.name,
        nodes = config.nodes.len(),
        pods = config.pods.len(),
        workers = config.workers,
        steps = trace.steps.len(),
        ms = trace.end_ms(),
        action = last.action,
        outcome = if last.outcome.is_empty() {
            String::new()
        } else {
            format!(" → {}", last.outcome.join("; "))
        },
    );
    configuration(&mut s, config);
    let _ = writeln!(s, "## Timeline\n");
    let _ = writeln!(
        s,
        "The shortest interleaving (times are the model clock; steps at one instant happen in \
         the order shown):\n"
    );
    for (step, before) in trace.steps.iter().zip(&trace.states) {
        let src = upstream::source(profile, before, &step.kind);
        let _ = write!(
            s,
            "{}. t={} ms, {}: {}",
            step.number, step.time_ms, step.actor, step.action
        );
        if !step.outcome.is_empty() {
            let _ = write!(s, " → {}", step.outcome.join("; "));
        }
        let cite = if src.spec.starts_with('§') {
            format!("specs/upstream.md {}", src.spec)
        } else {
            format!("specs/spec.md {}", src.spec)
        };
        let _ = match src.file {
            Some(file) => writeln!(
                s,
                "  \n   Upstream: `{}` in `{file}` (taintcheck {cite}).",
                src.function
            ),
            None => writeln!(
                s,
                "  \n   Outside the controller: {} (taintcheck {cite}).",
                src.function
            ),
        };
    }
    let _ = writeln!(s, "\n## Expected behaviour\n\n{}\n", meaning.expected);
    let _ = writeln!(s, "## Reproduce\n\n```sh");
    let _ = writeln!(s, "taintcheck check {selection}");
    let _ = writeln!(s, "taintcheck explore {selection} --property {}", info.id);
    let _ = writeln!(s, "```\n");
    let _ = writeln!(
        s,
        "The Explorer then shows this path at \
         http://127.0.0.1:3000/#/steps/{}.",
        trace.action_path
    );
    Ok(s)
}

/// The configuration section: objects at the start, what the environment may do, the
/// controller's sizes.
fn configuration(s: &mut String, c: &CheckConfig) {
    let _ = writeln!(s, "## Configuration\n");
    let _ = writeln!(s, "taintcheck configuration `{}`.\n", c.name);
    for n in &c.nodes {
        let _ = writeln!(
            s,
            "- node {}: taints {}",
            n.name,
            display::taints(&n.taints)
        );
    }
    for p in &c.pods {
        let tolerations: Vec<String> = p
            .tolerations
            .iter()
            .map(|t| {
                let key = if t.key.is_empty() { "*" } else { &t.key };
                match t.seconds {
                    Some(secs) => format!("{key} for {secs}s"),
                    None => format!("{key} forever"),
                }
            })
            .collect();
        let _ = writeln!(
            s,
            "- pod default/{} {}, tolerating [{}]",
            p.name,
            p.node
                .as_deref()
                .map_or("pending".to_string(), |n| format!("on {n}")),
            tolerations.join(", ")
        );
    }
    let ops: Vec<&str> = c.operations.iter().map(|o| o.name()).collect();
    let _ = writeln!(
        s,
        "- the environment: at most {} of [{}], at multiples of {} ms; taints it may add {}; \
         clock horizon {} ms",
        c.budget,
        ops.join(", "),
        c.step_ms,
        display::taints(&c.taints),
        c.horizon_ms
    );
    let _ = writeln!(
        s,
        "- the controller: {} worker(s), node channel capacity {}, pod channel capacity {}\n",
        c.workers, c.node_channel_capacity, c.pod_channel_capacity
    );
}
