//! The scenarios and schedules made from counterexamples: the races the project reproduced by
//! hand come out as the hand-written schedules did, paths no hold can order are refused with
//! the steps that say why, and every counterexample of the built-in configurations is made
//! into a scenario its reader accepts or refused (never a panic).

use super::acts::node_watch;
use super::*;
use crate::check::config::{CheckConfig, BUILTIN};
use crate::check::shortest;
use stateright::Model;
use taintcheck_core::api::NodeName;
use taintcheck_core::profile::Profile;
use taintcheck_formats::scenario::parse_scenario;
use taintcheck_formats::schedule::{Held, Hold, RequestMatch, Resource, Until, WatchMatch};

fn counterexample(config: &str, profile: &str, id: &str) -> (TaintSys, Trace) {
    let model = TaintSys::at_cutoff(
        Profile::by_name(profile).expect("a profile"),
        CheckConfig::builtin(config).expect("a built-in configuration"),
    );
    let name = crate::check::issue::property(id).expect("a property").name;
    let path = shortest::counterexamples(&model, &[name])
        .remove(name)
        .expect("violated");
    let trace = Trace::of(&model, &path);
    (model, trace)
}

fn request(verb: &str, pod: &str, subresource: Option<&str>) -> RequestMatch {
    RequestMatch {
        verb: verb.into(),
        resource: Resource::Pods,
        namespace: Some("default".into()),
        name: Some(pod.into()),
        subresource: subresource.map(Into::into),
        message: None,
    }
}

#[test]
fn n1_holds_the_patch_answer_until_the_untaint_has_reached_the_controller() {
    let (model, trace) = counterexample("timer-vs-cancel", "latest", "EVICT-1");
    let rt = realtime(&model, &trace, "EVICT-1").unwrap();
    assert_eq!(
        rt.schedule.holds,
        vec![
            Hold {
                hold: Held::Answer(request("patch", "p1", Some("status"))),
                until: Until::Event(WatchMatch {
                    removes_taint: Some("k".into()),
                    ..node_watch(&NodeName::from("n1"), "MODIFIED")
                }),
                at_most_ms: HOLD_MS,
                settle_ms: SETTLE_MS,
            },
            // Rule 5: the untaint waits for the PATCH too; not for its answer, which the hold
            // above keeps from the controller until the untaint has reached it.
            Hold {
                hold: Held::Operations(2_150),
                until: Until::Request(request("patch", "p1", Some("status"))),
                at_most_ms: GATE_MS,
                settle_ms: 0,
            }
        ]
    );
    let scenario = parse_scenario("n1.yaml", &rt.scenario).expect("a valid scenario");
    assert_eq!(scenario.name, "timer-vs-cancel-evict-1");
    // The taint at the origin; the untaint after the controller's acts of its instant (1 s).
    assert!(rt
        .scenario
        .contains(r#"{"at":"1.000s","taint":"n1 k:NoExecute"}"#));
    assert!(rt
        .scenario
        .contains(r#"{"at":"2.150s","taint":"n1 k:NoExecute-"}"#));
}

#[test]
fn uid1_holds_the_delete_until_the_successor_exists_and_the_successor_until_the_answer() {
    let (model, trace) = counterexample("same-name-successor", "latest", "UID-1");
    let rt = realtime(&model, &trace, "UID-1").unwrap();
    let successor = WatchMatch {
        resource: Resource::Pods,
        namespace: Some("default".into()),
        name: "p1".into(),
        kind: Some("ADDED".into()),
        node: Some("n1".into()),
        removes_taint: None,
        successor: true,
    };
    let holds: Vec<(Held, Until, u64)> = rt
        .schedule
        .holds
        .iter()
        .map(|h| (h.hold.clone(), h.until.clone(), h.settle_ms))
        .collect();
    assert!(holds.contains(&(
        Held::Request(request("delete", "p1", None)),
        Until::Arrives(successor.clone()),
        0
    )));
    assert!(holds.contains(&(
        Held::Event(successor),
        Until::Answer(request("delete", "p1", None)),
        ANSWER_SETTLE_MS
    )));
    // Rule 5: the successor is made once the controller has sent its DELETE (which the first
    // hold keeps from the API server until then), however late the controller is.
    assert!(holds.contains(&(
        Held::Operations(3_150),
        Until::Request(request("delete", "p1", None)),
        0
    )));
    assert_eq!(holds.len(), 3, "{holds:?}");
}

#[test]
fn a_change_between_two_steps_of_a_work_that_sends_nothing_between_is_refused() {
    // 1.18's work deletes right after it starts: the untaint cannot be put in between.
    let (model, trace) = counterexample("timer-vs-cancel", "v1.18", "EVICT-1");
    let e = realtime(&model, &trace, "EVICT-1").unwrap_err();
    assert!(
        e.starts_with("cannot be forced from outside the controller"),
        "{e}"
    );
    assert!(e.contains("remove taint k:NoExecute"), "{e}");
}

#[test]
fn every_counterexample_of_the_built_in_configurations_is_a_scenario_or_refused() {
    let mut made = 0;
    for (config, _) in BUILTIN {
        for profile in ["latest", "v1.18", "fixed"] {
            let model = TaintSys::at_cutoff(
                Profile::by_name(profile).unwrap(),
                CheckConfig::builtin(config).unwrap(),
            );
            let names: Vec<&'static str> = model.properties().iter().map(|p| p.name).collect();
            for (name, path) in shortest::counterexamples(&model, &names) {
                let trace = Trace::of(&model, &path);
                let id = crate::check::issue::property(name).map_or(name, |p| p.id);
                let Ok(rt) = realtime(&model, &trace, id) else {
                    continue;
                };
                let file = format!("{config}-{profile}-{id}.yaml");
                if let Err(e) = parse_scenario(&file, &rt.scenario) {
                    panic!("{file}: {e}\n{}", rt.scenario);
                }
                let again = Schedule::parse("s.json", &rt.schedule.to_json()).unwrap();
                assert_eq!(again, rt.schedule, "{file}");
                made += 1;
            }
        }
    }
    assert!(made >= 60, "only {made} counterexamples became scenarios");
}

#[test]
fn a_work_step_before_a_change_is_taken_later_where_it_then_waits_for_a_held_answer() {
    // R2's shape: the successor is handled between the DELETE's answer and the map update
    // that follows it, which a real work does at once (its completion counts as a step of its
    // own). Reordered, the work takes its answer after the successor is handled, and the
    // proxy holds that answer until the controller has received the successor.
    let (model, trace) = counterexample("same-name-successor", "latest", "LIVE-1");
    let refused = forcible(&acts::acts(&model, &trace).unwrap()).unwrap_err();
    assert!(
        trace.steps[refused.to].action.contains("completes"),
        "{}",
        refused.message(&trace)
    );
    let rt = realtime(&model, &trace, "LIVE-1").unwrap();
    assert!(
        rt.notes.iter().any(|n| n.starts_with("reordered (rule 4)")),
        "{:?}",
        rt.notes
    );
    assert!(rt
        .scenario
        .contains("A reordering of the model's shortest counterexample"));
    let holds: Vec<(Held, Until)> = rt
        .schedule
        .holds
        .iter()
        .map(|h| (h.hold.clone(), h.until.clone()))
        .collect();
    assert_eq!(
        holds,
        vec![
            (
                Held::Answer(request("delete", "p1", None)),
                Until::Event(WatchMatch {
                    resource: Resource::Pods,
                    namespace: Some("default".into()),
                    name: "p1".into(),
                    kind: Some("ADDED".into()),
                    node: Some("n1".into()),
                    removes_taint: None,
                    successor: true,
                })
            ),
            // Rule 5: the successor waits for the DELETE to be sent, not for its answer,
            // which waits for the successor.
            (
                Held::Operations(3_150),
                Until::Request(request("delete", "p1", None))
            )
        ]
    );
    // The predecessor is gone when the successor comes (the controller's DELETE): a create.
    assert!(rt.scenario.contains(r#""createPod""#), "{}", rt.scenario);
    assert!(!rt.scenario.contains("recreatePod"), "{}", rt.scenario);
}

#[test]
fn a_reordering_that_leaves_the_moved_step_waiting_for_nothing_is_not_taken() {
    // 1.18: taking the work's start, then the timer's firing, after the untaint would only
    // trade the race for one inside the controller; the path stays refused.
    let (model, trace) = counterexample("timer-vs-cancel", "v1.18", "EVICT-1");
    let refused = forcible(&acts::acts(&model, &trace).unwrap()).unwrap_err();
    assert!(reorder::postponed(&model, &trace, "EVICT-1", &refused).is_none());
}

#[test]
fn a_path_after_a_first_instant_that_deleted_a_pod_is_refused() {
    let (model, trace) = counterexample("successor-while-deleting", "latest", "UID-1");
    let e = realtime(&model, &trace, "UID-1").unwrap_err();
    assert!(
        e.starts_with("the configuration's first instant deletes default/p1"),
        "{e}"
    );
}

#[test]
fn an_operation_waits_for_no_request_the_path_sends_earlier_too() {
    // N1: the untaint waits for the status PATCH (rule 5).
    let (model, trace) = counterexample("timer-vs-cancel", "latest", "EVICT-1");
    let holds = realtime(&model, &trace, "EVICT-1").unwrap().schedule.holds;
    let mut shown = acts::acts(&model, &trace).unwrap();
    let placed: Vec<i64> = (0..trace.steps.len())
        .map(|i| placement(&trace, &shown, i))
        .collect();
    let gated = gates::gates(&trace, &shown, &holds, |i| placed[i]);
    assert_eq!(gated.len(), 1, "{gated:?}");
    // The same PATCH shown at an earlier step too: the hold's latched release would go there.
    let patch = shown
        .iter()
        .position(|a| matches!(a, Act::Request { request, .. } if request.verb == "patch"))
        .unwrap();
    let earlier = (0..patch)
        .find(|&j| !matches!(trace.steps[j].kind, Action::Env(_)))
        .unwrap();
    shown[earlier] = shown[patch].clone();
    let gated = gates::gates(&trace, &shown, &holds, |i| placed[i]);
    assert!(gated.is_empty(), "{gated:?}");
}
