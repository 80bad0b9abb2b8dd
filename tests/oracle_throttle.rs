//! The oracle under the controller client's rate limit (ORACLE-THROTTLE, CORE-THROTTLE): a
//! storm of 1,000 evictions from one node under upstream's default `--kube-api-qps` 20 and
//! `--kube-api-burst` 30 takes 48.5 s, which the latency bound alone could only explain by
//! being so wide that it accepts wrong runs. With the rate limit the oracle accepts the storm
//! with `D` = 1 s, and rejects it when the run deletes faster than the bucket allows, or later
//! than the bucket plus `D`.

use taintcheck_model::core::throttle::{Bucket, RateLimit};
use taintcheck_model::oracle::{Error, Options, Oracle, Summary};
use taintcheck_model::profile::Profile;
use taintcheck_model::time::{Duration, Time};
use taintcheck_model::trace::parse_trace;

const HEADER: &str = r#"{"t":0,"kind":"header","version":1,"source":"other","profile":"v1.18","scenario":"storm","observed":["requests","events"]}"#;

/// The node is tainted at this instant; every pod is marked for deletion then.
const TAINTED: i64 = 1_000;
const PODS: usize = 1_000;
const D: Duration = Duration(1_000);

fn limit() -> RateLimit {
    RateLimit::qps(20, 30).expect("positive figures")
}

/// The instants the bucket lets the storm's DELETEs go, all asked for at [`TAINTED`].
fn bucket_instants() -> Vec<i64> {
    let mut bucket = Bucket::new(limit());
    (0..PODS)
        .map(|_| bucket.reserve(Time(TAINTED)).millis())
        .collect()
}

/// The storm's trace under `v1.18` (one DELETE per pod): node `n1` and pods `p0000`..`p0999`
/// bound to it at 0, none tolerating anything; `n1` tainted NoExecute at [`TAINTED`]; every
/// pod marked then; pod `i`'s DELETE (and its deletion and answer) at `deletes[i]`.
fn storm(deletes: &[i64]) -> Vec<String> {
    let mut lines = vec![HEADER.to_string()];
    lines.push(r#"{"t":0,"kind":"node_added","rv":1,"node":{"name":"n1","taints":[]}}"#.into());
    let name = |i: usize| format!("p{i:04}");
    for i in 0..deletes.len() {
        lines.push(format!(
            r#"{{"t":0,"kind":"pod_added","rv":{},"pod":{{"key":{{"namespace":"default","name":"{}"}},"uid":"{}-1","node_name":"n1","tolerations":[]}}}}"#,
            i + 2,
            name(i),
            name(i)
        ));
    }
    let rv = deletes.len() as u64 + 2;
    lines.push(format!(
        r#"{{"t":{TAINTED},"kind":"node_modified","rv":{rv},"node":{{"name":"n1","taints":[{{"key":"k","value":"v","effect":"NoExecute","time_added":null}}]}}}}"#
    ));
    for i in 0..deletes.len() {
        lines.push(format!(
            r#"{{"t":{TAINTED},"kind":"event","namespace":"default","name":"{}","reason":"TaintManagerEviction","message":"Marking for deletion Pod default/{}"}}"#,
            name(i),
            name(i)
        ));
    }
    let mut order: Vec<usize> = (0..deletes.len()).collect();
    order.sort_by_key(|i| (deletes[*i], *i));
    for (n, i) in order.into_iter().enumerate() {
        let (t, id, pod) = (deletes[i], n + 1, name(i));
        lines.push(format!(
            r#"{{"t":{t},"kind":"request","id":{id},"verb":"delete","namespace":"default","name":"{pod}"}}"#
        ));
        lines.push(format!(
            r#"{{"t":{t},"kind":"pod_deleted","rv":{},"namespace":"default","name":"{pod}","uid":"{pod}-1"}}"#,
            rv + 1 + id as u64
        ));
        lines.push(format!(
            r#"{{"t":{t},"kind":"response","id":{id},"result":"ok","uid":"{pod}-1"}}"#
        ));
    }
    lines
}

fn check(lines: &[String], rate_limit: Option<RateLimit>) -> Result<Summary, Error> {
    let records = parse_trace("storm.ndjson", &lines.join("\n")).expect("a well-formed trace");
    let mut options = Options::new(Profile::v1_18(), D);
    options.rate_limit = rate_limit;
    let end = records.last().map(|r| r.t);
    Oracle::check(options, &records, end)
}

fn violation(r: Result<Summary, Error>) -> String {
    match r {
        Err(Error::Violation(v)) => v.message,
        other => panic!("expected a violation, got {other:?}"),
    }
}

#[test]
fn the_bucket_spreads_the_storm_over_48_seconds() {
    let at = bucket_instants();
    assert_eq!(at[29], TAINTED);
    assert_eq!(at[30], TAINTED + 50);
    assert_eq!(at[PODS - 1], TAINTED + 48_500);
}

#[test]
fn a_storm_at_the_rate_limit_conforms_with_a_one_second_bound() {
    let r = check(&storm(&bucket_instants()), Some(limit()));
    assert!(r.is_ok(), "{r:?}");
}

#[test]
fn without_the_rate_limit_the_same_storm_is_too_slow() {
    let message = violation(check(&storm(&bucket_instants()), None));
    assert!(message.contains("p00"), "{message}");
}

#[test]
fn deleting_faster_than_the_bucket_allows_is_rejected() {
    // Every DELETE at once: the 31st has no token.
    let at_once = vec![TAINTED; PODS];
    assert!(check(&storm(&at_once), Some(limit())).is_err());
    // One request a millisecond before its token: the 31st at 1.049 s.
    let mut early = bucket_instants();
    early[30] -= 1;
    let message = violation(check(&storm(&early), Some(limit())));
    assert!(message.contains("p0030"), "{message}");
}

#[test]
fn deleting_later_than_the_bucket_plus_the_bound_is_rejected() {
    // From the 500th DELETE on, every one `pause` late: a stall of the client.
    let stalled = |pause: i64| -> Vec<i64> {
        let mut at = bucket_instants();
        for t in &mut at[499..] {
            *t += pause;
        }
        at
    };
    let r = check(&storm(&stalled(D.0)), Some(limit()));
    assert!(r.is_ok(), "a pause of D is within the bound: {r:?}");
    let message = violation(check(&storm(&stalled(D.0 + 1)), Some(limit())));
    assert!(message.contains("should have been deleted"), "{message}");
}
