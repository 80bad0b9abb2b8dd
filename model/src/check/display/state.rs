//! A state as the spec names its parts (MODEL-S1..S6), for the Explorer's "Complete State" view
//! (stateright shows a state by its `Debug`): the clock, the API server's truth, each informer's
//! cache and the events it has not delivered yet (its lag), the controller's work queues, shard
//! channels and workers, the timed queue with its deadlines, the requests in flight, the
//! environment and the history the properties read.

use super::super::state::{CachedNode, CachedPod, Delta, Informer, SysState};
use super::{effect, pod, taints};
use std::fmt::{self, Write};
use taintcheck_core::shared::Shared;
use taintcheck_core::{Effect, Entry, NodePhase, PodItem, WorkPhase, Worker};

impl fmt::Debug for SysState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&render(self))
    }
}

fn item(p: &PodItem) -> String {
    format!(
        "{} on {}",
        p.key,
        p.node_name.as_deref().unwrap_or("(unbound)")
    )
}

fn list(items: impl IntoIterator<Item = String>) -> String {
    let items: Vec<String> = items.into_iter().collect();
    if items.is_empty() {
        "none".into()
    } else {
        items.join(", ")
    }
}

fn since(t: &[taintcheck_core::time::Time]) -> String {
    list(t.iter().map(|t| format!("{}ms", t.0)))
}

fn render(s: &SysState) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "clock: t={}ms", s.now.0);

    let _ = writeln!(o, "API server (the truth):");
    for (name, n) in s.api.nodes.iter() {
        let _ = writeln!(
            o,
            "  node {name}: taints {} (added at {})",
            taints(&n.node.taints),
            since(&n.taint_since)
        );
    }
    for p in s.api.pods.values() {
        let _ = writeln!(
            o,
            "  pod {}; resourceVersion {}{}{}{}",
            pod(&p.pod),
            p.version.0,
            if p.disruption_target {
                "; DisruptionTarget"
            } else {
                ""
            },
            match p.deletion {
                Some(d) => format!("; terminating (deletionTimestamp {}ms)", d.timestamp.0),
                None => String::new(),
            },
            match p.bound_since {
                Some(t) => format!("; bound since {}ms", t.0),
                None => String::new(),
            }
        );
    }
    if s.api.pods.is_empty() {
        let _ = writeln!(o, "  no pods");
    }

    node_informer(&mut o, &s.nodes);
    pod_informer(&mut o, &s.pods);
    controller(&mut o, s);

    let _ = writeln!(
        o,
        "environment: {} operation(s) left{}{}",
        s.env.budget,
        if s.env.fail_next {
            "; the next API call fails"
        } else {
            ""
        },
        match s.env.restarted_at {
            Some(t) => format!("; controller restarted at {}ms", t.0),
            None => String::new(),
        }
    );
    let h = &s.history;
    let _ = writeln!(
        o,
        "history: cancel events not yet superseded: {}; failed requests: {}; pods decided for \
         eviction (uid): {}",
        list(h.cancelled.iter().map(ToString::to_string)),
        list(h.failed.iter().map(|r| format!("#{r}"))),
        list(h.decided.iter().map(ToString::to_string)),
    );
    if let Some(c) = &h.custom {
        let _ =
            writeln!(
            o,
            "user properties' history: events seen (bit per property): {:#b}; taints first seen: \
             {}; marked for deletion (uid): {}; deletions in a window: {}",
            c.hit,
            list(
                c.first_tainted
                    .iter()
                    .map(|((n, k, v), t)| format!("{n} {k}={v} at {}ms", t.0))
            ),
            list(c.marked.iter().map(ToString::to_string)),
            list(c.deletions.iter().map(|(i, t)| format!("#{i} at {}ms", t.0))),
        );
    }
    o
}

fn lag<K, V>(inf: &Informer<K, V>, show: impl Fn(&Delta<K, Shared<V>>) -> String) -> String
where
    K: Ord,
{
    let mut text = if inf.pending.is_empty() {
        "up to date".to_string()
    } else {
        format!(
            "{} event(s) not yet delivered: {}",
            inf.pending.len(),
            list(inf.pending.iter().map(show))
        )
    };
    if inf.unsynced > 0 {
        let _ = write!(text, "; not synced ({} listed objects to go)", inf.unsynced);
    }
    text
}

fn node_informer(o: &mut String, inf: &Informer<taintcheck_core::api::NodeName, CachedNode>) {
    let _ = writeln!(
        o,
        "node informer: {}",
        lag(inf, |d| match d {
            Delta::Upsert(n) => format!("{} {}", n.node.name, taints(&n.node.taints)),
            Delta::Delete(k) => format!("{k} deleted"),
        })
    );
    for (name, n) in inf.cache.iter() {
        let _ = writeln!(
            o,
            "  cache: node {name}: taints {} (seen since {})",
            taints(&n.node.taints),
            since(&n.taint_since)
        );
    }
}

fn pod_informer(o: &mut String, inf: &Informer<taintcheck_core::api::PodKey, CachedPod>) {
    let _ = writeln!(
        o,
        "pod informer: {}",
        lag(inf, |d| match d {
            Delta::Upsert(p) => pod(&p.pod),
            Delta::Delete(k) => format!("{k} deleted"),
        })
    );
    for p in inf.cache.values() {
        let _ = writeln!(o, "  cache: pod {}", pod(&p.pod));
    }
}

fn controller(o: &mut String, s: &SysState) {
    let c = &s.ctrl;
    let _ = writeln!(o, "controller (profile {}):", c.profile().name);
    let _ = writeln!(
        o,
        "  taintedNodes: {}",
        list(
            c.tainted_nodes()
                .iter()
                .map(|(n, t)| format!("{n} {}", taints(t)))
        )
    );
    let (held_node, held_pod) = c.held();
    let _ = writeln!(
        o,
        "  node work queue: queued {}; held by the dispatcher: {}",
        list(c.node_queue().queued().map(ToString::to_string)),
        held_node.map_or("none".into(), ToString::to_string)
    );
    let _ = writeln!(
        o,
        "  pod work queue: queued {}; held by the dispatcher: {}",
        list(c.pod_queue().queued().map(item)),
        held_pod.map_or("none".into(), item)
    );
    let shards = c.shards();
    let _ = writeln!(
        o,
        "  shards: {} worker(s); not listed: idle with empty channels",
        shards.len()
    );
    for (w, sh) in shards.busy() {
        let worker = match &sh.worker {
            Worker::Idle => "idle".to_string(),
            Worker::Draining { pod } => format!("holds pod item {}", item(pod)),
            Worker::Node { node, phase, then } => {
                let doing = match phase {
                    NodePhase::Updated { taints: t } => {
                        format!("handles node {node}: taints {} read", taints(t))
                    }
                    NodePhase::Pods {
                        taints: t, pods, ..
                    } => format!(
                        "handles node {node}: taints {}, pods to do {}",
                        taints(t),
                        list(pods.iter().map(|p| p.key.to_string()))
                    ),
                };
                match then {
                    Some(p) => format!("{doing}; then pod item {}", item(p)),
                    None => doing,
                }
            }
        };
        let _ = writeln!(
            o,
            "  shard {w}: node channel [{}], pod channel [{}], worker {worker}",
            list(sh.nodes.iter().map(ToString::to_string)),
            list(sh.pods.iter().map(item))
        );
    }
    let q = c.timed_queue();
    let _ = writeln!(o, "  timed queue (entries by key):");
    for (key, e) in q.entries().iter() {
        let uid = key
            .uid
            .as_ref()
            .map_or(String::new(), |u| format!(" (uid {u})"));
        let entry = match e {
            Entry::Nil { work: Some(w) } => format!("nil entry, work #{} running", w.0),
            Entry::Nil { work: None } => "nil entry (tombstone)".to_string(),
            Entry::Timer {
                created_at,
                fire_at,
                work,
            } => format!(
                "timer created at {}ms, fires at {}ms, work #{}",
                created_at.0, fire_at.0, work.0
            ),
        };
        let _ = writeln!(o, "    {}{uid}: {entry}", key.pod);
    }
    if q.entries().is_empty() {
        let _ = writeln!(o, "    none");
    }
    let _ = writeln!(o, "  works:");
    for (id, w) in q.works().iter() {
        let phase = match &w.phase {
            WorkPhase::Armed => format!("timer armed for {}ms", w.fire_at.0),
            WorkPhase::Spawned => "timer fired, not started".to_string(),
            WorkPhase::Marked => "marked for deletion; its first request is next".to_string(),
            WorkPhase::Requesting { attempt, .. } => {
                format!("attempt {attempt} waits for its answer")
            }
            WorkPhase::Answered { attempt, .. } => {
                format!("attempt {attempt} answered; its reaction is next")
            }
            WorkPhase::Throttled { attempt, until, .. } => {
                format!(
                    "attempt {attempt} waits for a token; sends at {}ms",
                    until.0
                )
            }
            WorkPhase::Backoff { attempt, until } => {
                format!("attempt {attempt} failed; retries at {}ms", until.0)
            }
            WorkPhase::Finished { outcome } => format!("finished ({outcome:?}), map update next"),
        };
        let _ = writeln!(
            o,
            "    #{} for {}: {phase}{}",
            id.0,
            w.key.pod,
            if w.cancelled { "; cancelled" } else { "" }
        );
    }
    if q.works().is_empty() {
        let _ = writeln!(o, "    none");
    }
    let _ = writeln!(
        o,
        "  requests in flight: {}",
        list(
            c.pending_requests()
                .map(|r| effect(&Effect::Api(r.clone())))
        )
    );
}
