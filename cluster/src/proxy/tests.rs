//! The proxy against API servers that misbehave (a stand-in written here, since a real one
//! cannot be made to send a malformed stream) and clients that do: every case ends in an answer
//! or a closed stream and a line of the log, within the limits set, never a hang or a crash.

use super::{Limits, Proxy, Upstream};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, StatusCode};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// An API server that answers every request with `head` and then writes `chunks`, each after
/// its delay, and closes (a close-delimited body; chunks share their bytes). It records how many requests it received.
pub(super) async fn api_server(
    head: &'static str,
    chunks: Vec<(u64, Bytes)>,
) -> (String, Arc<std::sync::atomic::AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let received = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = received.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let chunks = chunks.clone();
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buf = [0u8; 4096];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                let head = format!("HTTP/1.1 {head}\r\nConnection: close\r\n\r\n");
                if stream.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                for (delay, bytes) in chunks {
                    tokio::time::sleep(Duration::from_millis(delay)).await;
                    if stream.write_all(&bytes).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (url, received)
}

pub(super) const WATCH_HEAD: &str = "200 OK\r\nContent-Type: application/json;stream=watch";

fn pod_event(kind: &str, rv: u64) -> Vec<u8> {
    let event = serde_json::json!({"type": kind, "object": {
        "kind": "Pod", "apiVersion": "v1",
        "metadata": {"name": "web-0", "namespace": "shop", "uid": "u1",
                     "resourceVersion": rv.to_string(),
                     "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {"nodeName": "node1", "containers": [{"name": "c", "image": "i"}],
                 "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute",
                                  "tolerationSeconds": 300}]},
    }});
    format!("{event}\n").into_bytes()
}

pub(super) struct Run {
    pub(super) proxy: Proxy,
    log: PathBuf,
    pub(super) client: Client<
        hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>,
        Full<Bytes>,
    >,
}

/// A proxy to `upstream` and a client of it that speaks HTTP/2, as client-go does over TLS.
async fn start(upstream: &str, limits: Limits, name: &str) -> Run {
    start_with(upstream, limits, name, true, None).await
}

pub(super) async fn start_with(
    upstream: &str,
    limits: Limits,
    name: &str,
    h2: bool,
    schedule: Option<super::steer::Schedule>,
) -> Run {
    let log = std::env::temp_dir().join(format!("tc-proxy-{name}-{}.ndjson", std::process::id()));
    let proxy = Proxy::start(
        Upstream::new(upstream, &[]).unwrap(),
        "127.0.0.1:0".parse().unwrap(),
        &log,
        limits,
        schedule,
    )
    .await
    .unwrap();
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(rustls::pki_types::CertificateDer::from(
            proxy.authority_der().to_vec(),
        ))
        .unwrap();
    let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let builder = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_only()
        .enable_http1();
    let client = if h2 {
        Client::builder(TokioExecutor::new()).build(builder.enable_http2().build())
    } else {
        Client::builder(TokioExecutor::new()).build(builder.build())
    };
    Run { proxy, log, client }
}

impl Run {
    pub(super) fn request(&self, method: &str, path: &str, body: Vec<u8>) -> Request<Full<Bytes>> {
        Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.proxy.url()))
            .header("authorization", "Bearer secret-of-the-controller")
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(body)))
            .unwrap()
    }

    /// Whether a watch of `path` breaks rather than ends as if the API server had closed it.
    /// HTTP/2's reset drops the frames still queued for the stream, the answer's head among
    /// them when the proxy is slow to flush it: then the request itself fails.
    async fn watch_breaks(&self, path: &str) -> bool {
        match self.client.request(self.request("GET", path, vec![])).await {
            Err(_) => true,
            Ok(answer) => answer.into_body().collect().await.is_err(),
        }
    }

    /// The log's lines, once the proxy has stopped.
    pub(super) fn stop(self) -> Vec<Value> {
        self.proxy.stop().unwrap();
        let text = std::fs::read_to_string(&self.log).unwrap();
        let _ = std::fs::remove_file(&self.log);
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

fn kinds(lines: &[Value]) -> Vec<String> {
    lines
        .iter()
        .map(|l| {
            let kind = l["kind"].as_str().unwrap_or("");
            match l["type"].as_str() {
                Some(t) => format!("{kind} {t}"),
                None => kind.to_string(),
            }
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_is_passed_on_as_sent_and_logged_as_received() {
    let mut sent = pod_event("ADDED", 5);
    sent.extend(pod_event("MODIFIED", 6));
    let (url, _) = api_server(
        WATCH_HEAD,
        vec![
            (0, Bytes::copy_from_slice(&sent[..100])),
            (50, Bytes::copy_from_slice(&sent[100..])),
        ],
    )
    .await;
    let run = start(&url, Limits::default(), "watch").await;
    let answer = run
        .client
        .request(run.request("GET", "/api/v1/pods?watch=true&resourceVersion=4", vec![]))
        .await
        .unwrap();
    assert_eq!(answer.status(), StatusCode::OK);
    let got = answer.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(
        got.as_ref(),
        sent.as_slice(),
        "the controller reads what the API server sent"
    );
    let lines = run.stop();
    assert_eq!(
        kinds(&lines),
        ["Exchange", "WatchEvent ADDED", "WatchEvent MODIFIED"]
    );
    assert_eq!(lines[0]["verb"], "watch");
    assert_eq!(lines[0]["objectRef"]["resource"], "pods");
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    assert!(
        !text.contains("secret-of-the-controller"),
        "the log keeps no credentials"
    );
    // The import reads the events as changes when the controller received them.
    let trace = taintcheck_formats::recording::import(&[("proxy.ndjson", &text)]).unwrap();
    let kinds: Vec<String> = trace
        .iter()
        .map(|r| {
            serde_json::to_value(&r.event).unwrap()["kind"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        kinds,
        ["header", "pod_added"],
        "the MODIFIED event changes nothing taints read"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_watch_stream_closes_the_controllers_watch() {
    let (url, _) = api_server(
        WATCH_HEAD,
        vec![
            (0, Bytes::from(pod_event("ADDED", 5))),
            (50, Bytes::from_static(b"<html>502 Bad Gateway</html>\n")),
        ],
    )
    .await;
    let run = start(&url, Limits::default(), "malformed").await;
    assert!(
        run.watch_breaks("/api/v1/pods?watch=1").await,
        "the controller's stream breaks rather than ends cleanly"
    );
    let lines = run.stop();
    assert_eq!(kinds(&lines), ["Exchange", "WatchEvent ADDED", "Error"]);
    let message = lines[2]["message"].as_str().unwrap();
    assert!(
        message.contains("not a watch event") && message.contains("<html>"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_watch_event_is_cut_at_the_limit() {
    // One event that never ends: 64 KiB chunks without a newline.
    let brace = Bytes::from(vec![b'{'; 64 << 10]);
    let chunks = (0..64).map(|_| (1, brace.clone())).collect();
    let (url, _) = api_server(WATCH_HEAD, chunks).await;
    let limits = Limits {
        watch_event: 1 << 20,
        ..Limits::default()
    };
    let run = start(&url, limits, "endless").await;
    assert!(run.watch_breaks("/api/v1/nodes?watch=true").await);
    let lines = run.stop();
    assert_eq!(kinds(&lines), ["Exchange", "Error"]);
    let message = lines[1]["message"].as_str().unwrap();
    assert!(message.contains("over 1048576 bytes"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_request_is_refused_before_the_api_server_sees_it() {
    let (url, received) = api_server(
        "200 OK\r\nContent-Type: application/json",
        vec![(0, Bytes::from_static(b"{}"))],
    )
    .await;
    let limits = Limits {
        request_body: 1 << 10,
        ..Limits::default()
    };
    let run = start(&url, limits, "huge").await;
    let answer = run
        .client
        .request(run.request("POST", "/api/v1/namespaces/a/events", vec![b' '; 4 << 10]))
        .await
        .unwrap();
    assert_eq!(answer.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let body = answer.into_body().collect().await.unwrap().to_bytes();
    let status: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(status["kind"], "Status", "clients print a Status's message");
    assert_eq!(received.load(std::sync::atomic::Ordering::SeqCst), 0);
    let lines = run.stop();
    assert_eq!(kinds(&lines), ["Error"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_api_server_is_answered_for_at_the_limit() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    // An API server that accepts and never answers at all.
    let silent = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = listener.accept().await {
            held.push(s);
        }
    });
    let limits = Limits {
        answer: Duration::from_millis(300),
        ..Limits::default()
    };
    let run = start(&silent, limits, "slow").await;
    let begun = Instant::now();
    let answer = run
        .client
        .request(run.request("GET", "/api/v1/namespaces/a/pods/p", vec![]))
        .await
        .unwrap();
    assert_eq!(answer.status(), StatusCode::GATEWAY_TIMEOUT);
    assert!(begun.elapsed() < Duration::from_secs(30));
    let lines = run.stop();
    assert_eq!(kinds(&lines), ["Error"]);
    assert!(lines[0]["message"]
        .as_str()
        .unwrap()
        .contains("did not answer within"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_controller_that_never_reads_its_watch_is_cut_off() {
    // Events of 64 KiB, endlessly: the proxy holds a bounded number while nobody reads.
    let event = {
        let mut e = pod_event("MODIFIED", 7);
        let pad = format!(",\"pad\":\"{}\"}}\n", "x".repeat(64 << 10));
        e.truncate(e.len() - 2);
        e.extend(pad.into_bytes());
        Bytes::from(e)
    };
    let chunks = (0..100_000).map(|_| (0, event.clone())).collect();
    let (url, _) = api_server(WATCH_HEAD, chunks).await;
    let limits = Limits {
        stalled_reader: Duration::from_millis(500),
        ..Limits::default()
    };
    // HTTP/1.1, whose client takes no body data it is not asked for (an HTTP/2 client takes a
    // flow-control window's worth first: the same bound, reached later).
    let run = start_with(&url, limits, "stalled", false, None).await;
    let answer = run
        .client
        .request(run.request("GET", "/api/v1/pods?watch=true", vec![]))
        .await
        .unwrap();
    // Never read the body; wait until the proxy gives up on this reader.
    let begun = Instant::now();

    loop {
        let text = std::fs::read_to_string(&run.log).unwrap_or_default();
        if text.contains("read nothing of its watch") {
            break;
        }
        assert!(
            begun.elapsed() < Duration::from_secs(60),
            "the stalled reader was never cut off"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    drop(answer);
    let lines = run.stop();
    let events = kinds(&lines)
        .iter()
        .filter(|k| k.starts_with("WatchEvent"))
        .count();
    assert!(
        events < 2_000,
        "{events} events taken from the API server for a reader that reads none"
    );
}

#[test]
fn an_api_server_whose_certificate_cannot_be_checked_is_refused() {
    let e = Upstream::new("https://127.0.0.1:6443", &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("no certificate authority"), "{e}");
    let e = Upstream::new("ftp://x", &[]).unwrap_err().to_string();
    assert!(e.contains("Unsupported value"), "{e}");
}

fn node_event(rv: u64, tainted: bool) -> Vec<u8> {
    let taints = if tainted {
        serde_json::json!([{"key": "maintenance", "value": "true", "effect": "NoExecute"}])
    } else {
        serde_json::json!([])
    };
    let event = serde_json::json!({"type": "MODIFIED", "object": {
        "kind": "Node", "apiVersion": "v1",
        "metadata": {"name": "node1", "resourceVersion": rv.to_string()},
        "spec": {"taints": taints},
    }});
    format!("{event}\n").into_bytes()
}

const UNTIL_GET: &str = r#"{"holds": [{
  "hold": {"event": {"resource": "nodes", "name": "node1", "removes_taint": "maintenance"}},
  "until": {"request": {"verb": "get", "resource": "pods", "namespace": "default", "name": "web-0"}},
  "at_most_ms": 10000
}]}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_event_reaches_the_controller_only_after_the_awaited_request() {
    let mut sent = node_event(5, true);
    sent.extend(node_event(6, false));
    let (url, _) = api_server(WATCH_HEAD, vec![(0, Bytes::from(sent))]).await;
    let schedule = super::steer::Schedule::parse("until-get.json", UNTIL_GET).unwrap();
    let run = start_with(&url, Limits::default(), "steer", true, Some(schedule)).await;
    let answer = run
        .client
        .request(run.request("GET", "/api/v1/nodes?watch=true", vec![]))
        .await
        .unwrap();
    let mut body = answer.into_body();
    let mut got = Vec::new();
    // The tainted node arrives; the untaint is held while the controller sends nothing.
    while !got.ends_with(b"\n") {
        let frame = body.frame().await.unwrap().unwrap();
        got.extend_from_slice(frame.data_ref().unwrap());
    }
    assert!(String::from_utf8_lossy(&got).contains("maintenance"));
    let more = tokio::time::timeout(Duration::from_millis(300), body.frame()).await;
    assert!(
        more.is_err(),
        "the untaint reached the controller before its request"
    );
    // The awaited request releases it.
    let get = run
        .client
        .request(run.request("GET", "/api/v1/namespaces/default/pods/web-0", vec![]))
        .await
        .unwrap();
    drop(get);
    let frame = tokio::time::timeout(Duration::from_secs(5), body.frame())
        .await
        .expect("released")
        .unwrap()
        .unwrap();
    assert!(String::from_utf8_lossy(frame.data_ref().unwrap()).contains("\"taints\":[]"));
    let lines = run.stop();
    let steer = lines
        .iter()
        .find(|l| l["kind"] == "Steer")
        .expect("a Steer line");
    assert_eq!(steer["releasedBy"], "get pods default/web-0", "{steer}");
    assert!(steer["heldMs"].as_f64().unwrap() >= 300.0, "{steer}");
}

#[test]
fn a_schedule_with_a_wrong_field_is_named_at_its_line() {
    let text = "{\"holds\": [{\n \"hold\": {\"event\": {\"resource\": \"pod\", \"name\": \"a\"}},\n \"until\": {\"request\": {\"verb\": \"get\", \"resource\": \"pods\", \"name\": \"a\"}}, \"at_most_ms\": 1}]}";
    let e = super::steer::Schedule::parse("s.json", text).unwrap_err();
    assert!(
        e.starts_with("s.json:2: holds[0].hold.event.resource: unknown variant `pod`"),
        "{e}"
    );
    let text = r#"{"holds": [{"hold": {"answer": {"verb": "patch", "resource": "pods"}},
      "until": {"event": {"resource": "pods", "name": "a"}}, "at_most_ms": 1}]}"#;
    let e = super::steer::Schedule::parse("s.json", text).unwrap_err();
    assert_eq!(e, "s.json: holds[0]: a request of pods needs its `name`");
}

const ANSWER_UNTIL_EVENT_POST: &str = r#"{"holds": [{
  "hold": {"answer": {"verb": "patch", "resource": "pods", "name": "web-0", "subresource": "status"}},
  "until": {"request": {"verb": "create", "resource": "events", "message": "Cancelling deletion"}},
  "at_most_ms": 10000
}]}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_answer_reaches_the_controller_only_after_the_awaited_event_is_posted() {
    let status = Bytes::from_static(b"{\"kind\":\"Status\",\"status\":\"Success\"}");
    let (url, _) = api_server(
        "200 OK\r\nContent-Type: application/json",
        vec![(0, status)],
    )
    .await;
    let schedule = super::steer::Schedule::parse("answer.json", ANSWER_UNTIL_EVENT_POST).unwrap();
    let run = Arc::new(start_with(&url, Limits::default(), "answer", true, Some(schedule)).await);
    let begun = Instant::now();
    let patch = {
        let run = run.clone();
        tokio::spawn(async move {
            let path = "/api/v1/namespaces/shop/pods/web-0/status";
            let answer = run
                .client
                .request(run.request("PATCH", path, b"{}".to_vec()))
                .await
                .unwrap();
            (answer.status(), begun.elapsed())
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    // An Event saying something else does not release it.
    let other =
        br#"{"metadata": {"name": "e1"}, "message": "Marking for deletion Pod shop/web-0"}"#;
    let post = |body: &[u8]| run.request("POST", "/api/v1/namespaces/shop/events", body.to_vec());
    run.client.request(post(other)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        !patch.is_finished(),
        "the answer was let go by the wrong Event"
    );
    let posted = begun.elapsed();
    let cancel =
        br#"{"metadata": {"name": "e2"}, "message": "Cancelling deletion of Pod shop/web-0"}"#;
    run.client.request(post(cancel)).await.unwrap();
    let (code, answered) = tokio::time::timeout(Duration::from_secs(5), patch)
        .await
        .expect("released")
        .unwrap();
    assert_eq!(code, StatusCode::OK);
    assert!(answered >= posted, "{answered:?} < {posted:?}");
    let lines = Arc::into_inner(run).unwrap().stop();
    let steer = lines.iter().find(|l| l["kind"] == "Steer").unwrap();
    assert_eq!(steer["held"], "answer", "{steer}");
    assert_eq!(
        steer["releasedBy"], "create events saying \"Cancelling deletion\"",
        "{steer}"
    );
    // The exchange is dated when the controller got its answer, after the Event was posted.
    let exchange = |which: &dyn Fn(&Value) -> bool| {
        lines
            .iter()
            .find(|l| l["kind"] == "Exchange" && which(l))
            .unwrap()
            .clone()
    };
    let patched = exchange(&|l| l["verb"] == "patch")["stageTimestamp"].clone();
    let event = exchange(&|l| l["objectRef"]["name"] == "e2")["requestReceivedTimestamp"].clone();
    let at = |v: &Value| {
        v.as_str()
            .unwrap()
            .parse::<k8s_openapi::jiff::Timestamp>()
            .unwrap()
    };
    assert!(at(&event) < at(&patched), "{event} {patched}");
}

const REQUEST_UNTIL_EVENT: &str = r#"{"holds": [{
  "hold": {"request": {"verb": "delete", "resource": "pods", "name": "web-0"}},
  "until": {"event": {"resource": "pods", "name": "web-0", "type": "ADDED"}},
  "at_most_ms": 10000
}]}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_request_reaches_the_api_server_only_after_the_awaited_watch_event() {
    let (url, received) =
        api_server(WATCH_HEAD, vec![(400, Bytes::from(pod_event("ADDED", 7)))]).await;
    let schedule = super::steer::Schedule::parse("request.json", REQUEST_UNTIL_EVENT).unwrap();
    let run = Arc::new(start_with(&url, Limits::default(), "request", true, Some(schedule)).await);
    let watch = run
        .client
        .request(run.request("GET", "/api/v1/pods?watch=true", vec![]))
        .await
        .unwrap();
    let delete = {
        let run = run.clone();
        tokio::spawn(async move {
            let path = "/api/v1/namespaces/shop/pods/web-0";
            run.client
                .request(run.request("DELETE", path, vec![]))
                .await
                .unwrap()
                .status()
        })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        received.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "the DELETE reached the API server before the awaited event"
    );
    let mut body = watch.into_body();
    let frame = body.frame().await.unwrap().unwrap();
    assert!(String::from_utf8_lossy(frame.data_ref().unwrap()).contains("ADDED"));
    let code = tokio::time::timeout(Duration::from_secs(5), delete)
        .await
        .expect("released")
        .unwrap();
    assert_eq!(code, StatusCode::OK);
    assert_eq!(received.load(std::sync::atomic::Ordering::SeqCst), 2);
    drop(body);
    let lines = Arc::into_inner(run).unwrap().stop();
    let steer = lines.iter().find(|l| l["kind"] == "Steer").unwrap();
    assert_eq!(steer["held"], "request", "{steer}");
    assert_eq!(
        steer["releasedBy"], "the controller receiving ADDED event of pods web-0",
        "{steer}"
    );
}
