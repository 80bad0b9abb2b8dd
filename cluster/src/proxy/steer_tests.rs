//! The holds a schedule made from a counterexample needs (PROXY-11): a request held until the
//! API server sends a successor's event, the successor's event held from the controller until
//! it has the request's answer, and the settling wait after a release.

use super::tests::{api_server, start_with, WATCH_HEAD};
use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::StatusCode;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A pod event of web-0 with this UID.
fn incarnation(kind: &str, uid: &str, rv: u64) -> Bytes {
    let event = serde_json::json!({"type": kind, "object": {
        "kind": "Pod", "apiVersion": "v1",
        "metadata": {"name": "web-0", "namespace": "shop", "uid": uid,
                     "resourceVersion": rv.to_string()},
        "spec": {"nodeName": "node1", "containers": [{"name": "c", "image": "i"}]},
    }});
    Bytes::from(format!("{event}\n"))
}

/// UID-1's order: the DELETE reaches the API server after it made the successor, and the
/// controller sees the successor only after the DELETE's answer, with the settle the schedules
/// made from counterexamples give (the test's client reads the two connections in two tasks).
const SUCCESSOR: &str = r#"{"holds": [
  {"hold": {"request": {"verb": "delete", "resource": "pods", "namespace": "shop", "name": "web-0"}},
   "until": {"arrives": {"resource": "pods", "namespace": "shop", "name": "web-0", "type": "ADDED", "successor": true}},
   "at_most_ms": 10000},
  {"hold": {"event": {"resource": "pods", "namespace": "shop", "name": "web-0", "type": "ADDED", "successor": true}},
   "until": {"answer": {"verb": "delete", "resource": "pods", "namespace": "shop", "name": "web-0"}},
   "at_most_ms": 10000, "settle_ms": 5}
]}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_waits_for_the_api_servers_event_which_waits_for_the_requests_answer() {
    let (url, received) = api_server(
        WATCH_HEAD,
        vec![
            (0, incarnation("ADDED", "u1", 1)),
            (400, incarnation("DELETED", "u1", 2)),
            (0, incarnation("ADDED", "u2", 3)),
        ],
    )
    .await;
    let schedule = super::steer::Schedule::parse("successor.json", SUCCESSOR).unwrap();
    let run =
        Arc::new(start_with(&url, Default::default(), "successor", true, Some(schedule)).await);
    let watch = run
        .client
        .request(run.request("GET", "/api/v1/pods?watch=true", vec![]))
        .await
        .unwrap();
    let begun = Instant::now();
    let delete = {
        let run = run.clone();
        tokio::spawn(async move {
            let path = "/api/v1/namespaces/shop/pods/web-0";
            let answer = run
                .client
                .request(run.request("DELETE", path, vec![]))
                .await;
            (answer.unwrap().status(), Instant::now())
        })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        received.load(Ordering::SeqCst),
        1,
        "the DELETE reached the API server before it sent the successor"
    );
    // The predecessor's events pass; the successor's comes only after the DELETE's answer.
    let mut body = watch.into_body();
    let mut seen = String::new();
    let successor_at = loop {
        let frame = tokio::time::timeout(Duration::from_secs(5), body.frame())
            .await
            .expect("the stream goes on")
            .unwrap()
            .unwrap();
        seen.push_str(&String::from_utf8_lossy(frame.data_ref().unwrap()));
        if seen.contains("\"u2\"") {
            break Instant::now();
        }
    };
    let (code, answered_at) = tokio::time::timeout(Duration::from_secs(5), delete)
        .await
        .expect("released")
        .unwrap();
    assert_eq!(code, StatusCode::OK);
    assert!(received.load(Ordering::SeqCst) == 2);
    assert!(
        answered_at <= successor_at,
        "the successor reached the controller {:?} before the DELETE's answer",
        answered_at - successor_at
    );
    assert!(successor_at - begun >= Duration::from_millis(400));
    drop(body);
    let lines = Arc::into_inner(run).unwrap().stop();
    let steers: Vec<_> = lines.iter().filter(|l| l["kind"] == "Steer").collect();
    assert_eq!(steers.len(), 2, "{steers:?}");
    let by: Vec<&str> = steers
        .iter()
        .map(|s| s["releasedBy"].as_str().unwrap())
        .collect();
    assert!(
        by.contains(&"the API server sending ADDED event of pods shop/web-0 (a successor)"),
        "{by:?}"
    );
    assert!(
        by.contains(&"the controller receiving the answer to delete pods shop/web-0"),
        "{by:?}"
    );
}

/// A hold released by an event the controller received waits `settle_ms` more.
const SETTLE: &str = r#"{"holds": [
  {"hold": {"answer": {"verb": "get", "resource": "pods", "namespace": "shop", "name": "web-0"}},
   "until": {"event": {"resource": "pods", "namespace": "shop", "name": "web-0", "type": "ADDED"}},
   "at_most_ms": 10000, "settle_ms": 300}
]}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_by_a_received_event_settles_before_the_answer_goes() {
    let (url, _) = api_server(WATCH_HEAD, vec![(0, incarnation("ADDED", "u1", 1))]).await;
    let schedule = super::steer::Schedule::parse("settle.json", SETTLE).unwrap();
    let run = Arc::new(start_with(&url, Default::default(), "settle", true, Some(schedule)).await);
    let watch = run
        .client
        .request(run.request("GET", "/api/v1/pods?watch=true", vec![]))
        .await
        .unwrap();
    let mut body = watch.into_body();
    let frame = body.frame().await.unwrap().unwrap();
    let delivered = Instant::now();
    assert!(String::from_utf8_lossy(frame.data_ref().unwrap()).contains("u1"));
    let answer = run
        .client
        .request(run.request("GET", "/api/v1/namespaces/shop/pods/web-0", vec![]))
        .await
        .unwrap();
    assert_eq!(answer.status(), StatusCode::OK);
    assert!(
        delivered.elapsed() >= Duration::from_millis(300),
        "the answer came {:?} after the event, before the settling wait",
        delivered.elapsed()
    );
    drop(body);
    let lines = Arc::into_inner(run).unwrap().stop();
    let steer = lines.iter().find(|l| l["kind"] == "Steer").unwrap();
    assert_eq!(
        steer["releasedBy"], "the controller receiving ADDED event of pods shop/web-0",
        "{steer}"
    );
}

/// Rule 5's hold: the scenario's operations at 2.15 s wait for the controller's DELETE.
const OPERATIONS: &str = r#"{"holds": [
  {"hold": {"operations": 2150},
   "until": {"request": {"verb": "delete", "resource": "pods", "namespace": "shop", "name": "web-0"}},
   "at_most_ms": 10000}
]}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operations_wait_for_the_controllers_request_and_others_go_at_once() {
    let (url, _) = api_server("200 OK\r\nContent-Type: application/json", vec![]).await;
    let schedule = super::steer::Schedule::parse("operations.json", OPERATIONS).unwrap();
    let run =
        Arc::new(start_with(&url, Default::default(), "operations", true, Some(schedule)).await);
    tokio::time::timeout(
        Duration::from_millis(200),
        run.proxy.before_operations(1_000),
    )
    .await
    .expect("operations no hold names go at once");
    let waiting = {
        let run = run.clone();
        tokio::spawn(async move {
            run.proxy.before_operations(2_150).await;
            Instant::now()
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!waiting.is_finished(), "played before the DELETE was sent");
    let sent = Instant::now();
    let path = "/api/v1/namespaces/shop/pods/web-0";
    let answer = run.client.request(run.request("DELETE", path, vec![]));
    let _ = tokio::time::timeout(Duration::from_secs(5), answer).await;
    let released = tokio::time::timeout(Duration::from_secs(5), waiting)
        .await
        .expect("released by the DELETE")
        .unwrap();
    assert!(released >= sent);
    let lines = Arc::into_inner(run).unwrap().stop();
    let steer = lines.iter().find(|l| l["kind"] == "Steer").unwrap();
    assert_eq!(steer["held"], "operations", "{steer}");
    assert_eq!(
        steer["what"], "the scenario's operations at 2.150s",
        "{steer}"
    );
    assert_eq!(steer["releasedBy"], "delete pods shop/web-0", "{steer}");
}

/// A hold of operations no harness asks about is no divergence; one a harness never reached is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operations_never_held_are_a_divergence_only_where_a_harness_plays() {
    let (url, _) = api_server("200 OK\r\nContent-Type: application/json", vec![]).await;
    for harness in [false, true] {
        let schedule = super::steer::Schedule::parse("operations.json", OPERATIONS).unwrap();
        let name = format!("unengaged-{harness}");
        let run = start_with(&url, Default::default(), &name, true, Some(schedule)).await;
        if harness {
            // The harness plays an operation at 1 s; the run ends before 2.15 s.
            run.proxy.before_operations(1_000).await;
        }
        let lines = run.stop();
        let steers: Vec<_> = lines.iter().filter(|l| l["kind"] == "Steer").collect();
        if harness {
            assert_eq!(steers.len(), 1, "{steers:?}");
            assert_eq!(steers[0]["engaged"], false, "{steers:?}");
            assert_eq!(steers[0]["held"], "operations", "{steers:?}");
        } else {
            assert!(steers.is_empty(), "{steers:?}");
        }
    }
}

#[test]
fn a_successor_is_only_a_pods_and_a_removed_taint_only_a_nodes() {
    let text = r#"{"holds": [{"hold": {"event": {"resource": "nodes", "name": "n1", "successor": true}},
        "until": {"answer": {"verb": "delete", "resource": "pods", "name": "p"}}, "at_most_ms": 1}]}"#;
    let e = super::steer::Schedule::parse("s.json", text).unwrap_err();
    assert_eq!(
        e,
        "s.json: holds[0].hold.event.successor: only a pod has successors"
    );
    let text = r#"{"holds": [{"hold": {"request": {"verb": "delete", "resource": "pods", "name": "p"}},
        "until": {"arrives": {"resource": "pods", "name": "p", "removes_taint": "k"}}, "at_most_ms": 1}]}"#;
    let e = super::steer::Schedule::parse("s.json", text).unwrap_err();
    assert_eq!(
        e,
        "s.json: holds[0].until.arrives.removes_taint: only a node's event removes a taint"
    );
}
