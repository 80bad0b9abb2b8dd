//! A path of the model as an ITF trace ([`itf`](super::itf)): one state per step plus the
//! initial one, under the variable names of specs/spec.md (MODEL-S1..MODEL-S6: `now`, `api`,
//! `nodes`, `pods`, `ctrl`, `env`, `history`). Objects are records, keyed collections `#map`s,
//! queues lists, absent values Quint's `None`; a Terminating pod's `deletion` (API-2) is a record,
//! and a relist's difference (INF-1) is the informer's `pending` queue. `ctrl` is a projection of the core's state: the
//! work queues' contents, `taintedNodes`, the timed-worker map, the works and the requests in
//! flight (the dispatchers' and workers' positions are left out). Spec: CHECK-3.

use super::itf::{Trace, Value};
use super::state::{ApiPod, CachedNode, CachedPod, Delta, Informer, SysState};
use taintcheck_core::api::{Deletion, Pod, Taint, Toleration};
use taintcheck_core::time::Time;
use taintcheck_core::{Controller, Entry, Verb, WorkPhase};

/// The variables, in specs/spec.md order.
pub const VARS: [&str; 7] = ["now", "api", "nodes", "pods", "ctrl", "env", "history"];

/// The states of a path as an ITF trace; `source` and `description` go to `#meta`.
pub fn trace(states: &[SysState], source: &str, description: &str) -> Trace {
    Trace {
        source: source.into(),
        description: description.into(),
        vars: VARS.iter().map(|v| v.to_string()).collect(),
        states: states
            .iter()
            .map(|s| {
                VARS.iter()
                    .map(|v| (v.to_string(), variable(s, v)))
                    .collect()
            })
            .collect(),
    }
}

/// The variable `name` of `s`.
fn variable(s: &SysState, name: &str) -> Value {
    match name {
        "now" => time(s.now),
        "api" => api(s),
        "nodes" => informer(&s.nodes, |n: &CachedNode| {
            node(&n.node.taints, &n.taint_since)
        }),
        "pods" => informer(&s.pods, |p: &CachedPod| {
            Value::record([
                ("pod", pod(&p.pod)),
                ("bound_since", Value::option(p.bound_since, time)),
            ])
        }),
        "ctrl" => ctrl(&s.ctrl),
        "env" => Value::record([
            ("budget", Value::int(s.env.budget)),
            ("fail_next", Value::Bool(s.env.fail_next)),
            ("restarted_at", Value::option(s.env.restarted_at, time)),
        ]),
        "history" => Value::record([
            ("violated", Value::int(s.history.violated)),
            ("witnessed", Value::int(s.history.witnessed)),
            (
                "cancelled",
                Value::Set(s.history.cancelled.iter().map(Value::str).collect()),
            ),
            (
                "failed",
                Value::Set(s.history.failed.iter().map(|n| Value::int(*n)).collect()),
            ),
            (
                "decided",
                Value::Set(s.history.decided.iter().map(Value::str).collect()),
            ),
        ]),
        _ => unreachable!("VARS names every variable"),
    }
}

fn time(t: Time) -> Value {
    Value::int(t.0)
}

fn taint(t: &Taint) -> Value {
    Value::str(t)
}

fn node(taints: &[Taint], since: &[Time]) -> Value {
    Value::record([
        ("taints", Value::List(taints.iter().map(taint).collect())),
        (
            "taint_since",
            Value::List(since.iter().copied().map(time).collect()),
        ),
    ])
}

fn toleration(t: &Toleration) -> Value {
    Value::record([
        ("key", Value::str(&t.key)),
        ("operator", Value::str(t.operator.as_str())),
        ("value", Value::str(&t.value)),
        (
            "effect",
            Value::str(t.effect.as_ref().map_or("", |e| e.as_str())),
        ),
        ("seconds", Value::option(t.seconds, Value::int)),
    ])
}

fn pod(p: &Pod) -> Value {
    Value::record([
        ("uid", Value::str(&p.uid)),
        ("node", Value::option(p.node_name.as_ref(), Value::str)),
        (
            "tolerations",
            Value::List(p.tolerations.iter().map(toleration).collect()),
        ),
    ])
}

fn api_pod(p: &ApiPod) -> Value {
    Value::record([
        ("pod", pod(&p.pod)),
        ("bound_since", Value::option(p.bound_since, time)),
        ("changed_at", time(p.changed_at)),
        ("exposed_in_api", Value::Bool(p.exposed_in_api)),
        ("version", Value::int(p.version.0)),
        ("disruption_target", Value::Bool(p.disruption_target)),
        ("deletion", Value::option(p.deletion, deletion)),
    ])
}

/// A Terminating pod's graceful deletion (API-2): `timestamp` is its `deletionTimestamp` (when
/// the grace period ends), `grace` its `deletionGracePeriodSeconds`, in ms like every duration.
fn deletion(d: Deletion) -> Value {
    Value::record([
        ("timestamp", time(d.timestamp)),
        ("grace", Value::int(d.grace.millis())),
    ])
}

fn api(s: &SysState) -> Value {
    Value::record([
        (
            "nodes",
            Value::Map(
                s.api
                    .nodes
                    .iter()
                    .map(|(k, n)| (Value::str(k), node(&n.node.taints, &n.taint_since)))
                    .collect(),
            ),
        ),
        (
            "pods",
            Value::Map(
                s.api
                    .pods
                    .iter()
                    .map(|(k, p)| (Value::str(k), api_pod(p)))
                    .collect(),
            ),
        ),
        ("next_uid", Value::int(s.api.next_uid)),
    ])
}

fn informer<K: Ord + std::fmt::Display, V>(i: &Informer<K, V>, f: impl Fn(&V) -> Value) -> Value {
    let pending = i
        .pending
        .iter()
        .map(|d| match d {
            Delta::Upsert(v) => Value::variant("Upsert", f(v)),
            Delta::Delete(k) => Value::variant("Delete", Value::str(k)),
        })
        .collect();
    Value::record([
        (
            "cache",
            Value::Map(i.cache.iter().map(|(k, v)| (Value::str(k), f(v))).collect()),
        ),
        ("pending", Value::List(pending)),
        ("unsynced", Value::int(i.unsynced)),
    ])
}

fn ctrl(c: &Controller) -> Value {
    let q = c.timed_queue();
    let entries = q
        .entries()
        .iter()
        .map(|(k, e)| {
            let key = match &k.uid {
                Some(uid) => format!("{} {uid}", k.pod),
                None => k.pod.to_string(),
            };
            let entry = match e {
                Entry::Nil { work } => {
                    Value::variant("Nil", Value::option(work.map(|w| w.0), Value::int))
                }
                Entry::Timer {
                    created_at,
                    fire_at,
                    work,
                } => Value::variant(
                    "Timer",
                    Value::record([
                        ("created_at", time(*created_at)),
                        ("fire_at", time(*fire_at)),
                        ("work", Value::int(work.0)),
                    ]),
                ),
            };
            (Value::str(key), entry)
        })
        .collect();
    let works = q
        .works()
        .iter()
        .map(|(id, w)| {
            let phase = match &w.phase {
                WorkPhase::Armed => Value::tag("Armed"),
                WorkPhase::Spawned => Value::tag("Spawned"),
                WorkPhase::Marked => Value::tag("Marked"),
                WorkPhase::Requesting {
                    attempt, request, ..
                } => Value::variant(
                    "Requesting",
                    Value::record([
                        ("attempt", Value::int(*attempt)),
                        ("request", Value::int(request.id.0)),
                    ]),
                ),
                WorkPhase::Answered {
                    attempt, request, ..
                } => Value::variant(
                    "Answered",
                    Value::record([
                        ("attempt", Value::int(*attempt)),
                        ("request", Value::int(request.id.0)),
                    ]),
                ),
                WorkPhase::Throttled {
                    attempt,
                    request,
                    until,
                    ..
                } => Value::variant(
                    "Throttled",
                    Value::record([
                        ("attempt", Value::int(*attempt)),
                        ("request", Value::int(request.id.0)),
                        ("until", time(*until)),
                    ]),
                ),
                WorkPhase::Backoff { attempt, until } => Value::variant(
                    "Backoff",
                    Value::record([("attempt", Value::int(*attempt)), ("until", time(*until))]),
                ),
                WorkPhase::Finished { outcome } => {
                    Value::variant("Finished", Value::str(format!("{outcome:?}")))
                }
            };
            let work = Value::record([
                ("pod", Value::str(&w.key.pod)),
                ("created_at", time(w.created_at)),
                ("fire_at", time(w.fire_at)),
                ("cancelled", Value::Bool(w.cancelled)),
                ("phase", phase),
            ]);
            (Value::int(id.0), work)
        })
        .collect();
    let requests = c
        .pending_requests()
        .map(|r| {
            let verb = match &r.verb {
                Verb::Get => Value::tag("Get"),
                Verb::GetNode(n) => Value::variant("GetNode", Value::str(n)),
                Verb::PatchDisruptionTarget => Value::tag("PatchDisruptionTarget"),
                Verb::Delete => Value::tag("Delete"),
            };
            Value::record([
                ("id", Value::int(r.id.0)),
                ("verb", verb),
                ("pod", Value::str(&r.pod)),
                ("uid", Value::option(r.uid.as_ref(), Value::str)),
                ("version", Value::option(r.version.map(|v| v.0), Value::int)),
            ])
        })
        .collect();
    Value::record([
        (
            "node_queue",
            Value::List(c.node_queue().queued().map(Value::str).collect()),
        ),
        (
            "pod_queue",
            Value::List(
                c.pod_queue()
                    .queued()
                    .map(|i| Value::Tup(vec![Value::str(&i.key), Value::str(i.node_str())]))
                    .collect(),
            ),
        ),
        (
            "tainted_nodes",
            Value::Map(
                c.tainted_nodes()
                    .iter()
                    .map(|(n, t)| (Value::str(n), Value::List(t.iter().map(taint).collect())))
                    .collect(),
            ),
        ),
        ("entries", Value::Map(entries)),
        ("works", Value::Map(works)),
        ("requests", Value::List(requests)),
    ])
}
