//! MODEL-CUTOFF validated: on every configuration of the verdict table without a client rate
//! limit and under every named profile, growing each toleration class from its cutoff `k` to
//! `k + 1` (and `k + 2`, in the ignored run) pods changes no property's verdict and no pod's
//! projected behaviour; a counterexample found at the cutoff is one of the grown configuration.
//!
//! A pod's projected behaviour is the set of its projected steps: every step of the unreduced
//! model that changes what the API shows of the pod (its spec, bind and toleration-change
//! instants, exposure, `DisruptionTarget`, graceful deletion, or its absence) or of its node's
//! taints, with the instant it happens at and the view before and after. UIDs and
//! resourceVersions are left out: they count writes to every object.

use stateright::{Expectation, Model};
use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, BTreeSet, HashSet, VecDeque};
use std::hash::{Hash, Hasher};
use taintcheck_core::api::{PodKey, Toleration};
use taintcheck_core::profile::Profile;
use taintcheck_model::check::action::Action;
use taintcheck_model::check::apart;
use taintcheck_model::check::config::{CheckConfig, PodSpec, BUILTIN};
use taintcheck_model::check::cutoff::{self, classes};
use taintcheck_model::check::display;
use taintcheck_model::check::run::{run, RunOptions};
use taintcheck_model::check::trace::Trace;
use taintcheck_model::check::{SysState, TaintSys};

const PROFILES: [&str; 3] = ["v1.18", "latest", "fixed"];

/// `config` at its cutoff, then with `extra` more pods in every class: copies of the class's
/// first pod named after it (`p1` → `p1-x1`), which no pattern of the verdict table's
/// configurations tells apart.
fn grown(config: &CheckConfig, profile: &Profile, extra: usize) -> CheckConfig {
    let (mut base, _) = cutoff::apply(config.clone(), profile);
    let firsts: Vec<PodSpec> = classes(&base)
        .iter()
        .map(|c| base.pods[c.pods[0]].clone())
        .collect();
    for first in &firsts {
        for j in 1..=extra {
            let mut copy = first.clone();
            copy.name = format!("{}-x{j}", first.name);
            base.pods.push(copy);
        }
    }
    assert_eq!(
        classes(&base).len(),
        firsts.len(),
        "{}: the copies join their classes",
        config.name
    );
    base
}

/// What one exhaustive walk of the unreduced model found.
#[derive(Debug, PartialEq, Eq)]
struct Walk {
    /// Per property: whether some reachable state fails (`always`) or meets (`sometimes`) it.
    found: BTreeMap<&'static str, bool>,
    /// Per pod of the cutoff configuration: its projected steps, hashed.
    steps: BTreeMap<String, BTreeSet<u64>>,
    states: usize,
}

fn hash(v: &impl Hash) -> u64 {
    let mut h = DefaultHasher::new();
    v.hash(&mut h);
    h.finish()
}

/// What the API shows of `key` and its node, without UIDs and versions.
fn view(s: &SysState, key: &PodKey) -> u64 {
    let Some(p) = s.api.pods.get(key) else {
        return 0;
    };
    let node = p
        .pod
        .node_name
        .as_ref()
        .and_then(|n| s.api.nodes.get(n))
        .map(|n| (n.node.taints.clone(), n.taint_since.clone()));
    hash(&(
        &p.pod.node_name,
        &p.pod.tolerations,
        p.bound_since,
        p.changed_at,
        p.exposed_in_api,
        p.disruption_target,
        &p.deletion,
        node,
    ))
}

/// Every state reachable in `model` without reduction, breadth first, up to `limit` states
/// (`None` beyond it).
fn walk(model: &TaintSys, pods: &[PodKey], limit: usize) -> Option<Walk> {
    let properties = model.properties();
    let mut found: BTreeMap<&'static str, bool> =
        properties.iter().map(|p| (p.name, false)).collect();
    let mut steps: BTreeMap<String, BTreeSet<u64>> = pods
        .iter()
        .map(|k| (k.name.to_string(), BTreeSet::new()))
        .collect();
    let mut seen = HashSet::new();
    let mut queue = VecDeque::new();
    for s in model.init_states() {
        if seen.insert(hash(&s)) {
            queue.push_back(s);
        }
    }
    let mut actions = Vec::new();
    while let Some(s) = queue.pop_front() {
        if seen.len() > limit {
            return None;
        }
        for p in &properties {
            let holds = (p.condition)(model, &s);
            let hit = match p.expectation {
                Expectation::Always => !holds,
                _ => holds,
            };
            if hit {
                found.insert(p.name, true);
            }
        }
        let before: Vec<u64> = pods.iter().map(|k| view(&s, k)).collect();
        model.actions(&s, &mut actions);
        for a in actions.drain(..) {
            let Some(next) = model.next_state(&s, a) else {
                continue;
            };
            if !model.within_boundary(&next) {
                continue;
            }
            for (i, k) in pods.iter().enumerate() {
                let after = view(&next, k);
                if after != before[i] {
                    let step = hash(&(next.now, before[i], after));
                    steps.get_mut(&*k.name).unwrap().insert(step);
                }
            }
            if seen.insert(hash(&next)) {
                queue.push_back(next);
            }
        }
    }
    Some(Walk {
        found,
        steps,
        states: seen.len(),
    })
}

/// The verdict table's configurations without a rate limit (the cutoff's domain).
fn configurations() -> Vec<CheckConfig> {
    BUILTIN
        .iter()
        .map(|(name, _)| CheckConfig::builtin(name).unwrap())
        .filter(|c| c.rate_limit.is_none())
        .collect()
}

/// For every configuration and profile: the walks at the cutoff and with each of `extras`
/// more per class agree, where the grown walk stays within `limit` states. Returns the table's
/// rows: configuration, profile, pods per class and states (`None`: beyond the limit).
fn validate(extras: &[usize], limit: usize) -> Vec<(String, &'static str, usize, Option<usize>)> {
    let mut rows = Vec::new();
    for config in configurations() {
        for name in PROFILES {
            let profile = Profile::by_name(name).unwrap();
            let base = grown(&config, &profile, 0);
            let pods: Vec<PodKey> = base.pods.iter().map(PodSpec::key).collect();
            let at = |c: CheckConfig| walk(&TaintSys::new(profile, c), &pods, limit);
            let k = at(base.clone()).expect("the cutoff configuration is small");
            rows.push((config.name.clone(), name, 1, Some(k.states)));
            for &extra in extras {
                let Some(more) = at(grown(&config, &profile, extra)) else {
                    rows.push((config.name.clone(), name, 1 + extra, None));
                    continue;
                };
                assert_eq!(
                    (&more.found, &more.steps),
                    (&k.found, &k.steps),
                    "{} under {name}: {} more per class changed a verdict or a pod's steps",
                    config.name,
                    extra
                );
                rows.push((config.name.clone(), name, 1 + extra, Some(more.states)));
            }
        }
    }
    rows
}

/// Every configuration of the table at its cutoff and one more per class (the table's
/// configurations all have cutoff 1: no `at_most_deletions`).
#[test]
fn one_more_pod_per_class_changes_no_verdict_and_no_pods_steps() {
    let rows = validate(&[1], 400_000);
    let checked = rows.iter().filter(|r| r.2 == 2 && r.3.is_some()).count();
    // The configurations of one pod grow to two within the limit, but for the largest.
    assert!(checked >= 30, "only {checked} grown walks: {rows:?}");
}

/// The validation table of specs/spec.md (MODEL-CUTOFF): `k`, `k + 1` and `k + 2` pods per
/// class, as far as 3,000,000 states go:
/// `cargo test --release --test cutoff -- --ignored --nocapture`.
#[test]
#[ignore]
fn two_more_pods_per_class_change_no_verdict_and_no_pods_steps() {
    let rows = validate(&[1, 2], 3_000_000);
    println!("| configuration | profile | pods per class | states |");
    println!("|---|---|---|---|");
    for (config, profile, per_class, states) in rows {
        let states = states.map_or("beyond 3,000,000".into(), |n| n.to_string());
        println!("| {config} | {profile} | {per_class} | {states} |");
    }
}

/// A step as `check` prints it, without the numbers of ids and UIDs (they count what every
/// pod did before).
fn step_text(model: &TaintSys, s: &SysState, a: &Action) -> String {
    let outcome: Vec<String> = model
        .outcome(s, a)
        .map(|out| {
            let notes = out.notes.as_slice().iter().cloned();
            notes
                .chain(out.effects.iter().map(display::effect))
                .collect()
        })
        .unwrap_or_default();
    without_counts(&format!(
        "t={} {} -> {}",
        s.now.0,
        display::describe(s, a),
        outcome.join("; ")
    ))
}

/// `text` without the numbers of ids (`#12`) and UIDs (`uid p1-3`).
fn without_counts(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        rest = &rest[c.len_utf8()..];
        out.push(c);
        let digits = |s: &str| s.len() - s.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if c == '#' {
            rest = &rest[digits(rest)..];
        } else if out.ends_with("uid ") {
            let name = rest.find([' ', ')', ',']).unwrap_or(rest.len());
            let uid = &rest[..name];
            let kept = uid
                .rfind('-')
                .filter(|&i| i + 1 < uid.len() && digits(&uid[i + 1..]) == uid.len() - i - 1);
            out.push_str(&uid[..kept.unwrap_or(uid.len())]);
            rest = &rest[name..];
        }
    }
    out
}

/// A path of the cutoff model, as the steps to follow: each step's text and what it does to
/// the kept pods' views.
struct Guide {
    steps: Vec<(String, Vec<(u64, u64)>)>,
}

impl Guide {
    fn of(model: &TaintSys, trace: &Trace, pods: &[PodKey]) -> Guide {
        let steps = trace
            .steps
            .iter()
            .zip(trace.states.windows(2))
            .map(|(step, w)| {
                let views = pods
                    .iter()
                    .map(|k| (view(&w[0], k), view(&w[1], k)))
                    .collect();
                (step_text(model, &w[0], &step.kind), views)
            })
            .collect();
        Guide { steps }
    }
}

/// A path of `grown` that takes the guide's steps in order, each the same step (same text, the
/// same change to every kept pod), with steps in between that leave every kept pod as it is
/// (the classmates'), ending in a state that fails `violated`; searched depth first, at most
/// `budget` states.
fn replay(
    grown: &TaintSys,
    guide: &Guide,
    pods: &[PodKey],
    violated: &dyn Fn(&SysState) -> bool,
    budget: &mut usize,
) -> bool {
    let mut seen = HashSet::new();
    let mut stack: Vec<(SysState, usize)> =
        grown.init_states().into_iter().map(|s| (s, 0)).collect();
    let mut actions = Vec::new();
    while let Some((s, i)) = stack.pop() {
        if i == guide.steps.len() {
            if violated(&s) {
                return true;
            }
            continue;
        }
        if *budget == 0 || !seen.insert((hash(&s), i)) {
            continue;
        }
        *budget -= 1;
        let (text, views) = &guide.steps[i];
        grown.actions(&s, &mut actions);
        let mut between = Vec::new();
        for a in actions.drain(..) {
            let Some(next) = grown.next_state(&s, a.clone()) else {
                continue;
            };
            let changes: Vec<(u64, u64)> =
                pods.iter().map(|k| (view(&s, k), view(&next, k))).collect();
            if step_text(grown, &s, &a) == *text && changes == *views {
                stack.push((next, i + 1));
            } else if changes.iter().all(|(a, b)| a == b) && !matches!(a, Action::Tick(_)) {
                between.push((next, i));
            }
        }
        // The guide's step first (popped first), then the classmates'.
        let guided =
            stack.split_off(stack.len() - stack.iter().rev().take_while(|e| e.1 == i + 1).count());
        stack.extend(between);
        stack.extend(guided);
    }
    false
}

/// Configurations whose grown walks stay small (one pod each at the cutoff, `three-pods` three).
const REPLAYED: [&str; 10] = [
    "three-pods",
    "timer-vs-cancel",
    "same-name-successor",
    "toleration-change",
    "stale-cache",
    "failing-delete",
    "restart",
    "successor-while-deleting",
    "toleration-flip-while-deleting",
    "terminating-retaint",
];

/// A counterexample at the cutoff replays on the grown configuration: on each of [`REPLAYED`]
/// under every profile, the verdicts at the cutoff (one pod) and grown to two are the same, and
/// each counterexample at the cutoff is followed on the grown configuration step for step (the
/// classmate's steps interleaved where the grown model needs them, e.g. before the clock may
/// advance) to a state that violates the same property.
#[test]
fn a_counterexample_at_the_cutoff_replays_on_the_grown_configuration() {
    let mut replayed = 0;
    for config in REPLAYED {
        let full = CheckConfig::builtin(config).unwrap();
        for name in PROFILES {
            let profile = Profile::by_name(name).unwrap();
            let cut = TaintSys::at_cutoff(profile, full.clone());
            let pods: Vec<PodKey> = cut.config.pods.iter().map(PodSpec::key).collect();
            let grown = TaintSys::new(profile, grown(&full, &profile, 1));
            let at_cutoff = run(cut.clone(), &RunOptions::default(), |_, _, _| {});
            let on_grown = run(grown.clone(), &RunOptions::default(), |_, _, _| {});
            let properties = grown.properties();
            for (p, q) in at_cutoff.properties.iter().zip(&on_grown.properties) {
                assert_eq!((p.name, p.status), (q.name, q.status), "{config} {name}");
                let Some(cx) = &p.counterexample else {
                    continue;
                };
                let property = properties.iter().find(|x| x.name == p.name).unwrap();
                let violated = |s: &SysState| !(property.condition)(&grown, s);
                let guide = Guide::of(&cut, cx, &pods);
                let mut budget = 200_000;
                assert!(
                    replay(&grown, &guide, &pods, &violated, &mut budget),
                    "{config} under {name}: {}'s counterexample at the cutoff does not replay \
                     on two pods ({} states searched)",
                    p.name,
                    200_000 - budget
                );
                replayed += 1;
            }
        }
    }
    assert!(replayed >= 30, "only {replayed} counterexamples replayed");
}

/// Each class alone (MODEL-CUTOFF, "one run per class"): on every configuration of one pod
/// without a rate limit, beside a pod of another class on the same node (no tolerations;
/// tolerating every taint forever; the first toleration's seconds doubled), under every named
/// profile, each pod's projected steps are those it has alone, and each property is found
/// (violated, or exemplified) together exactly when it is found in one of the two alone.
#[test]
fn each_class_has_the_steps_and_verdicts_it_has_alone() {
    let mut compared = 0;
    for config in configurations().into_iter().filter(|c| c.pods.len() == 1) {
        let pod = &config.pods[0];
        let mut others = Vec::new();
        let mut none = pod.clone();
        none.tolerations.clear();
        others.push(none);
        let mut forever = pod.clone();
        forever.tolerations = vec![Toleration::exists("", None, None)];
        others.push(forever);
        if let Some(seconds) = pod.tolerations.first().and_then(|t| t.seconds) {
            let mut longer = pod.clone();
            longer.tolerations[0].seconds = Some(seconds * 2 + 1);
            others.push(longer);
        }
        others.retain(|o| o.tolerations != pod.tolerations);
        for mut other in others {
            other.name = format!("{}-other", pod.name);
            for name in PROFILES {
                let profile = Profile::by_name(name).unwrap();
                let mut both = config.clone();
                both.pods.push(other.clone());
                assert_eq!(classes(&both).len(), 2);
                let mut alone = config.clone();
                alone.pods = vec![other.clone()];
                let keys: Vec<PodKey> = both.pods.iter().map(PodSpec::key).collect();
                let at = |c: &CheckConfig, keys: &[PodKey]| {
                    walk(&TaintSys::new(profile, c.clone()), keys, 400_000)
                };
                let Some(together) = at(&both, &keys) else {
                    continue;
                };
                let first = at(&config, &keys[..1]).unwrap();
                let second = at(&alone, &keys[1..]).unwrap();
                let either: BTreeMap<&str, bool> = first
                    .found
                    .iter()
                    .map(|(p, f)| (*p, *f || second.found[p]))
                    .collect();
                let mut steps = first.steps.clone();
                steps.extend(second.steps.clone());
                assert_eq!(
                    (&together.found, &together.steps),
                    (&either, &steps),
                    "{} under {name}, beside {:?}",
                    config.name,
                    other.tolerations
                );
                compared += 1;
            }
        }
    }
    assert!(compared >= 60, "only {compared} pairs compared");
}

/// `check --each-class` on the tutorial's grown node (three classes) gives the verdicts of the
/// classes checked together, under every named profile.
#[test]
fn the_tutorial_node_class_by_class_has_the_verdicts_of_the_whole() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/tutorial/policy-grown.yaml"
    );
    let config = CheckConfig::load(path).unwrap();
    let verdicts = |r: &taintcheck_model::check::run::Report| -> Vec<(String, &'static str)> {
        r.properties
            .iter()
            .map(|p| (p.id.to_string(), p.status.as_str()))
            .collect()
    };
    for name in PROFILES {
        let model = TaintSys::at_cutoff(Profile::by_name(name).unwrap(), config.clone());
        let whole = run(model.clone(), &RunOptions::default(), |_, _, _| {});
        let runs = apart::split(&model)
            .into_iter()
            .map(|(pods, m)| (pods, run(m, &RunOptions::default(), |_, _, _| {})))
            .collect();
        let (apart, _) = apart::combine(runs);
        assert_eq!(verdicts(&apart), verdicts(&whole), "{name}");
    }
}

/// A counterexample of `--each-class` is one of the classes checked together: on the
/// tutorial's grown node, every path a class's run finds is followed on the joint model step for
/// step (the other classes' steps interleaved where it needs them) to a state where the same
/// property is violated, or exemplified.
#[test]
fn a_path_of_a_class_alone_replays_with_every_class() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/tutorial/policy-grown.yaml"
    );
    let config = CheckConfig::load(path).unwrap();
    let mut replayed = 0;
    for name in PROFILES {
        let joint = TaintSys::at_cutoff(Profile::by_name(name).unwrap(), config.clone());
        let properties = joint.properties();
        for (pods, alone) in apart::split(&joint) {
            let keys: Vec<PodKey> = alone.config.pods.iter().map(PodSpec::key).collect();
            let report = run(alone.clone(), &RunOptions::default(), |_, _, _| {});
            for p in &report.properties {
                let Some(path) = p.path() else { continue };
                let property = properties.iter().find(|x| x.name == p.name).unwrap();
                let always = property.expectation == Expectation::Always;
                let found = |s: &SysState| (property.condition)(&joint, s) != always;
                let guide = Guide::of(&alone, path, &keys);
                let mut budget = 200_000;
                assert!(
                    replay(&joint, &guide, &keys, &found, &mut budget),
                    "{name}: {}'s path in the run of {pods:?} does not replay with every class",
                    p.name
                );
                replayed += 1;
            }
        }
    }
    assert!(replayed >= 20, "only {replayed} paths replayed");
}
