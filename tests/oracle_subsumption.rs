//! Subsumption (ORACLE-SUB) checked against the frontier it reduces. On the corpus and random
//! scenarios, on their traces as the correct runtime and a mutant write them, and on each trace
//! damaged by dropping or repeating a line, the oracle gives the same verdict with and without
//! it (the same violation, at the same line, in the same words); and `expect` gives the same
//! envelope, windows included. `cargo test --release --test oracle_subsumption -- --nocapture`
//! prints how many traces and how many states each way.

mod oracle_support;

use oracle_support::{corpus, profiles, random_count, random_scenario, Rng};
use taintcheck_core::profile::Profile;
use taintcheck_core::time::Duration;
use taintcheck_formats::scenario::Scenario;
use taintcheck_formats::trace::TraceRecord;
use taintcheck_oracle::expect::{envelope_with, Outcome};
use taintcheck_oracle::{Error, Options, Oracle, Summary};
use taintcheck_runtime::driver::{run_scenario, run_scenario_mutated, ClockKind};
use taintcheck_runtime::mutants::Mutant;

/// What a verdict says, without the frontier's size (which subsumption changes).
#[derive(Debug, PartialEq)]
enum Said {
    Conforms,
    Violation {
        line: Option<usize>,
        message: String,
    },
    Other(String),
}

fn said(verdict: &Result<Summary, Error>) -> Said {
    match verdict {
        Ok(_) => Said::Conforms,
        Err(Error::Violation(v)) => Said::Violation {
            line: v.line,
            message: v.message.clone(),
        },
        Err(e) => Said::Other(e.to_string()),
    }
}

/// The verdict on `records` with subsumption on and off, and the largest frontier of each.
fn both(s: &Scenario, profile: Profile, records: &[TraceRecord]) -> ((Said, usize), (Said, usize)) {
    let reduced = Options::new(profile, s.latency_bound());
    let mut full = reduced;
    full.subsume = false;
    let run = |options| {
        let verdict = Oracle::check(options, records, Some(s.until));
        let largest = verdict.as_ref().map_or(0, |summary| summary.max_frontier);
        (said(&verdict), largest)
    };
    (run(reduced), run(full))
}

#[test]
fn subsumption_keeps_every_verdict() {
    let scenarios: Vec<Scenario> = corpus()
        .into_iter()
        .chain((0..random_count() / 10).map(|seed| random_scenario(3_000_000 + seed)))
        .collect();
    let mut rng = Rng::new(11);
    let (mut traces, mut violations) = (0, 0);
    let (mut states_reduced, mut states_full) = (0, 0);
    for profile in profiles() {
        for s in &scenarios {
            let mutant = Mutant::ALL[rng.below(Mutant::ALL.len() as u64) as usize];
            let runs = [
                run_scenario(s, profile, ClockKind::Virtual).records,
                run_scenario_mutated(s, profile, mutant).records,
            ];
            for records in runs {
                let mut variants = vec![records.clone()];
                if records.len() > 2 {
                    let k = 1 + rng.below(records.len() as u64 - 1) as usize;
                    let mut dropped = records.clone();
                    dropped.remove(k);
                    let mut repeated = records.clone();
                    repeated.insert(k, records[k].clone());
                    variants.extend([dropped, repeated]);
                }
                for v in &variants {
                    let ((reduced, r), (full, f)) = both(s, profile, v);
                    assert_eq!(reduced, full, "{} [{}]", s.name, profile.name);
                    traces += 1;
                    violations += usize::from(matches!(reduced, Said::Violation { .. }));
                    states_reduced += r;
                    states_full += f;
                }
            }
        }
    }
    println!(
        "subsumption: {traces} traces ({violations} violations), the same verdicts with and \
         without it; largest frontiers summed over the traces that conform: {states_reduced} \
         with, {states_full} without"
    );
    assert!(violations > 50, "{violations} violations");
    assert!(states_reduced < states_full);
}

/// `expect` with and without subsumption on `scenarios` (each at its bound, or its own): the
/// same envelope, windows included (the windows a subsuming state takes in, ORACLE-SUB),
/// wherever the exploration without it answers within its state limit.
fn same_envelopes(scenarios: &[(Scenario, Option<Duration>)]) -> usize {
    let (mut envelopes, mut deleted) = (0, 0);
    let mut only_reduced = Vec::new();
    for profile in profiles() {
        for (s, d) in scenarios {
            let d = d.unwrap_or_else(|| s.latency_bound());
            let reference = || run_scenario(s, profile, ClockKind::Virtual).records;
            let with = envelope_with(s, reference, profile, d, true);
            let without = envelope_with(s, reference, profile, d, false);
            if matches!(without, Err(Error::Inconclusive { .. })) {
                // Only the reduced exploration answers: nothing to compare.
                assert!(with.is_ok(), "{} [{}]: {with:?}", s.name, profile.name);
                only_reduced.push(format!("{} [{}]", s.name, profile.name));
                continue;
            }
            assert_eq!(
                with.as_ref().map_err(ToString::to_string),
                without.as_ref().map_err(ToString::to_string),
                "{} [{}]",
                s.name,
                profile.name
            );
            if let Ok(pods) = with {
                envelopes += 1;
                deleted += pods
                    .iter()
                    .filter(|p| p.outcome != Outcome::MustNotDelete)
                    .count();
            }
        }
    }
    println!(
        "subsumption: {envelopes} envelopes ({deleted} incarnations deleted in some behaviour), \
         the same with and without it; {} answered only with it: {}",
        only_reduced.len(),
        only_reduced.join(", ")
    );
    deleted
}

/// Random scenarios at their own bound.
#[test]
fn subsumption_keeps_the_envelopes_of_random_scenarios() {
    let scenarios: Vec<_> = (0..random_count() / 40)
        .map(|seed| (random_scenario(4_000_000 + seed), None))
        .collect();
    let deleted = same_envelopes(&scenarios);
    assert!(deleted > 20, "{deleted} incarnations deleted");
}

/// The corpus at `D` = 100 ms.
#[test]
#[ignore = "8 minutes: cargo test --release --test oracle_subsumption -- --ignored --nocapture"]
fn subsumption_keeps_the_envelopes_of_the_corpus() {
    let scenarios: Vec<_> = corpus()
        .into_iter()
        .map(|s| (s, Some(Duration(100))))
        .collect();
    let deleted = same_envelopes(&scenarios);
    assert!(deleted > 50, "{deleted} incarnations deleted");
}
