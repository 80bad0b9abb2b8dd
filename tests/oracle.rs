//! The oracle's accuracy against the reference runtime:
//!
//! * every trace of the correct runtime conforms: the corpus and at least 1,000 random
//!   scenarios per profile, zero false alarms;
//! * every trace of the runtime with injected execution time (each work step and each event's
//!   recording up to the oracle's step slack late, RT-JIT-1) conforms: traces the core does not
//!   produce in one step, as an implementation on a real clock writes them (ORACLE-11); a few
//!   scenarios per profile in CI, 1,000 behind `#[ignore]`;
//! * every deliberately wrong runtime (`impl/src/mutants.rs`) is rejected on some scenario of the
//!   corpus or of the random ones: the kill rate, per mutant and profile.
//!
//! Both tests print their numbers (`cargo test --release --test oracle -- --nocapture`); the
//! README quotes them. Random scenarios come from a seeded generator, so every number is
//! reproducible; `TAINTCHECK_RANDOM_SCENARIOS` changes how many (default 1000).

use taintcheck_core::api::PodKey;
use taintcheck_core::profile::Profile;
use taintcheck_core::time::Duration;
use taintcheck_formats::scenario::{Op, Scenario};
use taintcheck_formats::taint_syntax::TaintSpec;
use taintcheck_formats::trace::{RequestVerb, TraceEvent, TraceRecord};
use taintcheck_oracle::parallel::Parallel;
use taintcheck_oracle::{Error, Options, Oracle, Summary, DEFAULT_STEP_SLACK};
use taintcheck_runtime::driver::{
    run_scenario, run_scenario_jittered, run_scenario_mutated, ClockKind,
};
use taintcheck_runtime::jitter::Jitter;
use taintcheck_runtime::mutants::Mutant;

mod oracle_support;
use oracle_support::{corpus, profiles, random_count, random_scenario, random_world_scenario, Rng};

fn check(s: &Scenario, profile: Profile, records: &[TraceRecord]) -> Result<Summary, Error> {
    Oracle::check(
        Options::new(profile, s.latency_bound()),
        records,
        Some(s.until),
    )
}

/// The trace without notes (internal observations), to tell whether a mutant changed anything.
fn observable(records: &[TraceRecord]) -> Vec<&TraceRecord> {
    records
        .iter()
        .filter(|r| !matches!(r.event, TraceEvent::Note { .. }))
        .collect()
}

#[test]
fn every_trace_of_the_correct_runtime_conforms() {
    let mut false_alarms = Vec::new();
    for profile in profiles() {
        let mut checked = 0;
        let mut largest = 0;
        for s in corpus() {
            let report = run_scenario(&s, profile, ClockKind::Virtual);
            match check(&s, profile, &report.records) {
                Ok(summary) => largest = largest.max(summary.max_frontier),
                Err(e) => false_alarms.push(format!("{} [{}]: {e}", s.name, profile.name)),
            }
            checked += 1;
        }
        for seed in 0..random_count() {
            let s = random_scenario(seed);
            let report = run_scenario(&s, profile, ClockKind::Virtual);
            match check(&s, profile, &report.records) {
                Ok(summary) => largest = largest.max(summary.max_frontier),
                Err(e) => false_alarms.push(format!("seed {seed} [{}]: {e}", profile.name)),
            }
            checked += 1;
        }
        println!(
            "oracle accuracy: {} correct-runtime traces of {} (corpus + random): {} false \
             alarms, largest frontier {largest}",
            checked,
            profile.name,
            false_alarms
                .iter()
                .filter(|f| f.contains(&format!("[{}]", profile.name)))
                .count()
        );
    }
    assert!(false_alarms.is_empty(), "{}", false_alarms.join("\n"));
}

/// Corpus and `count` random scenarios per profile, run with up to `jitter` of injected
/// execution time and checked with the default step slack: the false alarms.
fn jittered_false_alarms(count: u64, jitter: Duration) -> Vec<String> {
    let mut false_alarms = Vec::new();
    for profile in profiles() {
        let scenarios = corpus()
            .into_iter()
            .map(|s| (s.name.clone(), s))
            .chain((0..count).map(|seed| (format!("seed {seed}"), random_scenario(seed))));
        let mut checked = 0;
        for (i, (name, s)) in scenarios.enumerate() {
            let report = run_scenario_jittered(&s, profile, Jitter::up_to(jitter, i as u64));
            if let Err(e) = check(&s, profile, &report.records) {
                false_alarms.push(format!("{name} [{}] jitter seed {i}: {e}", profile.name));
            }
            checked += 1;
        }
        println!(
            "oracle accuracy: {checked} traces of {} with up to {} ms of injected execution \
             time: {} false alarms",
            profile.name,
            jitter.0,
            false_alarms
                .iter()
                .filter(|f| f.contains(&format!("[{}]", profile.name)))
                .count()
        );
    }
    false_alarms
}

#[test]
fn traces_with_injected_execution_time_conform() {
    let alarms = jittered_false_alarms(20, DEFAULT_STEP_SLACK);
    assert!(alarms.is_empty(), "{}", alarms.join("\n"));
}

#[test]
#[ignore = "1,000 random scenarios per profile: cargo test --release --test oracle -- --ignored"]
fn a_thousand_traces_with_injected_execution_time_conform() {
    let alarms = jittered_false_alarms(random_count().max(1000), DEFAULT_STEP_SLACK);
    assert!(alarms.is_empty(), "{}", alarms.join("\n"));
}

#[test]
fn every_mutant_is_rejected() {
    let scenarios: Vec<Scenario> = corpus()
        .into_iter()
        .chain((0..random_count() / 5).map(|seed| random_scenario(1_000_000 + seed)))
        .collect();
    let mut survivors = Vec::new();
    let mut lines = Vec::new();
    let mut run = 0;
    let only = std::env::var("TAINTCHECK_MUTANT").ok();
    for mutant in Mutant::ALL {
        if only.as_deref().is_some_and(|o| !mutant.name().contains(o)) {
            continue;
        }
        run += 1;
        let mut killed_in = Vec::new();
        let (mut differing, mut rejected) = (0, 0);
        for profile in profiles() {
            let (changed, killed) = mutant_traces(&scenarios, profile, mutant);
            differing += changed;
            rejected += killed;
            if killed > 0 {
                killed_in.push(profile.name);
            }
        }
        lines.push(format!(
            "  {:<45} killed under {:<22} traces changed by the mutant: {differing}, rejected: \
             {rejected}",
            mutant.name(),
            if killed_in.is_empty() {
                "-".to_string()
            } else {
                killed_in.join(", ")
            }
        ));
        if killed_in.is_empty() {
            survivors.push(mutant.name());
        }
    }
    println!(
        "oracle accuracy: {} of {} mutants killed on {} scenarios per profile \
         (corpus + random):\n{}",
        run - survivors.len(),
        run,
        scenarios.len(),
        lines.join("\n")
    );
    assert!(survivors.is_empty(), "surviving mutants: {survivors:?}");
}

/// `mutant`'s runs of `scenarios` under `profile`: how many traces differ observably from the
/// correct runtime's, and how many of those the oracle rejects.
fn mutant_traces(scenarios: &[Scenario], profile: Profile, mutant: Mutant) -> (usize, usize) {
    let (mut differing, mut rejected) = (0, 0);
    for s in scenarios {
        let correct = run_scenario(s, profile, ClockKind::Virtual);
        let mutated = run_scenario_mutated(s, profile, mutant);
        if observable(&correct.records) == observable(&mutated.records) {
            continue;
        }
        differing += 1;
        rejected += usize::from(check(s, profile, &mutated.records).is_err());
    }
    (differing, rejected)
}

/// The parallel oracle (ORACLE-12) gives the sequential oracle's verdict, message and summary
/// for any number of threads: on the corpus and random scenarios, their traces as the correct
/// runtime and every mutant write them, and each trace damaged by dropping or repeating a line
/// (violations and bad input at every kind of line, several pods failing at once).
#[test]
fn the_parallel_oracle_gives_the_sequential_verdicts() {
    let scenarios: Vec<Scenario> = corpus()
        .into_iter()
        .chain((0..random_count() / 10).map(|seed| random_scenario(2_000_000 + seed)))
        .collect();
    let (mut traces, mut violations, mut bad) = (0, 0, 0);
    let mut rng = Rng::new(7);
    for profile in profiles() {
        for s in &scenarios {
            let mut runs = vec![run_scenario(s, profile, ClockKind::Virtual).records];
            let mutant = Mutant::ALL[rng.below(Mutant::ALL.len() as u64) as usize];
            runs.push(run_scenario_mutated(s, profile, mutant).records);
            for records in runs {
                let mut variants = vec![records.clone()];
                if records.len() > 2 {
                    let k = 1 + rng.below(records.len() as u64 - 1) as usize;
                    let mut dropped = records.clone();
                    dropped.remove(k);
                    let mut repeated = records.clone();
                    repeated.insert(k, records[k].clone());
                    // Long enough that the workers report mid-stream, not only at the end.
                    let note = dropped
                        .iter()
                        .position(|r| matches!(r.event, TraceEvent::Note { .. }));
                    if let Some(i) = note.filter(|_| rng.chance(10)) {
                        let mut padded = dropped.clone();
                        let copies = std::iter::repeat_n(dropped[i].clone(), 2_500);
                        padded.splice(i..i, copies);
                        variants.push(padded);
                    }
                    variants.extend([dropped, repeated]);
                }
                for v in &variants {
                    let options = Options::new(profile, s.latency_bound());
                    let sequential = Oracle::check(options, v, Some(s.until));
                    for threads in [2, 3, 5] {
                        let parallel = Parallel::check(options, threads, v, Some(s.until));
                        assert_eq!(
                            parallel, sequential,
                            "{} [{}], {threads} threads",
                            s.name, profile.name
                        );
                    }
                    traces += 1;
                    match sequential {
                        Err(Error::Violation(_)) => violations += 1,
                        Err(_) => bad += 1,
                        Ok(_) => {}
                    }
                }
            }
        }
    }
    println!(
        "parallel oracle: {traces} traces, {violations} violations and {bad} bad inputs, the \
         same verdicts on 2, 3 and 5 threads"
    );
    assert!(
        violations > 50 && bad > 50,
        "{violations} violations, {bad} bad inputs"
    );
}

/// How many pods a trace makes Terminating (API-2), and how many DELETEs the controller sends
/// to a pod already Terminating (its re-processing, N13).
fn terminating_deletions(records: &[TraceRecord]) -> (usize, usize) {
    let mut terminating = std::collections::BTreeSet::new();
    let (mut made, mut again) = (0, 0);
    for r in records {
        match &r.event {
            TraceEvent::PodModified {
                pod,
                terminating: true,
                ..
            } => {
                made += 1;
                terminating.insert(pod.key.clone());
            }
            TraceEvent::PodDeleted {
                namespace, name, ..
            } => {
                terminating.remove(&PodKey::new(namespace, name));
            }
            TraceEvent::Request {
                verb: RequestVerb::Delete,
                namespace,
                name,
                ..
            } => again += usize::from(terminating.contains(&PodKey::new(namespace, name))),
            _ => {}
        }
    }
    (made, again)
}

/// Correct-runtime traces of `count` random scenarios per profile in a world with graceful
/// deletion and relists ([`random_world_scenario`]): the false alarms.
fn world_false_alarms(count: u64) -> Vec<String> {
    let mut false_alarms = Vec::new();
    for profile in profiles() {
        let before = false_alarms.len();
        let (mut terminating, mut redeleted, mut relists) = (0, 0, 0);
        for seed in 0..count {
            let s = random_world_scenario(seed);
            let report = run_scenario(&s, profile, ClockKind::Virtual);
            let (made, again) = terminating_deletions(&report.records);
            terminating += made;
            redeleted += again;
            relists += s
                .ops
                .iter()
                .filter(|o| matches!(o.op, Op::DropWatch { .. }))
                .count();
            if let Err(e) = check(&s, profile, &report.records) {
                false_alarms.push(format!("world seed {seed} [{}]: {e}", profile.name));
            }
        }
        println!(
            "oracle accuracy: {count} correct-runtime traces of {} with graceful deletion and \
             relists ({terminating} pods made Terminating, {redeleted} DELETEs of a Terminating \
             pod, {relists} broken watches): {} false alarms",
            profile.name,
            false_alarms.len() - before
        );
        assert!(
            terminating > 0 && relists > 0,
            "the generator exercises neither"
        );
    }
    false_alarms
}

#[test]
fn traces_with_graceful_deletion_and_relists_conform() {
    let alarms = world_false_alarms(random_count() / 10);
    assert!(alarms.is_empty(), "{}", alarms.join("\n"));
}

#[test]
#[ignore = "1,000 random scenarios per profile: cargo test --release --test oracle -- --ignored"]
fn a_thousand_traces_with_graceful_deletion_and_relists_conform() {
    let alarms = world_false_alarms(random_count().max(1000));
    assert!(alarms.is_empty(), "{}", alarms.join("\n"));
}

/// Every mutant is rejected on some random scenario of the world with graceful deletion and
/// relists: those behaviours do not make the oracle blind to a wrong controller.
#[test]
#[ignore = "every mutant on random world scenarios: cargo test --release --test oracle -- --ignored"]
fn every_mutant_is_rejected_with_graceful_deletion_and_relists() {
    let scenarios: Vec<Scenario> = (0..random_count() / 5)
        .map(|seed| random_world_scenario(3_000_000 + seed))
        .collect();
    let mut survivors = Vec::new();
    for mutant in Mutant::ALL {
        let (mut differing, mut rejected) = (0, 0);
        for profile in profiles() {
            let (changed, killed) = mutant_traces(&scenarios, profile, mutant);
            differing += changed;
            rejected += killed;
        }
        println!(
            "  {:<45} traces changed: {differing}, rejected: {rejected}",
            mutant.name()
        );
        if rejected == 0 {
            survivors.push(mutant.name());
        }
    }
    assert!(survivors.is_empty(), "surviving mutants: {survivors:?}");
}

#[test]
fn random_scenarios_are_deterministic_and_varied() {
    assert_eq!(random_scenario(7), random_scenario(7));
    let ops: Vec<Op> = (0..200)
        .flat_map(|s| random_scenario(s).ops)
        .map(|o| o.op)
        .collect();
    let kinds: std::collections::BTreeSet<String> = ops
        .iter()
        .map(|op| {
            format!("{op:?}")
                .split([' ', '(', '{'])
                .next()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(kinds.len(), 8, "{kinds:?}");
    let removals = ops.iter().filter(|op| {
        matches!(
            op,
            Op::Taint {
                spec: TaintSpec::Remove { .. },
                ..
            }
        )
    });
    assert!(removals.count() > 20);
}
