//! The proxy's exchange log (PROXY-3): one JSON line per exchange, watch event or error, each
//! written when it happens and flushed with it (watch events: with the last of the chunk that
//! brought them), so a proxy that is killed loses nothing it passed on.

use super::route::ObjectRef;
use crate::Error;
use k8s_openapi::jiff::Timestamp;
use serde_json::{json, Value};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use taintcheck_formats::recording::PROXY_VERSION;

/// An open exchange log.
#[derive(Debug)]
pub struct Log {
    path: PathBuf,
    out: Mutex<BufWriter<File>>,
    /// The first write that failed (the disk is full): reported when the proxy stops.
    failed: Mutex<Option<String>>,
    errors: Mutex<u64>,
}

/// One request and its answer, as the proxy forwarded them.
pub struct Exchange<'a> {
    pub id: u64,
    pub verb: &'a str,
    pub uri: &'a str,
    pub object: Option<&'a ObjectRef>,
    pub user_agent: Option<&'a str>,
    pub received: Timestamp,
    pub done: Timestamp,
    pub code: u16,
    pub request: Body,
    pub response: Body,
    /// The proxy answered it itself (a failure the scenario asked for, PROXY-10): the API
    /// server never saw it.
    pub injected: bool,
}

/// A body as the log keeps it: JSON is kept as JSON, another encoding only by its type.
pub enum Body {
    None,
    Json(Value),
    Other(String),
}

/// One hold of a schedule, as its `Steer` line tells it.
pub struct Steered {
    pub hold: usize,
    /// `event`, `request` or `answer`.
    pub kind: &'static str,
    /// The watch (an event) or the exchange (a request or answer) it held.
    pub id: u64,
    pub what: String,
    pub held: std::time::Duration,
    /// Its awaited act released it (else its bound did).
    pub released: bool,
    /// It took what it holds (false: the run ended first; it held nothing).
    pub engaged: bool,
    pub awaited: String,
}

impl Log {
    /// Creates (truncates) the log at `path`.
    pub fn create(path: &Path) -> Result<Log, Error> {
        let file = File::create(path)
            .map_err(|e| Error::new(format!("{}: cannot write: {e}", path.display())))?;
        Ok(Log {
            path: path.to_path_buf(),
            out: Mutex::new(BufWriter::new(file)),
            failed: Mutex::new(None),
            errors: Mutex::new(0),
        })
    }

    /// The log's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes an exchange.
    pub fn exchange(&self, x: Exchange<'_>) {
        let mut line = json!({
            "apiVersion": PROXY_VERSION,
            "kind": "Exchange",
            "id": x.id,
            "verb": x.verb,
            "requestURI": x.uri,
            "requestReceivedTimestamp": x.received.to_string(),
            "stageTimestamp": x.done.to_string(),
            "responseStatus": {"code": x.code},
        });
        let o = line.as_object_mut().expect("a JSON object");
        if let Some(object) = x.object {
            o.insert("objectRef".into(), json!(object));
        }
        if let Some(agent) = x.user_agent {
            o.insert("userAgent".into(), agent.into());
        }
        if x.injected {
            o.insert("injected".into(), true.into());
        }
        for (field, body) in [("requestObject", x.request), ("responseObject", x.response)] {
            match body {
                Body::None => {}
                Body::Json(v) => {
                    o.insert(field.into(), v);
                }
                Body::Other(kind) => {
                    o.insert("contentType".into(), kind.into());
                }
            }
        }
        self.write(&line, true);
    }

    /// Writes a watch event of watch `watch` as the controller received it (`initial`: an ADDED
    /// event replaying what exists, before a `sendInitialEvents` watch's end bookmark), unflushed
    /// until [`Log::flush`].
    pub fn watch_event(&self, watch: u64, received: Timestamp, event: Value, initial: bool) {
        let mut line = json!({
            "apiVersion": PROXY_VERSION,
            "kind": "WatchEvent",
            "watch": watch,
            "receivedTimestamp": received.to_string(),
        });
        let o = line.as_object_mut().expect("a JSON object");
        if initial {
            o.insert("initial".into(), true.into());
        }
        if let Value::Object(event) = event {
            for (k, v) in event {
                if k == "type" || k == "object" {
                    o.insert(k, v);
                }
            }
        }
        self.write(&line, false);
    }

    /// Flushes what was written.
    pub fn flush(&self) {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        if let Err(e) = out.flush() {
            self.failed(&e);
        }
    }

    /// Writes that the exchange `id` met `message` (bad input, a failure, a limit).
    pub fn error(&self, id: u64, message: &str) {
        *self.errors.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        self.write(
            &json!({
                "apiVersion": PROXY_VERSION,
                "kind": "Error",
                "id": id,
                "timestamp": Timestamp::now().to_string(),
                "message": message,
            }),
            true,
        );
    }

    /// Writes what a hold of the schedule kept back, for how long, and whether what it awaited
    /// released it (else its bound did: PROXY-8).
    pub fn steer(&self, s: &Steered) {
        self.write(
            &json!({
                "apiVersion": PROXY_VERSION,
                "kind": "Steer",
                "hold": s.hold,
                "held": s.kind,
                "id": s.id,
                "what": s.what,
                "timestamp": Timestamp::now().to_string(),
                "heldMs": s.held.as_secs_f64() * 1000.0,
                "engaged": s.engaged,
                "releasedBy": match (s.engaged, s.released) {
                    (false, _) => "nothing: it never held",
                    (true, true) => s.awaited.as_str(),
                    (true, false) => "its bound",
                },
                "awaited": s.awaited,
            }),
            true,
        );
    }

    /// How many errors were written.
    pub fn errors(&self) -> u64 {
        *self.errors.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The first write that failed, if any.
    pub fn failure(&self) -> Option<String> {
        self.failed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn write(&self, line: &Value, flush: bool) {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let written = serde_json::to_writer(&mut *out, line)
            .map_err(std::io::Error::from)
            .and_then(|()| out.write_all(b"\n"))
            .and_then(|()| if flush { out.flush() } else { Ok(()) });
        if let Err(e) = written {
            self.failed(&e);
        }
    }

    fn failed(&self, e: &std::io::Error) {
        let mut failed = self.failed.lock().unwrap_or_else(|e| e.into_inner());
        failed.get_or_insert_with(|| format!("{}: cannot write: {e}", self.path.display()));
    }
}
