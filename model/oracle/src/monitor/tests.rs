//! Each monitored property on small traces that show it and on their twins that do not.

use super::{sightings, Sighting};
use taintcheck_core::time::Duration;
use taintcheck_formats::trace::TraceRecord;

const NODE1_TAINTED: &str = r#"{"t":0,"kind":"node_added","rv":1,"node":{"name":"n1","taints":[{"key":"k","value":"","effect":"NoExecute"}]}}"#;
const NODE2: &str = r#"{"t":0,"kind":"node_added","rv":2,"node":{"name":"n2","taints":[]}}"#;

fn pod(t: i64, kind: &str, uid: &str, node: &str, seconds: &str) -> String {
    format!(
        r#"{{"t":{t},"kind":"{kind}","rv":3,"pod":{{"key":{{"namespace":"default","name":"p"}},"uid":"{uid}","node_name":"{node}","tolerations":[{{"key":"k","operator":"Exists","value":"","effect":"NoExecute","seconds":{seconds}}}]}}}}"#
    )
}

fn line(t: i64, rest: &str) -> String {
    format!(r#"{{"t":{t},{rest}}}"#)
}

fn seen(lines: &[String]) -> Vec<(&'static str, usize)> {
    let trace: Vec<TraceRecord> = lines
        .iter()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect();
    sightings(&trace, false, Duration(500))
        .into_iter()
        .map(|Sighting { property, line, .. }| (property, line))
        .collect()
}

fn start(seconds: &str) -> Vec<String> {
    vec![
        NODE1_TAINTED.to_string(),
        NODE2.to_string(),
        pod(0, "pod_added", "u1", "n1", seconds),
    ]
}

fn delete(t: i64, id: u64) -> String {
    line(
        t,
        &format!(r#""kind":"request","id":{id},"verb":"delete","namespace":"default","name":"p""#),
    )
}

fn event(t: i64, message: &str) -> String {
    line(
        t,
        &format!(
            r#""kind":"event","namespace":"default","name":"p","reason":"TaintManagerEviction","message":"{message} Pod default/p""#
        ),
    )
}

#[test]
fn a_delete_after_the_controller_saw_the_taint_go_is_evict_1() {
    let mut t = start("1");
    t.push(delete(1000, 1));
    assert_eq!(seen(&t), vec![]);
    let mut t = start("1");
    t.push(line(
        900,
        r#""kind":"node_modified","rv":4,"node":{"name":"n1","taints":[]}"#,
    ));
    t.push(delete(1000, 1));
    assert_eq!(seen(&t), vec![("EVICT-1", 5)]);
}

fn untaint(t: i64) -> String {
    line(
        t,
        r#""kind":"node_modified","rv":4,"node":{"name":"n1","taints":[]}"#,
    )
}

fn retaint(t: i64) -> String {
    line(
        t,
        r#""kind":"node_modified","rv":6,"node":{"name":"n1","taints":[{"key":"k","value":"","effect":"NoExecute"}]}"#,
    )
}

fn patch(t: i64, id: u64) -> String {
    line(
        t,
        &format!(r#""kind":"request","id":{id},"verb":"patch","namespace":"default","name":"p""#),
    )
}

/// A line that only moves the trace on.
fn later(t: i64) -> String {
    line(t, r#""kind":"note","text":"later""#)
}

/// Pod p tolerating k for 3 s on n1, the taint gone at 900 ms and deletion cancelled at 1 s.
fn cancelled() -> Vec<String> {
    let mut t = start("3");
    t.push(untaint(900));
    t.push(event(1000, "Cancelling deletion of"));
    t
}

#[test]
fn a_delete_after_cancelling_deletion_is_cancel_1_and_2_until_the_next_marking() {
    let mut t = cancelled();
    t.push(delete(1001, 1));
    t.push(later(1600));
    assert_eq!(
        seen(&t),
        vec![("EVICT-1", 6), ("CANCEL-1", 6), ("CANCEL-2", 6)]
    );
    // The work's own Marking, posted later than its DELETE but within the slack.
    t.insert(6, event(1400, "Marking for deletion"));
    assert_eq!(seen(&t), vec![("EVICT-1", 6)]);
    // Marking before the DELETE ends the claim.
    let mut t = cancelled();
    t.push(event(1001, "Marking for deletion"));
    t.push(delete(1001, 1));
    t.push(later(1600));
    assert_eq!(seen(&t), vec![("EVICT-1", 7)]);
}

#[test]
fn a_successors_marking_does_not_excuse_a_write_after_the_cancel() {
    let mut t = cancelled();
    t.push(line(
        1001,
        r#""kind":"pod_deleted","rv":5,"namespace":"default","name":"p","uid":"u1""#,
    ));
    t.push(delete(1002, 1));
    t.push(pod(1003, "pod_added", "u2", "n1", "3"));
    t.push(event(1400, "Marking for deletion"));
    t.push(later(1600));
    assert_eq!(seen(&t), vec![("CANCEL-1", 7), ("CANCEL-2", 7)]);
}

#[test]
fn a_patch_after_cancelling_deletion_is_cancel_2_once_the_slack_has_passed() {
    let mut t = cancelled();
    t.push(patch(1001, 1));
    assert_eq!(seen(&t), vec![], "the trace ends before its Marking could");
    t.push(later(1502));
    assert_eq!(seen(&t), vec![("CANCEL-2", 6)]);
}

#[test]
fn a_cancel_ends_where_the_controller_may_decide_again() {
    // The taint back at 1.1 s: the controller may schedule the pod anew.
    let mut t = cancelled();
    t.push(retaint(1100));
    t.push(patch(1200, 1));
    t.push(later(2000));
    assert_eq!(seen(&t), vec![]);
    // A cancel while the received pod is exposed (1.37 cancels and adds a work at once when
    // a pod is to be evicted now) opens no claim.
    let mut t = start("0");
    t.push(event(1000, "Cancelling deletion of"));
    t.push(patch(1001, 1));
    t.push(later(2000));
    assert!(
        seen(&t).iter().all(|(p, _)| !p.starts_with("CANCEL")),
        "{:?}",
        seen(&t)
    );
}

#[test]
fn a_delete_before_the_earliest_eviction_is_evict_2() {
    // Tainted and bound at 0, tolerated 1 s: due at 1 s.
    let mut t = start("1");
    t.push(delete(999, 1));
    assert_eq!(seen(&t), vec![("EVICT-2", 4)]);
    let mut t = start("1");
    t.push(delete(1000, 1));
    assert_eq!(seen(&t), vec![]);
    // A restart at 500 ms: the new incarnation received the taint no earlier, due at 1.5 s.
    let mut t = start("1");
    t.push(line(500, r#""kind":"controller_restarted""#));
    t.push(delete(1200, 1));
    assert_eq!(seen(&t), vec![("EVICT-2", 5)]);
    // A precondition naming another incarnation, or a pod already Terminating: nothing.
    let mut t = start("1");
    t.push(line(
        100,
        r#""kind":"request","id":1,"verb":"delete","namespace":"default","name":"p","uid":"u9""#,
    ));
    assert_eq!(seen(&t), vec![]);
}

#[test]
fn deleting_an_incarnation_never_seen_due_is_uid_1() {
    let successor = |uid: &str| {
        let mut t = start("2");
        t.push(delete(2000, 1));
        t.push(line(
            2100,
            r#""kind":"pod_deleted","rv":5,"namespace":"default","name":"p","uid":"u1""#,
        ));
        t.push(pod(2100, "pod_added", "u2", "n2", "2"));
        t.push(line(
            2101,
            &format!(r#""kind":"response","id":1,"result":"ok","uid":"{uid}""#),
        ));
        seen(&t)
    };
    assert_eq!(successor("u2"), vec![("UID-1", 7)]);
    assert_eq!(successor("u1"), vec![]);
}

#[test]
fn a_deadline_counts_from_the_taint_or_from_the_restart() {
    // Tainted at 0, tolerated 4 s, D = 500 ms: due by 4.5 s; a restart at 2.5 s moves LIVE-1's
    // deadline to 7 s, not LIVE-2's.
    let mut t = start("4");
    t.push(line(2500, r#""kind":"controller_restarted""#));
    t.push(event(6500, "Marking for deletion"));
    t.push(line(
        6600,
        r#""kind":"pod_deleted","rv":5,"namespace":"default","name":"p","uid":"u1""#,
    ));
    assert_eq!(seen(&t), vec![("LIVE-2", 5)]);
    t.insert(4, event(7100, "Marking for deletion"));
    t.truncate(5);
    t.push(line(
        7200,
        r#""kind":"pod_deleted","rv":5,"namespace":"default","name":"p","uid":"u1""#,
    ));
    assert_eq!(seen(&t), vec![("LIVE-1", 5), ("LIVE-2", 5)]);
    // At the end of the trace, a pod never deleted.
    let t = start("4");
    let mut with_end =
        vec![r#"{"t":0,"kind":"header","version":1,"source":"x","end":9000}"#.to_string()];
    with_end.extend(t);
    assert_eq!(seen(&with_end), vec![("LIVE-1", 4), ("LIVE-2", 4)]);
}

/// R1 (#119862): the node's untaint (rv 4) comes before the pod's bind (rv 5) in the API, but
/// reaches the controller after it, which deletes the pod on its stale node. JUST-1, at the
/// DELETE's answer; not EVICT-1, as the controller had not seen the untaint. Its twins: the
/// untaint after the bind in the API (rv 7), or the run read past a restart.
#[test]
fn a_delete_of_a_pod_the_api_never_showed_exposed_is_just_1() {
    let r1 = |untaint_rv: u64, restart: bool| {
        let mut t = vec![
            NODE1_TAINTED.to_string(),
            line(
                100,
                r#""kind":"pod_added","rv":5,"pod":{"key":{"namespace":"default","name":"p"},"uid":"u1","node_name":"n1","tolerations":[]}"#,
            ),
        ];
        if restart {
            t.insert(1, line(50, r#""kind":"controller_restarted""#));
        }
        t.push(delete(200, 1));
        t.push(line(
            250,
            r#""kind":"pod_deleted","rv":6,"namespace":"default","name":"p","uid":"u1""#,
        ));
        t.push(line(
            260,
            r#""kind":"response","id":1,"result":"ok","uid":"u1""#,
        ));
        t.push(line(
            300,
            &format!(
                r#""kind":"node_modified","rv":{untaint_rv},"node":{{"name":"n1","taints":[]}}"#
            ),
        ));
        seen(&t)
    };
    assert_eq!(r1(4, false), vec![("JUST-1", 5)]);
    assert_eq!(r1(7, false), vec![]);
    assert_eq!(r1(4, true), vec![]);
}

/// A pod seen bound before any version of its node (the trace begins with the node listed as
/// it is now, rv 8): what the node was before is not in the trace, so no JUST-1.
#[test]
fn a_pod_bound_before_its_nodes_first_version_is_not_judged() {
    let t = vec![
        line(
            0,
            r#""kind":"pod_added","rv":5,"pod":{"key":{"namespace":"default","name":"p"},"uid":"u1","node_name":"n1","tolerations":[]}"#,
        ),
        line(
            0,
            r#""kind":"node_added","rv":8,"node":{"name":"n1","taints":[]}"#,
        ),
        delete(200, 1),
        line(
            250,
            r#""kind":"pod_deleted","rv":9,"namespace":"default","name":"p","uid":"u1""#,
        ),
        line(260, r#""kind":"response","id":1,"result":"ok","uid":"u1""#),
    ];
    assert!(
        !seen(&t).iter().any(|(p, _)| *p == "JUST-1"),
        "{:?}",
        seen(&t)
    );
}
