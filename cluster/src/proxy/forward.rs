//! One request through the proxy: read with a bounded body, sent to the API server with the
//! controller's own headers, answered as the API server answered, and logged (PROXY-2). A
//! watch's answer is streamed: each event is logged when it arrives and passed on at once.

use super::fault::Faults;
use super::log::{Body, Exchange, Log};
use super::route;
use super::steer::Steering;
use super::{Limits, Upstream};
use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, Limited, StreamBody};
use hyper::body::{Frame, Incoming, SizeHint};
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Request, Response, StatusCode};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use k8s_openapi::jiff::Timestamp;
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

/// What the proxy answers with: a whole body or a stream.
pub type Out = UnsyncBoxBody<Bytes, std::io::Error>;

type Connector = hyper_rustls::HttpsConnector<HttpConnector>;

/// What every connection shares.
pub struct State {
    upstream: Upstream,
    client: Client<Connector, Full<Bytes>>,
    pub log: Log,
    limits: Limits,
    pub steering: Option<Steering>,
    /// The scenario's failing requests (PROXY-10).
    pub faults: Faults,
    next_id: AtomicU64,
    tasks: Mutex<JoinSet<()>>,
}

impl State {
    pub fn new(upstream: Upstream, log: Log, limits: Limits, steering: Option<Steering>) -> State {
        let builder = hyper_rustls::HttpsConnectorBuilder::new();
        let builder = match &upstream.tls {
            Some(tls) => builder.with_tls_config((**tls).clone()).https_only(),
            None => builder
                .with_tls_config(
                    rustls::ClientConfig::builder_with_provider(Arc::new(
                        rustls::crypto::ring::default_provider(),
                    ))
                    .with_safe_default_protocol_versions()
                    .expect("ring supports the default TLS versions")
                    .with_root_certificates(rustls::RootCertStore::empty())
                    .with_no_client_auth(),
                )
                .https_or_http(),
        };
        let connector = builder.enable_http1().enable_http2().build();
        State {
            upstream,
            client: Client::builder(TokioExecutor::new()).build(connector),
            log,
            limits,
            steering,
            faults: Faults::default(),
            next_id: AtomicU64::new(0),
            tasks: Mutex::new(JoinSet::new()),
        }
    }

    /// Runs `task` until it ends or the proxy stops.
    pub fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) {
        let mut tasks = self.tasks.lock().unwrap_or_else(|e| e.into_inner());
        while tasks.try_join_next().is_some() {}
        tasks.spawn(task);
    }

    /// Logs the schedule's holds that never met what they hold (PROXY-8).
    pub fn unused_holds(&self) {
        if let Some(steering) = &self.steering {
            steering.log_unused(&self.log);
        }
    }

    /// Ends every connection and stream.
    pub fn close(&self) {
        self.tasks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .abort_all();
    }
}

/// Headers that belong to one hop, not to the request (RFC 9110, 7.6.1), and `Host`, which the
/// client sets for the API server.
fn hop_by_hop(name: &header::HeaderName) -> bool {
    matches!(
        name.as_str(),
        "connection"
            | "keep-alive"
            | "proxy-connection"
            | "proxy-authenticate"
            | "proxy-authorization"
            | "te"
            | "trailer"
            | "transfer-encoding"
            | "upgrade"
            | "host"
    )
}

fn copy_headers(from: &HeaderMap, to: &mut HeaderMap) {
    for (name, value) in from {
        if !hop_by_hop(name) {
            to.append(name.clone(), value.clone());
        }
    }
}

/// A message's content type (JSON when it says none, as the API server's default), with its
/// content coding when it has one (`application/json; gzip`): such a body is not read.
fn content_type(headers: &HeaderMap) -> String {
    let kind = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json");
    match headers
        .get(header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .filter(|c| *c != "identity")
    {
        Some(coding) => format!("{kind}; coded {coding}"),
        None => kind.to_string(),
    }
}

/// A body as the log keeps it, by its content type.
fn body(headers: &HeaderMap, bytes: &[u8]) -> Body {
    if bytes.is_empty() {
        return Body::None;
    }
    let kind = content_type(headers);
    if !kind.contains("json") || kind.contains("coded") {
        return Body::Other(kind);
    }
    match serde_json::from_slice(bytes) {
        Ok(v) => Body::Json(v),
        Err(_) => Body::Other(format!("{kind} (not valid JSON)")),
    }
}

/// An answer of the proxy's own, as a Kubernetes `Status` so that clients print its message.
fn status(code: StatusCode, message: &str) -> Response<Out> {
    let body = serde_json::json!({
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "message": format!("taintcheck proxy: {message}"),
        "code": code.as_u16(),
    });
    let mut r = Response::new(full(Bytes::from(body.to_string())));
    *r.status_mut() = code;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

fn full(bytes: Bytes) -> Out {
    UnsyncBoxBody::new(Full::new(bytes).map_err(|never| match never {}))
}

/// Forwards one request and answers it; every failure is an answer (a `Status`) and a line of
/// the log, never a panic.
pub async fn serve(state: Arc<State>, req: Request<Incoming>) -> Response<Out> {
    let received = Timestamp::now();
    let id = state.next_id.fetch_add(1, Ordering::Relaxed) + 1;
    let (parts, incoming) = req.into_parts();
    let uri = parts
        .uri
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_string();
    let query = parts.uri.query().unwrap_or("");
    let route = route::route(parts.method.as_str(), parts.uri.path(), query);
    let fail = |code: StatusCode, message: String| {
        state
            .log
            .error(id, &format!("{} {uri}: {message}", parts.method));
        status(code, &message)
    };
    if parts.headers.contains_key(header::UPGRADE) {
        return fail(
            StatusCode::NOT_IMPLEMENTED,
            "upgraded connections (exec, attach, port-forward) are not forwarded".into(),
        );
    }
    let limit = state.limits.request_body;
    let sent = match Limited::new(incoming, limit).collect().await {
        Ok(c) => c.to_bytes(),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => {
            return fail(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("the request body is over {limit} bytes"),
            )
        }
        Err(e) => return fail(StatusCode::BAD_REQUEST, format!("reading the request: {e}")),
    };
    let request_body = body(&parts.headers, &sent);
    let mut object = route.object.clone();
    if let (Some(o), Body::Json(v), "create") = (&mut object, &request_body, route.verb) {
        // A create names its object in its body, as the API server's audit entry does.
        if let Some(name) = v.pointer("/metadata/name").and_then(Value::as_str) {
            o.name = name.to_string();
        }
    }
    if let Some(steering) = &state.steering {
        steering.request(route.verb, object.as_ref(), &request_body);
        if let Some(hold) =
            steering.holds_request(false, route.verb, object.as_ref(), &request_body)
        {
            steering.wait(hold, id, &state.log).await;
        }
    }
    if let Some((code, answer)) = state.faults.take(route.verb, object.as_ref()) {
        let user_agent = parts
            .headers
            .get(header::USER_AGENT)
            .and_then(|v| v.to_str().ok());
        let text = answer.to_string();
        state.log.exchange(Exchange {
            id,
            verb: route.verb,
            uri: &uri,
            object: object.as_ref(),
            user_agent,
            received,
            done: Timestamp::now(),
            code,
            request: request_body,
            response: Body::Json(answer),
            injected: true,
        });
        let mut r = Response::new(full(Bytes::from(text)));
        *r.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        return r;
    }
    let mut forward = Request::new(Full::new(sent));
    *forward.method_mut() = parts.method.clone();
    *forward.uri_mut() = match format!("{}{uri}", state.upstream.base).parse() {
        Ok(u) => u,
        Err(e) => return fail(StatusCode::BAD_REQUEST, format!("the path: {e}")),
    };
    copy_headers(&parts.headers, forward.headers_mut());
    // The proxy reads what it passes on, so it asks for it uncompressed; the controller's HTTP
    // client decompresses transparently what it asked compressed, so it reads the same bytes.
    forward.headers_mut().remove(header::ACCEPT_ENCODING);
    let answer =
        match tokio::time::timeout(state.limits.answer, state.client.request(forward)).await {
            Err(_) => {
                return fail(
                    StatusCode::GATEWAY_TIMEOUT,
                    format!(
                        "the API server did not answer within {} s",
                        state.limits.answer.as_secs()
                    ),
                )
            }
            Ok(Err(e)) => {
                return fail(
                    StatusCode::BAD_GATEWAY,
                    format!("the API server {}: {e}", state.upstream.base),
                )
            }
            Ok(Ok(answer)) => answer,
        };
    let (mut head, answer) = answer.into_parts();
    let code = head.status.as_u16();
    let user_agent = parts
        .headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok());
    let exchange = |response: Body, done: Timestamp| Exchange {
        id,
        verb: route.verb,
        uri: &uri,
        object: object.as_ref(),
        user_agent,
        received,
        done,
        code,
        request: match &request_body {
            Body::None => Body::None,
            Body::Json(v) => Body::Json(v.clone()),
            Body::Other(k) => Body::Other(k.clone()),
        },
        response,
        injected: false,
    };
    let mut headers = HeaderMap::new();
    copy_headers(&head.headers, &mut headers);
    if route.is_watch() && head.status.is_success() {
        let kind = content_type(&head.headers);
        let json = kind.contains("json") && !kind.contains("coded");
        let kind = if json { Body::None } else { Body::Other(kind) };
        state.log.exchange(exchange(kind, Timestamp::now()));
        if !json {
            state.log.error(
                id,
                "the watch stream is not JSON: its events are passed on but not logged",
            );
        }
        headers.remove(header::CONTENT_LENGTH);
        head.headers = headers;
        let initial = route::query_value(query, "sendInitialEvents") == Some("true");
        let (tx, rx) = mpsc::channel(16);
        let stream_state = state.clone();
        state.spawn(stream(stream_state, id, answer, tx, json, initial));
        let events = futures::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|frame| (frame, rx))
        });
        return Response::from_parts(head, UnsyncBoxBody::new(StreamBody::new(events)));
    }
    let limit = state.limits.response_body;
    let read = tokio::time::timeout(state.limits.answer, Limited::new(answer, limit).collect());
    let bytes = match read.await {
        Err(_) => {
            return fail(
                StatusCode::GATEWAY_TIMEOUT,
                format!(
                    "the API server's answer did not end within {} s",
                    state.limits.answer.as_secs()
                ),
            )
        }
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => {
            return fail(
                StatusCode::BAD_GATEWAY,
                format!("the API server's answer is over {limit} bytes"),
            )
        }
        Ok(Err(e)) => {
            return fail(
                StatusCode::BAD_GATEWAY,
                format!("reading the API server's answer: {e}"),
            )
        }
        Ok(Ok(c)) => c.to_bytes(),
    };
    if let Some(steering) = &state.steering {
        if let Some(hold) = steering.holds_request(true, route.verb, object.as_ref(), &request_body)
        {
            steering.wait(hold, id, &state.log).await;
        }
    }
    let releases = state.steering.as_ref().map_or_else(Vec::new, |s| {
        s.awaiting_answer(route.verb, object.as_ref(), &request_body)
    });
    state
        .log
        .exchange(exchange(body(&head.headers, &bytes), Timestamp::now()));
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(bytes.len()));
    head.headers = headers;
    if releases.is_empty() {
        return Response::from_parts(head, full(bytes));
    }
    let answer = Announced {
        bytes: Full::new(bytes),
        state: state.clone(),
        releases,
    };
    Response::from_parts(head, UnsyncBoxBody::new(answer))
}

/// An answer that holds awaiting it wait for (PROXY-8): they are released when the connection
/// has taken its last byte, which hyper marks by dropping the body, so that a watch event
/// they hold cannot reach the controller before the answer does.
struct Announced {
    bytes: Full<Bytes>,
    state: Arc<State>,
    releases: Vec<usize>,
}

impl hyper::body::Body for Announced {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        Pin::new(&mut self.bytes)
            .poll_frame(cx)
            .map_err(|never| match never {})
    }

    fn is_end_stream(&self) -> bool {
        self.bytes.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.bytes.size_hint()
    }
}

impl Drop for Announced {
    fn drop(&mut self) {
        if let Some(steering) = &self.state.steering {
            steering.release(&self.releases);
        }
    }
}

type Sender = mpsc::Sender<Result<Frame<Bytes>, std::io::Error>>;

/// Passes a watch stream on to the controller, logging each event (one JSON object per line)
/// when it arrives. Bad input ends the controller's stream with an error, as a broken
/// connection would: an event over the limit, a line that is not a watch event, or a reader
/// that stalls.
async fn stream(
    state: Arc<State>,
    id: u64,
    mut answer: Incoming,
    tx: Sender,
    json: bool,
    mut initial: bool,
) {
    let mut pending: Vec<u8> = Vec::new();
    let broken = |message: String| std::io::Error::other(message);
    loop {
        let data = match answer.frame().await {
            None => return,
            Some(Err(e)) => {
                let message = format!("the API server's watch stream broke: {e}");
                state.log.error(id, &message);
                let _ = tx.send(Err(broken(message))).await;
                return;
            }
            Some(Ok(frame)) => match frame.into_data() {
                Ok(data) => data,
                Err(_) => continue,
            },
        };
        let mut sent = 0;
        // The events this chunk passes on, for the holds awaiting one.
        let mut delivered = Vec::new();
        if json {
            let mut at = Timestamp::now();
            let tail = pending.len();
            pending.extend_from_slice(&data);
            let mut start = 0;
            while let Some(end) = pending[start..].iter().position(|b| *b == b'\n') {
                let line_start = start;
                let line = &pending[start..start + end];
                start += end + 1;
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                match serde_json::from_slice::<Value>(line) {
                    Ok(event) if event.get("type").and_then(Value::as_str).is_some() => {
                        let kind = event["type"].as_str().unwrap_or("");
                        if kind == "BOOKMARK"
                            && event
                                .pointer("/object/metadata/annotations/k8s.io~1initial-events-end")
                                == Some(&Value::from("true"))
                        {
                            initial = false;
                        }
                        let replay = initial && kind == "ADDED";
                        if let Some(steering) = &state.steering {
                            steering.arrived(&event);
                        }
                        let held = state
                            .steering
                            .as_ref()
                            .and_then(|s| s.holds_event(&event).map(|h| (s, h)));
                        if let Some((steering, hold)) = held {
                            // Pass on what came before the held event, then hold it (and what
                            // follows it on this stream, as a lagging watch would).
                            let split = line_start.saturating_sub(tail);
                            if split > sent && !pass(&state, id, &tx, data.slice(sent..split)).await
                            {
                                return;
                            }
                            sent = sent.max(split);
                            release(&state, &mut delivered);
                            state.log.flush();
                            steering.wait(hold, id, &state.log).await;
                            at = Timestamp::now();
                        }
                        if state.steering.is_some() {
                            delivered.push(event.clone());
                        }
                        state.log.watch_event(id, at, event, replay);
                    }
                    _ => {
                        let message = format!(
                            "the API server's watch stream has a line that is not a watch \
                             event ({} bytes, starting {:?}): the controller's watch is closed",
                            line.len(),
                            String::from_utf8_lossy(&line[..line.len().min(40)])
                        );
                        state.log.error(id, &message);
                        let _ = tx.send(Err(broken(message))).await;
                        return;
                    }
                }
            }
            state.log.flush();
            pending.drain(..start);
            if pending.len() > state.limits.watch_event {
                let message = format!(
                    "a watch event is over {} bytes: the controller's watch is closed",
                    state.limits.watch_event
                );
                state.log.error(id, &message);
                let _ = tx.send(Err(broken(message))).await;
                return;
            }
        }
        if !pass(&state, id, &tx, data.slice(sent..)).await {
            return;
        }
        release(&state, &mut delivered);
    }
}

/// The controller has received `events`: the holds awaiting one of them are let go.
fn release(state: &State, events: &mut Vec<Value>) {
    if let Some(steering) = &state.steering {
        for event in events.drain(..) {
            steering.delivered(&event);
        }
    }
}

/// Passes `bytes` on to the controller; false when its stream is gone (it closed its watch, or
/// left it unread past the limit, which is logged).
async fn pass(state: &State, id: u64, tx: &Sender, bytes: Bytes) -> bool {
    if bytes.is_empty() {
        return true;
    }
    let limit = state.limits.stalled_reader;
    match tokio::time::timeout(limit, tx.send(Ok(Frame::data(bytes)))).await {
        Ok(Ok(())) => true,
        // The controller closed its watch.
        Ok(Err(_)) => false,
        Err(_) => {
            let message = format!(
                "the controller read nothing of its watch for {} s: closed",
                limit.as_secs()
            );
            state.log.error(id, &message);
            false
        }
    }
}
