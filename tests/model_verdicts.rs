//! The verdict table of specs/verdicts.md: every profile × configuration × property cell, checked
//! exhaustively (BFS, with the default partial-order reduction: the table is the same with and
//! without it), plus pinned unique-state counts as a regression alarm.
//!
//! Cell codes, in `PROPERTIES` order: H holds, V violated (always properties); E example found,
//! N no example, A not applicable: the configuration cannot exemplify it (sometimes properties,
//! CHECK-1).
//!
//! The first switch set of upstream releases (`releases::SWITCH_SETS`, PROFILE-R2) is
//! `v1.18`'s and the last `latest`'s; the ignored `release_switch_set_rows` prints the rows of
//! the sets between.

use taintcheck_model::check::config::CheckConfig;
use taintcheck_model::check::properties::PROPERTIES;
use taintcheck_model::check::run::{run, Report, RunOptions, Status};
use taintcheck_model::check::{SysState, TaintSys};
use taintcheck_model::profile::Profile;
use taintcheck_model::releases::SWITCH_SETS;

/// A profile name of the table: a named profile or a switch set's label.
fn profile(name: &str) -> Profile {
    Profile::by_name(name)
        .or_else(|| {
            SWITCH_SETS
                .iter()
                .find(|s| s.label == name)
                .map(|s| s.switches)
        })
        .expect("a named profile or a switch set")
}

const TABLE: &[(&str, &str, &str)] = &[
    ("v1.18", "default", "VVVVHHVVHHHVEEEAA"),
    ("v1.18", "timer-vs-cancel", "VHHHHHVVHHHHAEEAA"),
    ("v1.18", "same-name-successor", "VVVVVVVVHHHVAEEAA"),
    ("v1.18", "toleration-change", "HVVVHHHHHHHHEEEAA"),
    ("v1.18", "stale-cache", "VHHHHVVVHHHHEAEAA"),
    ("v1.18", "failing-delete", "HHVVHHHHHHHHEAEEA"),
    ("v1.18", "restart", "HHHVHHHHHHHHAEEAE"),
    ("v1.18", "forever-toleration", "VHHHHHHHHHHHAEEAA"),
    ("v1.18", "orphaned-timer", "VVHHHHVVHHHVEEEAA"),
    ("v1.18", "live-read", "VHHHHVHHHHHHEANAA"),
    ("v1.18", "successor-stale-listing", "VVVVVVVVHHHVAEEAA"),
    ("v1.18", "successor-while-deleting", "HHVVHHHHHHHHEANAA"),
    (
        "v1.18",
        "toleration-flip-while-deleting",
        "VHVVHHHHHHHHEEEAA",
    ),
    ("v1.18", "terminating-retaint", "HHHHHHVVHHHVEAEAA"),
    ("v1.18", "relist-successor", "VVVVVVVVHHHVAEEAA"),
    ("v1.18", "rate-limited-storm", "VHVVHHHHHHHHEANAA"),
    ("v1.18", "rate-limited-cancel", "VHHHHHVVHHHHAEEAA"),
    ("latest", "default", "VVVVHHVVHHHVEEEAA"),
    ("latest", "timer-vs-cancel", "VHHHHHVVHHHHAEEAA"),
    ("latest", "same-name-successor", "VVVVVVVVHHHVAEEAA"),
    ("latest", "toleration-change", "HVVVHHHHHHHHEEEAA"),
    ("latest", "stale-cache", "VHHHHVHHHHHHEANAA"),
    ("latest", "failing-delete", "HHVVHHHHHHHHEANEA"),
    ("latest", "restart", "HHHVHHHHHHHHAEEAE"),
    ("latest", "forever-toleration", "HHHHHHHHHHHHAEEAA"),
    ("latest", "orphaned-timer", "VVHHHHVVHHHVEEEAA"),
    ("latest", "live-read", "VHHHHVHHHHHHEANAA"),
    ("latest", "successor-stale-listing", "VVVVVVVVHHHVAEEAA"),
    ("latest", "successor-while-deleting", "HHVVVHHHHHHHEANAA"),
    (
        "latest",
        "toleration-flip-while-deleting",
        "VHVVHHVVHHHHEEEAA",
    ),
    ("latest", "terminating-retaint", "HHHHHHHHHHHHEANAA"),
    ("latest", "relist-successor", "VVVVVVVVHHHVAEEAA"),
    ("latest", "rate-limited-storm", "HHVVHHHHHHHHNANAA"),
    ("latest", "rate-limited-cancel", "VHHHHHVVHHHHAEEAA"),
    ("fixed", "default", "HHHHHHHHHHHHEEEAA"),
    ("fixed", "timer-vs-cancel", "HHHHHHHHHHHHAEEAA"),
    ("fixed", "same-name-successor", "HHHHHHHHHHHHAEEAA"),
    ("fixed", "toleration-change", "HHHHHHHHHHHHEEEAA"),
    ("fixed", "stale-cache", "HHHHHHHHHHHHEAEAA"),
    ("fixed", "failing-delete", "HHHHHHHHHHHHEANEA"),
    ("fixed", "restart", "HHHVHHHHHHHHAENAE"),
    ("fixed", "forever-toleration", "HHHHHHHHHHHHAEEAA"),
    ("fixed", "orphaned-timer", "HHHHHHHHHHHHEEEAA"),
    ("fixed", "live-read", "HHHHHHHHHHHHEAEAA"),
    ("fixed", "successor-stale-listing", "HHHHHHHHHHHHAEEAA"),
    ("fixed", "successor-while-deleting", "HHHHHHHHHHHHEAEAA"),
    (
        "fixed",
        "toleration-flip-while-deleting",
        "HHHHHHHHHHHHEEEAA",
    ),
    ("fixed", "terminating-retaint", "HHHHHHHHHHHHEAEAA"),
    ("fixed", "relist-successor", "HHHHHHHHHHHHAEEAA"),
    ("fixed", "rate-limited-storm", "HHVVHHHHHHHHNAEAA"),
    ("fixed", "rate-limited-cancel", "HHHHHHHHHHHHANEAA"),
];

fn check(profile: &str, config: &str) -> Report {
    let model = TaintSys::new(
        self::profile(profile),
        CheckConfig::builtin(config).expect("built-in config"),
    );
    run(model, &RunOptions::default(), |_, _, _| {})
}

fn code(s: Status) -> char {
    match s {
        Status::Holds => 'H',
        Status::Violated => 'V',
        Status::ExampleFound => 'E',
        Status::NoExample => 'N',
        Status::NotApplicable => 'A',
        Status::NotRefuted | Status::NoExampleYet => unreachable!("complete runs only"),
    }
}

fn assert_row(profile: &str, config: &str) {
    let (_, _, expected) = TABLE
        .iter()
        .find(|(p, c, _)| *p == profile && *c == config)
        .expect("row in the table");
    let report = check(profile, config);
    assert!(report.complete, "{profile}/{config}: run incomplete");
    let actual: String = report.properties.iter().map(|p| code(p.status)).collect();
    let diffs: Vec<String> = PROPERTIES
        .iter()
        .zip(expected.chars().zip(actual.chars()))
        .filter(|(_, (e, a))| e != a)
        .map(|(p, (e, a))| format!("{}: expected {e}, got {a}", p.name))
        .collect();
    assert!(
        diffs.is_empty(),
        "{profile}/{config}: the row is now {actual:?}:\n{}",
        diffs.join("\n")
    );
    for p in &report.properties {
        if p.status == Status::Violated {
            let cx = p.counterexample.as_ref().expect("violations carry a path");
            assert!(cx.action_path.starts_with("0/"), "{}", cx.action_path);
            assert!(!cx.steps.is_empty());
        }
        // A counterexample or an example, never both. An example may be the initial state
        // itself (MODEL-INIT runs the controller until quiescent: `successor-while-deleting`).
        assert_eq!(
            p.example.is_some(),
            p.status == Status::ExampleFound,
            "{}",
            p.name
        );
        assert_eq!(p.counterexample.is_some(), p.status == Status::Violated);
    }
}

macro_rules! rows {
    ($($test:ident: $profile:literal, $config:literal;)*) => {
        $( #[test] fn $test() { assert_row($profile, $config); } )*
    };
}

rows! {
    v1_18_default: "v1.18", "default";
    v1_18_timer_vs_cancel: "v1.18", "timer-vs-cancel";
    v1_18_same_name_successor: "v1.18", "same-name-successor";
    v1_18_toleration_change: "v1.18", "toleration-change";
    v1_18_stale_cache: "v1.18", "stale-cache";
    v1_18_failing_delete: "v1.18", "failing-delete";
    v1_18_restart: "v1.18", "restart";
    v1_18_forever_toleration: "v1.18", "forever-toleration";
    v1_18_orphaned_timer: "v1.18", "orphaned-timer";
    v1_18_live_read: "v1.18", "live-read";
    v1_18_successor_stale_listing: "v1.18", "successor-stale-listing";
    v1_18_successor_while_deleting: "v1.18", "successor-while-deleting";
    v1_18_toleration_flip_while_deleting: "v1.18", "toleration-flip-while-deleting";
    v1_18_terminating_retaint: "v1.18", "terminating-retaint";
    v1_18_relist_successor: "v1.18", "relist-successor";
    v1_18_rate_limited_storm: "v1.18", "rate-limited-storm";
    latest_default: "latest", "default";
    latest_timer_vs_cancel: "latest", "timer-vs-cancel";
    latest_same_name_successor: "latest", "same-name-successor";
    latest_toleration_change: "latest", "toleration-change";
    latest_stale_cache: "latest", "stale-cache";
    latest_failing_delete: "latest", "failing-delete";
    latest_restart: "latest", "restart";
    latest_forever_toleration: "latest", "forever-toleration";
    latest_orphaned_timer: "latest", "orphaned-timer";
    latest_live_read: "latest", "live-read";
    latest_successor_stale_listing: "latest", "successor-stale-listing";
    latest_successor_while_deleting: "latest", "successor-while-deleting";
    latest_toleration_flip_while_deleting: "latest", "toleration-flip-while-deleting";
    latest_terminating_retaint: "latest", "terminating-retaint";
    latest_relist_successor: "latest", "relist-successor";
    latest_rate_limited_storm: "latest", "rate-limited-storm";
    fixed_default: "fixed", "default";
    fixed_timer_vs_cancel: "fixed", "timer-vs-cancel";
    fixed_same_name_successor: "fixed", "same-name-successor";
    fixed_toleration_change: "fixed", "toleration-change";
    fixed_stale_cache: "fixed", "stale-cache";
    fixed_failing_delete: "fixed", "failing-delete";
    fixed_restart: "fixed", "restart";
    fixed_forever_toleration: "fixed", "forever-toleration";
    fixed_orphaned_timer: "fixed", "orphaned-timer";
    fixed_live_read: "fixed", "live-read";
    fixed_successor_stale_listing: "fixed", "successor-stale-listing";
    fixed_successor_while_deleting: "fixed", "successor-while-deleting";
    fixed_toleration_flip_while_deleting: "fixed", "toleration-flip-while-deleting";
    fixed_terminating_retaint: "fixed", "terminating-retaint";
    fixed_relist_successor: "fixed", "relist-successor";
    fixed_rate_limited_storm: "fixed", "rate-limited-storm";
    v1_18_rate_limited_cancel: "v1.18", "rate-limited-cancel";
    latest_rate_limited_cancel: "latest", "rate-limited-cancel";
    fixed_rate_limited_cancel: "fixed", "rate-limited-cancel";
}

#[test]
fn every_table_row_has_a_test_and_a_full_width() {
    assert_eq!(TABLE.len(), 51);
    for (p, c, cells) in TABLE {
        assert_eq!(cells.len(), PROPERTIES.len(), "{p}/{c}");
    }
}

/// Regression alarm: the unique state counts of the smallest configuration per profile. A change
/// means the model or the core changed behaviour; re-derive and review, never just bump.
/// Pinned without reduction (the model as specified).
#[test]
fn unique_state_counts_are_pinned_on_timer_vs_cancel() {
    use taintcheck_model::check::reduction::Reduction;
    for (profile, unique) in [("v1.18", 574), ("latest", 634), ("fixed", 452)] {
        let model = TaintSys::new(
            self::profile(profile),
            CheckConfig::builtin("timer-vs-cancel").expect("built-in config"),
        );
        let opts = RunOptions {
            reduction: Reduction::None,
            ..RunOptions::default()
        };
        assert_eq!(
            run(model, &opts, |_, _, _| {}).unique_states,
            unique,
            "{profile}"
        );
    }
}

/// PROFILE-12: the live read alone (PR #140198 as proposed: GET the pod, then its node) does
/// not make JUST-1 hold: the pod's tolerations can change between the two reads, so the
/// controller combines an old pod with a new node. The resourceVersion precondition is what
/// `fixed` needs; without it the counterexample shows the toleration change between the GETs.
#[test]
fn live_read_without_resource_version_is_not_enough() {
    let profile = Profile {
        version_precondition: false,
        ..Profile::fixed()
    };
    let model = TaintSys::new(
        profile,
        CheckConfig::builtin("live-read").expect("built-in config"),
    );
    let r = run(model, &RunOptions::default(), |_, _, _| {});
    let just = r
        .properties
        .iter()
        .find(|p| p.name.starts_with("JUST-1"))
        .expect("JUST-1");
    assert_eq!(just.status, Status::Violated);
    let text = just.counterexample.as_ref().expect("a path").text();
    // The pod's GET is answered (and the node's GET sent), then the pod changes, then the node's
    // answer leads to the PATCH.
    let pod_read = text
        .find("GET node n1")
        .expect("the pod read, the node's GET sent");
    let forever = text
        .find("tolerate forever")
        .expect("the toleration becomes forever");
    let node_read = text
        .find("PATCH DisruptionTarget")
        .expect("the node read passes");
    assert!(pod_read < forever && forever < node_read, "{text}");
    let others: String = r
        .properties
        .iter()
        .filter(|p| !p.name.starts_with("JUST-1"))
        .map(|p| code(p.status))
        .collect();
    assert!(!others.contains('V'), "only JUST-1 falls: {others}");
}

/// The upstream races named by the issue appear as counterexamples with the expected story.
#[test]
fn n2_cancel_event_while_the_deletion_goes_ahead() {
    let r = check("latest", "timer-vs-cancel");
    let cx = r
        .properties
        .iter()
        .find(|p| p.name.starts_with("CANCEL-1"))
        .and_then(|p| p.counterexample.clone())
        .expect("CANCEL-1 violated");
    let text = cx.text();
    let cancel = text.find("Cancelling deletion").expect("a cancel event");
    // The shortest path ends where the DELETE is issued (CANCEL-1 is violated by the request).
    let delete = text.rfind("DELETE default/p1").expect("the deletion");
    assert!(cancel < delete, "{text}");
}

/// N4: the first work's map update leaves the newer timer armed and out of reach; the path ends
/// with the completion after that timer was armed.
#[test]
fn n4_completing_work_orphans_a_newer_timer() {
    for profile in ["v1.18", "latest"] {
        let r = check(profile, "orphaned-timer");
        let cx = r
            .properties
            .iter()
            .find(|p| p.name.starts_with("TIMER-1"))
            .and_then(|p| p.counterexample.clone())
            .expect("TIMER-1 violated");
        let text = cx.text();
        let armed = text.find("arm timer #1").expect("a newer timer");
        let completes = text
            .rfind("work #0 completes")
            .expect("the older work completes");
        assert!(armed < completes, "{profile}:\n{text}");
    }
}

/// CHECK-2: every reported counterexample (example) ends at a violating (witnessing) state, and
/// no shorter path reaches one (stateright's own BFS, cut one level short, finds nothing).
/// Before the shortest pass, stateright kept the last violating state it visited (EVICT-1 on
/// `default`: 39 steps instead of 8).
#[test]
fn counterexamples_are_shortest() {
    use stateright::{Checker, Model};
    for (profile, config) in [("latest", "default"), ("v1.18", "timer-vs-cancel")] {
        let r = check(profile, config);
        let model = TaintSys::new(
            self::profile(profile),
            CheckConfig::builtin(config).expect("built-in config"),
        );
        let mut violated = 0;
        for p in r.properties.iter().filter(|p| p.path().is_some()) {
            violated += usize::from(p.status == Status::Violated);
            let cx = p.path().expect("a counterexample or an example");
            let actions = cx.action_path.split('/').count() - 1;
            assert_eq!(cx.steps.len(), actions, "{profile}/{config} {}", p.name);
            // Depth d holds the states reached by d - 1 actions; stop before the reported length.
            let shorter = model
                .clone()
                .checker()
                .target_max_depth(actions + 1)
                .spawn_bfs()
                .join();
            assert!(
                shorter.discovery(p.name).is_none(),
                "{profile}/{config}: {} has a path shorter than {actions} steps",
                p.name
            );
            let longer = model
                .clone()
                .checker()
                .target_max_depth(actions + 2)
                .spawn_bfs()
                .join();
            assert!(longer.discovery(p.name).is_some(), "{}", p.name);
        }
        assert!(violated >= 2, "{profile}/{config}");
    }
}

/// MODEL-SYM: symmetry reduction is sound — DFS with and without it gives BFS's verdicts — and
/// reduces. On two interchangeable pods that may be deleted nearly every orbit has two states, so
/// nearly half the states go; on two pods bound by the environment to either of two identical
/// nodes (group order 2! x 2!, times renumbered work ids) far more do.
#[test]
fn symmetry_keeps_every_verdict() {
    use taintcheck_model::check::run::Strategy;
    let mut two_pods = CheckConfig::builtin("three-pods").expect("built-in config");
    two_pods.pods.truncate(2);
    two_pods.budget = 1;
    let mut pods_and_nodes = CheckConfig::builtin("pods-and-nodes").expect("built-in config");
    pods_and_nodes.budget = 2;
    for (config, reductions) in [(two_pods, 1.5..=2.0), (pods_and_nodes, 7.0..=24.0)] {
        for profile in ["v1.18", "latest", "fixed"] {
            let profile_of = self::profile(profile);
            let model = || TaintSys::new(profile_of, config.clone());
            let with = |strategy, symmetry| RunOptions {
                strategy,
                symmetry,
                ..RunOptions::default()
            };
            let bfs = run(model(), &RunOptions::default(), |_, _, _| {});
            let dfs = run(model(), &with(Strategy::Dfs, false), |_, _, _| {});
            let sym = run(model(), &with(Strategy::Dfs, true), |_, _, _| {});
            let verdicts = |r: &Report| {
                r.properties
                    .iter()
                    .map(|p| code(p.status))
                    .collect::<String>()
            };
            let name = &config.name;
            assert!(bfs.complete && dfs.complete && sym.complete);
            assert_eq!(verdicts(&dfs), verdicts(&bfs), "{profile}/{name}: dfs");
            assert_eq!(verdicts(&sym), verdicts(&bfs), "{profile}/{name}: symmetry");
            assert!(
                verdicts(&bfs).contains('V') || profile == "fixed",
                "{profile}/{name}: not vacuous"
            );
            let reduction = dfs.unique_states as f64 / sym.unique_states as f64;
            println!(
                "{profile}/{name}: {} -> {} unique states ({reduction:.2}x)",
                dfs.unique_states, sym.unique_states
            );
            assert!(
                reductions.contains(&reduction),
                "{profile}/{name}: {reduction:.2}x"
            );
        }
    }
}

/// Every state of `profile` on `config` (plain BFS over the model), with the model.
fn all_states(profile: &str, config: &str) -> (TaintSys, Vec<SysState>) {
    use stateright::Model;
    use std::collections::{HashSet, VecDeque};
    let model = TaintSys::new(
        self::profile(profile),
        CheckConfig::builtin(config).expect("built-in config"),
    );
    // 64-bit fingerprints, as stateright keeps them (a state's shared parts cache their
    // hashes, so the states themselves are not set keys).
    use std::hash::{BuildHasher, RandomState};
    let hasher = RandomState::new();
    let fingerprint = |s: &SysState| hasher.hash_one(s);
    let mut seen: HashSet<u64> = HashSet::new();
    let mut queue: VecDeque<SysState> = model.init_states().into();
    for s in &queue {
        seen.insert(fingerprint(s));
    }
    let mut out = Vec::new();
    while let Some(s) = queue.pop_front() {
        let mut actions = Vec::new();
        model.actions(&s, &mut actions);
        for a in actions {
            if let Some(next) = model.next_state(&s, a) {
                if seen.insert(fingerprint(&next)) {
                    queue.push_back(next);
                }
            }
        }
        out.push(s);
    }
    (model, out)
}

/// API-2 and N13: the controller's DELETE leaves the pod Terminating; a later change of the
/// node's NoExecute taints makes every profile start a second work for it (a second "Marking
/// for deletion") whose DELETE reaches the Terminating pod. `fixed` does not skip Terminating
/// pods either. Without a termination grace no pod is ever Terminating.
#[test]
fn a_terminating_pod_is_deleted_again_after_a_taint_change() {
    use taintcheck_model::core::Verb;
    let second_delete = |s: &SysState| {
        s.ctrl.pending_requests().any(|r| {
            r.verb == Verb::Delete && s.api.pods.get(&r.pod).is_some_and(|p| p.deletion.is_some())
        })
    };
    for profile in ["v1.18", "latest", "fixed"] {
        let (_, states) = all_states(profile, "terminating-retaint");
        assert!(states.iter().any(second_delete), "{profile}");
    }
    let (_, states) = all_states("latest", "timer-vs-cancel");
    assert!(!states
        .iter()
        .any(|s| s.api.pods.values().any(|p| p.deletion.is_some())));
}

/// ENV-11, ENV-12: the kubelet of an unreachable node never confirms; a force delete still
/// removes the Terminating pod.
#[test]
fn an_unreachable_kubelet_never_confirms() {
    use stateright::Model;
    use taintcheck_model::api_server::UNREACHABLE;
    use taintcheck_model::check::{Action, EnvOp};
    let (model, states) = all_states("latest", "terminating-retaint");
    let mut stuck = 0;
    for s in &states {
        let unreachable = s
            .api
            .nodes
            .values()
            .any(|n| n.node.taints.iter().any(|t| &*t.key == UNREACHABLE));
        if !unreachable || s.api.pods.values().all(|p| p.deletion.is_none()) {
            continue;
        }
        let mut actions = Vec::new();
        model.actions(s, &mut actions);
        let env = |f: fn(&EnvOp) -> bool| {
            actions
                .iter()
                .any(|a| matches!(a, Action::Env(op) if f(op)))
        };
        assert!(!env(|op| matches!(op, EnvOp::KubeletConfirms { .. })));
        stuck += usize::from(env(|op| matches!(op, EnvOp::ForceDelete { .. })));
    }
    assert!(
        stuck > 0,
        "a Terminating pod on an unreachable node, force delete enabled"
    );
}

/// CANCEL-2 on `rate-limited-cancel` (issue 42): a cancel that lands while a request waits for
/// its client token. `fixed` reads its flag when the token is granted and holds CANCEL-2; the
/// upstream profiles read it at most once, when the work starts, so their shortest
/// counterexample shows "Cancelling deletion" and then a write. Reading the flag only before
/// the reservation, `fixed` sent its PATCH after the cancel (the leftover of issue 42, found
/// by `check --profile fixed --config rate-limited-cancel` before the core read it at the
/// grant); the core's unit test `a_work_cancelled_while_it_waits_for_its_token_sends_nothing`
/// pins that step.
#[test]
fn cancel_2_no_write_after_a_cancel_while_throttled() {
    let cancel_2 = |r: &Report| {
        r.properties
            .iter()
            .find(|p| p.id == "CANCEL-2")
            .cloned()
            .expect("CANCEL-2")
    };
    assert_eq!(
        cancel_2(&check("fixed", "rate-limited-cancel")).status,
        Status::Holds
    );
    for profile in ["v1.18", "latest"] {
        let p = cancel_2(&check(profile, "rate-limited-cancel"));
        let text = p.counterexample.expect("CANCEL-2 violated").text();
        let cancel = text.find("Cancelling deletion").expect("a cancel event");
        let write = text
            .rfind("PATCH DisruptionTarget")
            .or_else(|| text.rfind("DELETE default/p1"))
            .expect("a write");
        assert!(cancel < write, "{profile}:\n{text}");
    }
}

/// R5 (spec, "Unachievable properties"): a PATCH sent before the cancel leaves
/// `DisruptionTarget` on a pod that stays, under `fixed` too: the cancelled work sends no
/// DELETE and nothing resets the condition (upstream's PodGC does, after 2 minutes). The
/// leftover CANCEL-2 rules out is the one made after the cancel.
#[test]
fn a_patch_before_the_cancel_leaves_the_condition() {
    use taintcheck_model::check::builder::Check;
    let leftover = |s: &SysState| {
        s.quiescent()
            && s.ctrl.timed_queue().is_idle()
            && s.api
                .pods
                .values()
                .any(|p| p.disruption_target && p.deletion.is_none())
    };
    let report = Check::load("timer-vs-cancel")
        .profile(Profile::fixed())
        .property("no-condition-left", move |s| !leftover(s))
        .run();
    let text = report.assert_violated("no-condition-left").text();
    let patch = text.find("PATCH DisruptionTarget").expect("the PATCH");
    let cancel = text.find("Cancelling deletion").expect("the cancel");
    assert!(patch < cancel, "{text}");
    report.assert_holds("CANCEL-2 no write after a cancel");
}

/// PROFILE-R2's verdict columns: every configuration under every switch set of upstream
/// releases that no named profile has, printed as `TABLE` rows (`--nocapture`). Ignored: it
/// runs the model 16 times per switch set.
#[test]
#[ignore = "runs the model on every configuration per release switch set"]
fn release_switch_set_rows() {
    for set in &SWITCH_SETS[1..SWITCH_SETS.len() - 1] {
        for (_, config, _) in TABLE.iter().filter(|(p, _, _)| *p == "v1.18") {
            let report = check(set.label, config);
            assert!(report.complete, "{}/{config}: run incomplete", set.label);
            let cells: String = report.properties.iter().map(|p| code(p.status)).collect();
            println!("    (\"{}\", \"{config}\", \"{cells}\"),", set.label);
        }
    }
}
