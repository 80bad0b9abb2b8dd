//! `expect` holds what is live, not its reference run's trace (ORACLE-10, limits' defect "taint
//! operations on one node"). N taints added to one node make a trace of N node versions
//! carrying up to N taints each, quadratic in N; the envelope's two passes read the trace as it
//! comes and hold back only the lines made while one of the controller's DELETEs is in flight
//! (whether that DELETE caused them is known at its response). So the most lines either pass
//! holds at once is the same at N and 4N operations: kept records would make it grow with N.

use taintcheck_core::profile::Profile;
use taintcheck_formats::scenario::{parse_scenario, Scenario};
use taintcheck_formats::trace::TraceRecord;
use taintcheck_oracle::expect::{Outcome, Outcomes, PodEnvelope};
use taintcheck_runtime::driver::{run_scenario, ClockKind};

/// A pod tolerating every NoExecute taint and `n` taints added to its node 10 ms apart; then
/// a taint on a second node evicts the pod there through requests that take 50 ms: the lines
/// of its DELETE are held until the response.
fn taint_ops(n: usize) -> Scenario {
    let mut s = String::from(
        "name: ops\nruntime: {apiLatency: 50ms}\nnodes: [{name: n1}, {name: n2}]\npods:\n  - \
         {name: p, node: n1, tolerations: [{operator: Exists, effect: NoExecute}]}\n  - {name: \
         q, node: n2}\nops:\n",
    );
    for i in 0..n {
        s.push_str(&format!(
            "  - {{at: {}ms, taint: n1 k{i}=v:NoExecute}}\n",
            i * 10
        ));
    }
    s.push_str(&format!(
        "  - {{at: {}ms, taint: n2 outage=true:NoExecute}}\nuntil: {}ms\n",
        n * 10 + 100,
        n * 10 + 1000
    ));
    parse_scenario("ops.yaml", &s).unwrap_or_else(|e| panic!("{e}"))
}

/// The envelope of `taint_ops(n)` under `latest`, the most trace lines either pass held at
/// once, and the records the run made.
fn envelope_of(n: usize) -> (Vec<PodEnvelope>, usize, usize) {
    let scenario = taint_ops(n);
    let profile = Profile::by_name("latest").unwrap();
    let records: Vec<TraceRecord> = run_scenario(&scenario, profile, ClockKind::Virtual).records;
    let bound = scenario.latency_bound();
    let mut held = 0;
    let mut outcomes = Outcomes::new(&scenario, profile, bound);
    for r in records.iter().cloned() {
        outcomes.record(r).unwrap_or_else(|e| panic!("{e}"));
        held = held.max(outcomes.retained());
    }
    let mut reasons = outcomes.finish().unwrap_or_else(|e| panic!("{e}"));
    for r in records.iter().cloned() {
        reasons.record(r);
        held = held.max(reasons.retained());
    }
    let pods = reasons.finish().unwrap_or_else(|e| panic!("{e}"));
    (pods, held, records.len())
}

#[test]
fn expect_holds_the_lines_of_in_flight_deletes_not_the_trace() {
    const N: usize = 100;
    let (small, held, records) = envelope_of(N);
    let (large, held_4n, records_4n) = envelope_of(4 * N);
    println!(
        "held at once: {N} taint operations {held} of {records} records, {} operations \
         {held_4n} of {records_4n}",
        4 * N
    );
    assert!(records_4n >= 4 * N, "every operation is recorded");
    assert!(held > 0, "lines are held while the DELETEs are in flight");
    assert!(
        held_4n <= held,
        "held {held} -> {held_4n} lines from {N} to {} operations",
        4 * N
    );
    for pods in [&small, &large] {
        let verdicts: Vec<(String, &Outcome)> = pods
            .iter()
            .map(|p| (p.pod.to_string(), &p.outcome))
            .collect();
        assert_eq!(verdicts.len(), 2, "{verdicts:?}");
        assert_eq!(verdicts[0].1, &Outcome::MustNotDelete, "{verdicts:?}");
        for (pod, outcome) in &verdicts[1..] {
            assert!(
                matches!(outcome, Outcome::MustDelete { .. }),
                "{pod}: {outcome:?}"
            );
        }
    }
}
