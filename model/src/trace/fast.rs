//! The trace reader's fast path: a line as the writers write it (`{"t":N,"kind":"K",...}`,
//! [`super::to_line`]) decoded straight into its event's fields, without the buffering that
//! serde's flattened, internally tagged [`super::TraceRecord`] needs (every value copied into
//! an intermediate tree first, then decoded from it).
//!
//! The fast path only ever agrees with the general reader: it takes a line only when `t` and
//! `kind` lead it and its kind's fields are all it holds, and gives up (`None`) on anything
//! else and on any error; the caller then reads the line the general way, which also words
//! the errors. Values the fast path would skip unread (unknown fields inside the objects) are
//! checked by the general reader, which reads every value: so a line with what only reading
//! can refuse (a number with a fraction or an exponent, a run of more than 18 digits, an
//! escape in a string, nesting deeper than 32) takes the general way too ([`plain`]); the
//! writers write none of these. The kinds a long trace is made of are here; the header and
//! restarts take the general way. A test reads every line of the fuzz corpus both ways.

use super::{RequestVerb, ResponseResult, TraceEvent, TraceRecord};
use crate::api::{Node, NodeName, Pod, ResourceVersion, Uid};
use crate::time::Time;
use serde::de::DeserializeOwned;
use serde::Deserialize;

/// `line` read the fast way, `None` where the general reader must read it; `buf` is scratch
/// space kept from line to line.
pub(super) fn read(line: &str, buf: &mut String) -> Option<TraceRecord> {
    if !plain(line) {
        return None;
    }
    let rest = line.strip_prefix("{\"t\":")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    // serde_json's integers: no leading zero, and an i64 (19 digits may overflow).
    if digits == 0 || digits > 18 || (digits > 1 && rest.starts_with('0')) {
        return None;
    }
    let t = Time(rest[..digits].parse().ok()?);
    let rest = rest[digits..].strip_prefix(",\"kind\":\"")?;
    let end = rest.find('"')?;
    let (kind, rest) = (&rest[..end], &rest[end + 1..]);
    // The fields after the kind, as an object of their own.
    let fields = rest.strip_prefix(',')?;
    buf.clear();
    buf.push('{');
    buf.push_str(fields);
    let event = match kind {
        "node_added" => decode::<NodeChange>(buf)?.added(),
        "node_modified" => decode::<NodeChange>(buf)?.modified(),
        "node_deleted" => decode::<NodeDeleted>(buf)?.into(),
        "pod_added" => decode::<PodAdded>(buf)?.into(),
        "pod_modified" => decode::<PodModified>(buf)?.into(),
        "pod_deleted" => decode::<PodDeleted>(buf)?.into(),
        "request" => decode::<Request>(buf)?.into(),
        "response" => decode::<Response>(buf)?.into(),
        "event" => decode::<Event>(buf)?.into(),
        "note" => decode::<Note>(buf)?.into(),
        _ => return None,
    };
    Some(TraceRecord { t, event })
}

/// Whether every value of `line` reads alike read or skipped: outside strings no fraction,
/// exponent or run of more than 18 digits, no nesting deeper than 32; inside strings no
/// escape (serde_json skips a value checking its syntax, not its range, its escapes' code
/// points or its depth).
fn plain(line: &str) -> bool {
    let (mut in_string, mut depth, mut digits, mut previous) = (false, 0u32, 0u32, b' ');
    for b in line.bytes() {
        if in_string {
            match b {
                b'"' => in_string = false,
                b'\\' => return false,
                _ => {}
            }
            continue;
        }
        match b {
            b'0'..=b'9' => digits += 1,
            b'.' | b'E' | b'+' => return false,
            b'e' if previous.is_ascii_digit() => return false,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b'"' => in_string = true,
            _ => {}
        }
        if !b.is_ascii_digit() {
            digits = 0;
        }
        if digits > 18 || depth > 32 {
            return false;
        }
        previous = b;
    }
    true
}

/// The fields of one kind, if they are all the object holds.
fn decode<W: DeserializeOwned>(fields: &str) -> Option<W> {
    serde_json::from_str(fields).ok()
}

/// The fields of one kind as [`TraceEvent`]'s variant has them (same names, types and
/// defaults), and nothing else: `t` or `kind` again, or a field no kind has, takes the
/// general way.
macro_rules! fields {
    ($name:ident { $($(#[$attr:meta])* $field:ident: $ty:ty),* $(,)? }) => {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct $name {
            $($(#[$attr])* $field: $ty,)*
        }
    };
}

fields!(NodeChange {
    rv: u64,
    node: Node
});
fields!(NodeDeleted {
    rv: u64,
    name: NodeName
});
fields!(PodAdded { rv: u64, pod: Pod });
fields!(PodModified {
    rv: u64,
    pod: Pod,
    #[serde(default)]
    terminating: bool,
    #[serde(default)]
    disruption_target: bool,
});
fields!(PodDeleted {
    rv: u64,
    namespace: String,
    name: String,
    uid: Uid,
});
fields!(Request {
    id: u64,
    verb: RequestVerb,
    namespace: String,
    name: String,
    #[serde(default)]
    uid: Option<Uid>,
    #[serde(default)]
    node: Option<NodeName>,
    #[serde(default)]
    resource_version: Option<ResourceVersion>,
});
fields!(Response {
    id: u64,
    result: ResponseResult,
    #[serde(default)]
    uid: Option<Uid>,
    #[serde(default)]
    resource_version: Option<ResourceVersion>,
});
fields!(Event {
    namespace: String,
    name: String,
    reason: String,
    message: String,
});

fields!(Note {
    #[serde(default)]
    namespace: Option<String>,
    #[serde(default)]
    name: Option<String>,
    text: String,
});

impl NodeChange {
    fn added(self) -> TraceEvent {
        TraceEvent::NodeAdded {
            rv: self.rv,
            node: self.node,
        }
    }

    fn modified(self) -> TraceEvent {
        TraceEvent::NodeModified {
            rv: self.rv,
            node: self.node,
        }
    }
}

impl From<NodeDeleted> for TraceEvent {
    fn from(w: NodeDeleted) -> TraceEvent {
        TraceEvent::NodeDeleted {
            rv: w.rv,
            name: w.name,
        }
    }
}

impl From<PodAdded> for TraceEvent {
    fn from(w: PodAdded) -> TraceEvent {
        TraceEvent::PodAdded {
            rv: w.rv,
            pod: w.pod,
        }
    }
}

impl From<PodModified> for TraceEvent {
    fn from(w: PodModified) -> TraceEvent {
        TraceEvent::PodModified {
            rv: w.rv,
            pod: w.pod,
            terminating: w.terminating,
            disruption_target: w.disruption_target,
        }
    }
}

impl From<PodDeleted> for TraceEvent {
    fn from(w: PodDeleted) -> TraceEvent {
        TraceEvent::PodDeleted {
            rv: w.rv,
            namespace: w.namespace,
            name: w.name,
            uid: w.uid,
        }
    }
}

impl From<Request> for TraceEvent {
    fn from(w: Request) -> TraceEvent {
        TraceEvent::Request {
            id: w.id,
            verb: w.verb,
            namespace: w.namespace,
            name: w.name,
            uid: w.uid,
            node: w.node,
            resource_version: w.resource_version,
        }
    }
}

impl From<Response> for TraceEvent {
    fn from(w: Response) -> TraceEvent {
        TraceEvent::Response {
            id: w.id,
            result: w.result,
            uid: w.uid,
            resource_version: w.resource_version,
        }
    }
}

impl From<Event> for TraceEvent {
    fn from(w: Event) -> TraceEvent {
        TraceEvent::Event {
            namespace: w.namespace,
            name: w.name,
            reason: w.reason,
            message: w.message,
        }
    }
}

impl From<Note> for TraceEvent {
    fn from(w: Note) -> TraceEvent {
        TraceEvent::Note {
            namespace: w.namespace,
            name: w.name,
            text: w.text,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{PodKey, Taint, TaintEffect};
    use std::path::Path;

    /// The general reader's record for `line`, if it reads one.
    fn general(line: &str) -> Option<TraceRecord> {
        serde_json::from_str(line).ok()
    }

    /// Every line the fast path takes, the general reader reads to the same record.
    fn agrees(line: &str) -> bool {
        let mut buf = String::new();
        match read(line, &mut buf) {
            Some(fast) => {
                assert_eq!(Some(&fast), general(line).as_ref(), "{line}");
                true
            }
            None => false,
        }
    }

    fn lines() -> Vec<String> {
        let pod = Pod {
            key: PodKey::new("default", "web-0"),
            uid: Uid("u1".into()),
            node_name: Some("n1".into()),
            tolerations: Vec::new(),
        };
        let node = Node {
            name: "n1".into(),
            taints: vec![Taint {
                key: "k".into(),
                value: "v".into(),
                effect: TaintEffect::NoExecute,
                time_added: None,
            }],
        };
        let events = [
            TraceEvent::NodeAdded {
                rv: 1,
                node: node.clone(),
            },
            TraceEvent::NodeModified { rv: 2, node },
            TraceEvent::NodeDeleted {
                rv: 3,
                name: "n1".into(),
            },
            TraceEvent::PodAdded {
                rv: 4,
                pod: pod.clone(),
            },
            TraceEvent::PodModified {
                rv: 5,
                pod: pod.clone(),
                terminating: true,
                disruption_target: false,
            },
            TraceEvent::PodModified {
                rv: 6,
                pod,
                terminating: false,
                disruption_target: true,
            },
            TraceEvent::PodDeleted {
                rv: 7,
                namespace: "default".into(),
                name: "web-0".into(),
                uid: Uid("u1".into()),
            },
            TraceEvent::Request {
                id: 1,
                verb: RequestVerb::GetNode,
                namespace: "default".into(),
                name: "web-0".into(),
                uid: Some(Uid("u1".into())),
                node: Some("n1".into()),
                resource_version: Some(ResourceVersion(4)),
            },
            TraceEvent::Request {
                id: 2,
                verb: RequestVerb::Delete,
                namespace: "default".into(),
                name: "web-0".into(),
                uid: None,
                node: None,
                resource_version: None,
            },
            TraceEvent::Response {
                id: 1,
                result: ResponseResult::Ok,
                uid: Some(Uid("u1".into())),
                resource_version: Some(ResourceVersion(4)),
            },
            TraceEvent::Response {
                id: 2,
                result: ResponseResult::NotFound,
                uid: None,
                resource_version: None,
            },
            TraceEvent::Event {
                namespace: "default".into(),
                name: "web-0".into(),
                reason: "TaintManagerEviction".into(),
                message: "Marking for deletion Pod default/web-0".into(),
            },
            TraceEvent::Note {
                namespace: Some("default".into()),
                name: Some("web-0".into()),
                text: "deletion scheduled at 1.000s".into(),
            },
            TraceEvent::Note {
                namespace: None,
                name: None,
                text: "relisted".into(),
            },
        ];
        events
            .into_iter()
            .enumerate()
            .map(|(i, event)| {
                let record = TraceRecord {
                    t: Time(i as i64 * 1000),
                    event,
                };
                super::super::to_line(&record).trim_end().to_string()
            })
            .collect()
    }

    /// Every kind the writers write takes the fast path, to the record written.
    #[test]
    fn written_lines_take_the_fast_path() {
        for line in lines() {
            assert!(agrees(&line), "{line}");
        }
    }

    /// Lines the general reader refuses or reads otherwise are left to it: `t` or `kind`
    /// repeated (even as `null` or escaped), an unknown field, an unclosed object, a number
    /// serde_json refuses, and values inside the objects that only reading them refuses (out
    /// of range, a lone surrogate, too deep).
    #[test]
    fn odd_lines_take_the_general_way() {
        let line = lines()[3].clone();
        let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
        let odd = [
            line.replacen("\"rv\"", "\"t\":null,\"rv\"", 1),
            line.replacen("\"rv\"", "\"kind\":\"pod_added\",\"rv\"", 1),
            line.replacen("\"rv\"", "\"\\u0074\":5,\"rv\"", 1),
            line.replacen("\"rv\"", "\"extra\":[1],\"rv\"", 1),
            line.strip_suffix('}').unwrap().to_string(),
            line.replacen("{\"t\":3000", "{\"t\":03000", 1),
            line.replacen("{\"t\":3000", "{\"t\":3000.0", 1),
            line.replacen("{\"t\":3000", "{\"t\":99999999999999999999", 1),
            line.replacen("\"uid\"", "\"junk\":1e400,\"uid\"", 1),
            line.replacen("\"uid\"", "\"junk\":1E4,\"uid\"", 1),
            line.replacen(
                "\"uid\"",
                &format!("\"junk\":1{},\"uid\"", "0".repeat(400)),
                1,
            ),
            line.replacen("\"uid\"", "\"junk\":\"\\ud800\",\"uid\"", 1),
            line.replacen("\"uid\"", &format!("\"junk\":{deep},\"uid\""), 1),
            format!("{line}}}"),
        ];
        let mut buf = String::new();
        for line in odd {
            assert!(read(&line, &mut buf).is_none(), "{line}");
            agrees(&line);
        }
        // Trailing blanks, and a plain unknown field inside an object, read alike both ways.
        assert!(agrees(&format!("{line}  ")));
        assert!(agrees(&line.replacen(
            "\"uid\"",
            "\"junk\":[1,true,{\"a\":null}],\"uid\"",
            1
        )));
    }

    /// The fuzz corpus's traces (seeds and every input a fuzzer once tripped a reader with),
    /// read line by line both ways.
    #[test]
    fn the_fuzz_corpus_reads_alike_both_ways() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/trace");
        let mut fast = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let bytes = std::fs::read(entry.unwrap().path()).unwrap();
            let text = String::from_utf8_lossy(&bytes);
            fast += text.lines().filter(|l| agrees(l)).count();
        }
        assert!(fast > 100, "{fast} lines took the fast path");
    }
}
