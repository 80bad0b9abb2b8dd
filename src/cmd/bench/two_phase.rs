//! The reference workload of `bench model`: two-phase commit as stateright's own example models
//! it (a transaction manager, `rms` resource managers, a set of messages that are never lost;
//! Gray and Lamport's TLA+ specification). Written here so that its unique states per second
//! and taintcheck's come from the same binary, checker and sitting. `bench two-phase` runs it
//! alone, for `scripts/model-instructions.sh` to count its instructions per unique state.

use super::emit;
use crate::cmd::output::outln;
use clap::Args;
use serde::Serialize;
use stateright::{Checker, Model, Property};
use std::collections::BTreeSet;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Args)]
pub struct TwoPhaseBench {
    /// Resource managers (6: about the unreduced `default`'s unique states).
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u8).range(1..=12))]
    rms: u8,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// One run of the example: DFS, one thread.
#[derive(Serialize)]
pub struct TwoPhaseRow {
    /// Resource managers.
    pub rms: u8,
    /// Unique states explored.
    pub unique_states: usize,
    /// Wall seconds of the search.
    pub seconds: f64,
    /// `unique_states` over `seconds`.
    pub unique_states_per_second: f64,
}

/// `bench two-phase`: the example alone.
pub fn bench(b: &TwoPhaseBench) -> ExitCode {
    emit(b.json, &run(b.rms), |t| {
        outln!(
            "stateright two-phase commit, {} managers, dfs, 1 thread: {} unique states in {:.2} s \
             ({:.0}/s)",
            t.rms,
            t.unique_states,
            t.seconds,
            t.unique_states_per_second
        )
    })
}

/// Stateright's two-phase commit example with `rms` managers, DFS, one thread.
pub fn run(rms: u8) -> TwoPhaseRow {
    let start = Instant::now();
    let checker = TwoPhase {
        rms: usize::from(rms),
    }
    .checker()
    .spawn_dfs()
    .join();
    let seconds = start.elapsed().as_secs_f64();
    let unique_states = checker.unique_state_count();
    TwoPhaseRow {
        rms,
        unique_states,
        seconds,
        unique_states_per_second: unique_states as f64 / seconds.max(1e-9),
    }
}

/// A resource manager's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Rm {
    Working,
    Prepared,
    Committed,
    Aborted,
}

/// The transaction manager's decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Tm {
    Init,
    Committed,
    Aborted,
}

/// A message; the set of sent messages only grows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Msg {
    Prepared(usize),
    Commit,
    Abort,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct State {
    rm: Vec<Rm>,
    tm: Tm,
    tm_prepared: Vec<bool>,
    msgs: BTreeSet<Msg>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    TmRcvPrepared(usize),
    TmCommit,
    TmAbort,
    RmPrepare(usize),
    RmChooseToAbort(usize),
    RmRcvCommitMsg(usize),
    RmRcvAbortMsg(usize),
}

/// Two-phase commit with `rms` resource managers.
pub struct TwoPhase {
    pub rms: usize,
}

impl Model for TwoPhase {
    type State = State;
    type Action = Action;

    fn init_states(&self) -> Vec<State> {
        vec![State {
            rm: vec![Rm::Working; self.rms],
            tm: Tm::Init,
            tm_prepared: vec![false; self.rms],
            msgs: BTreeSet::new(),
        }]
    }

    fn actions(&self, s: &State, out: &mut Vec<Action>) {
        if s.tm == Tm::Init && s.tm_prepared.iter().all(|p| *p) {
            out.push(Action::TmCommit);
        }
        if s.tm == Tm::Init {
            out.push(Action::TmAbort);
        }
        for i in 0..self.rms {
            if s.tm == Tm::Init && s.msgs.contains(&Msg::Prepared(i)) {
                out.push(Action::TmRcvPrepared(i));
            }
            if s.rm[i] == Rm::Working {
                out.push(Action::RmPrepare(i));
                out.push(Action::RmChooseToAbort(i));
            }
            if s.msgs.contains(&Msg::Commit) {
                out.push(Action::RmRcvCommitMsg(i));
            }
            if s.msgs.contains(&Msg::Abort) {
                out.push(Action::RmRcvAbortMsg(i));
            }
        }
    }

    fn next_state(&self, s: &State, a: Action) -> Option<State> {
        let mut t = s.clone();
        match a {
            Action::TmRcvPrepared(i) => t.tm_prepared[i] = true,
            Action::TmCommit => {
                t.tm = Tm::Committed;
                t.msgs.insert(Msg::Commit);
            }
            Action::TmAbort => {
                t.tm = Tm::Aborted;
                t.msgs.insert(Msg::Abort);
            }
            Action::RmPrepare(i) => {
                t.rm[i] = Rm::Prepared;
                t.msgs.insert(Msg::Prepared(i));
            }
            Action::RmChooseToAbort(i) => t.rm[i] = Rm::Aborted,
            Action::RmRcvCommitMsg(i) => t.rm[i] = Rm::Committed,
            Action::RmRcvAbortMsg(i) => t.rm[i] = Rm::Aborted,
        }
        Some(t)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::sometimes("abort agreement", |_, s: &State| {
                s.rm.iter().all(|r| *r == Rm::Aborted)
            }),
            Property::sometimes("commit agreement", |_, s: &State| {
                s.rm.iter().all(|r| *r == Rm::Committed)
            }),
            Property::always("consistent", |_, s: &State| {
                !(s.rm.contains(&Rm::Aborted) && s.rm.contains(&Rm::Committed))
            }),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The state space of stateright's example: 288 unique states with three managers (its own
    /// test's figure), and consistency holds.
    #[test]
    fn three_managers_have_the_examples_state_space() {
        let checker = TwoPhase { rms: 3 }.checker().spawn_dfs().join();
        assert_eq!(checker.unique_state_count(), 288);
        assert!(checker.discovery("consistent").is_none());
        assert!(checker.discovery("commit agreement").is_some());
    }
}
