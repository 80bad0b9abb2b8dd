//! The ITF export (CHECK-3, `check --itf`) of the world's behaviours, read back from the written
//! file: a Terminating pod's graceful deletion (API-2: `deletionTimestamp` and grace under
//! `api.pods[k].deletion`) and a relist's difference (ENV-13, INF-1: the informer's `pending`
//! queue replaced by one update per changed object and one `Delete` tombstone per vanished one).

use stateright::Model;
use taintcheck_core::api::PodKey;
use taintcheck_core::profile::Profile;
use taintcheck_model::check::action::{Action, EnvOp, Watched};
use taintcheck_model::check::config::CheckConfig;
use taintcheck_model::check::itf::{Trace, Value};
use taintcheck_model::check::itf_state::trace;
use taintcheck_model::check::properties::PROPERTIES;
use taintcheck_model::check::shortest;
use taintcheck_model::check::{SysState, TaintSys};

/// The states written as an ITF file and parsed back.
fn round_trip(states: &[SysState]) -> Trace {
    let text = trace(states, "test", "round trip").to_json().to_string();
    Trace::parse(&text).expect("the written trace parses")
}

fn field<'a>(v: &'a Value, name: &str) -> &'a Value {
    match v {
        Value::Record(fields) => fields
            .get(name)
            .unwrap_or_else(|| panic!("no field {name} in {v:?}")),
        other => panic!("not a record: {other:?}"),
    }
}

fn entry<'a>(v: &'a Value, key: &str) -> &'a Value {
    match v {
        Value::Map(entries) => entries
            .iter()
            .find(|(k, _)| *k == Value::str(key))
            .map(|(_, v)| v)
            .unwrap_or_else(|| panic!("no {key} in {v:?}")),
        other => panic!("not a map: {other:?}"),
    }
}

fn model(profile: Profile, config: &str) -> TaintSys {
    TaintSys::new(
        profile,
        CheckConfig::builtin(config).expect("built-in config"),
    )
}

/// v1.18's CANCEL-1 counterexample on `terminating-retaint` has p1 Terminating (its initial
/// instant's DELETE already): the file shows no deletion before the DELETE's answer and, from
/// it, the `deletionTimestamp` (the answer's instant plus the 30 s grace) and the grace in ms,
/// in every later state while the object stays, and nothing once it is gone.
#[test]
fn a_terminating_pods_deletion_reads_back() {
    let model = model(Profile::v1_18(), "terminating-retaint");
    let name = PROPERTIES.iter().find(|p| p.id == "CANCEL-1").unwrap().name;
    let states = shortest::counterexamples(&model, &[name])
        .remove(name)
        .expect("CANCEL-1 is violated")
        .into_states();
    let key = PodKey::new("default", "p1");
    let deletion = |s: &SysState| s.api.pods.get(&key).and_then(|p| p.deletion);
    let first = states
        .iter()
        .position(|s| deletion(s).is_some())
        .expect("the counterexample makes p1 Terminating");
    let started = deletion(&states[first]).unwrap();
    assert_eq!(started.timestamp.0, states[first].now.0 + 30_000);
    let read = round_trip(&states);
    let written = |i: usize| {
        let pods = field(&read.states[i]["api"], "pods");
        let Value::Map(entries) = pods else {
            panic!("api.pods is a map")
        };
        (!entries.is_empty()).then(|| field(entry(pods, "default/p1"), "deletion").clone())
    };
    for i in 0..first {
        assert_eq!(written(i), Some(Value::tag("None")), "state {i}");
    }
    let expected = Value::variant(
        "Some",
        Value::record([
            ("timestamp", Value::int(started.timestamp.0)),
            ("grace", Value::int(30_000)),
        ]),
    );
    for (i, s) in states.iter().enumerate().skip(first) {
        match deletion(s) {
            Some(d) if d == started => assert_eq!(written(i), Some(expected.clone()), "state {i}"),
            Some(d) => panic!("state {i}: a second deletion {d:?}"),
            None => assert_eq!(written(i), None, "state {i}: p1 is gone"),
        }
    }
}

/// ENV-13 on `relist-successor`: p1 is recreated on n1 and the pod watch expires before either
/// event is delivered. The file's state after the relist shows the cache unchanged (p1-1) and,
/// pending, only the difference: one update to the successor p1-2, the deletion and the
/// creation gone.
#[test]
fn a_relists_difference_reads_back() {
    let model = model(Profile::latest(), "relist-successor");
    let p1 = PodKey::new("default", "p1");
    let init = model.init_states().remove(0);
    let recreated = model
        .next_state(
            &init,
            Action::Env(EnvOp::RecreatePod {
                pod: p1.clone(),
                node: Some("n1".into()),
            }),
        )
        .expect("recreate is enabled");
    let relisted = model
        .next_state(&recreated, Action::Env(EnvOp::DropWatch(Watched::Pods)))
        .expect("the pod watch may expire");
    let read = round_trip(&[init, recreated, relisted]);
    let pending = |i: usize| match field(&read.states[i]["pods"], "pending") {
        Value::List(events) => events.clone(),
        other => panic!("pending is a list: {other:?}"),
    };
    let tags = |events: &[Value]| -> Vec<String> {
        events
            .iter()
            .map(|e| match e {
                Value::Variant(tag, _) => tag.clone(),
                other => panic!("a watch event is a variant: {other:?}"),
            })
            .collect()
    };
    assert_eq!(
        tags(&pending(1)),
        ["Delete", "Upsert"],
        "recreate: two events"
    );
    let after = pending(2);
    assert_eq!(tags(&after), ["Upsert"], "the relist: the difference alone");
    let Value::Variant(_, update) = &after[0] else {
        unreachable!()
    };
    assert_eq!(field(field(update, "pod"), "uid"), &Value::str("p1-2"));
    let api_p1 = entry(field(&read.states[2]["api"], "pods"), "default/p1");
    assert_eq!(
        field(api_p1, "deletion"),
        &Value::tag("None"),
        "not Terminating"
    );
    let cache = field(&read.states[2]["pods"], "cache");
    let cached = field(field(entry(cache, "default/p1"), "pod"), "uid");
    assert_eq!(cached, &Value::str("p1-1"));
}
