//! One model-checking run and its report: what `taintcheck check` prints and what the verdict
//! tests assert. Spec: CHECK-1 (specs/spec.md, "Running the checker").
//!
//! The one module of this crate that starts threads and reads the clock: stateright's checker
//! runs on its own threads, a progress thread reports once a second, and the report times the
//! exploration. It stays beside the model because the verdict tests and the benchmarks call it
//! as a library, and the `taintcheck` CLI is only a binary.

use super::action::Action;
use super::applicability;
use super::cutoff::Cutoff;
use super::reduction::Reduction;
use super::shortest;
use super::state::SysState;
use super::trace::Trace;
use super::transition::TaintSys;
use serde::Serialize;
use stateright::{Checker, Model, Path};
use std::collections::{BTreeMap, HashMap};
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

/// How to explore.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// Breadth-first; counterexamples are made shortest by a second pass ([`shortest`]).
    Bfs,
    /// Depth-first: small memory; counterexamples end at their first violating state.
    Dfs,
    /// Random walks to the horizon (seeded); never complete.
    Simulation,
}

impl Strategy {
    /// The strategy named `s` (`bfs`, `dfs`, `simulation`).
    pub fn parse(s: &str) -> Option<Strategy> {
        match s {
            "bfs" => Some(Strategy::Bfs),
            "dfs" => Some(Strategy::Dfs),
            "simulation" => Some(Strategy::Simulation),
            _ => None,
        }
    }

    /// Its command-line and report name.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Bfs => "bfs",
            Strategy::Dfs => "dfs",
            Strategy::Simulation => "simulation",
        }
    }
}

/// Run options (all have defaults suitable for `check` with no arguments).
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// How to explore.
    pub strategy: Strategy,
    /// The checker's worker threads (at least one).
    pub threads: usize,
    /// Stop after about this many states (simulation always needs one).
    pub target_states: Option<usize>,
    /// The simulation's seed.
    pub seed: u64,
    /// Symmetry reduction over interchangeable pods (spec MODEL-SYM). stateright honours it in
    /// DFS and simulation only; [`RunOptions::check`] refuses it with BFS.
    pub symmetry: bool,
    /// Partial-order reduction (spec MODEL-POR); on by default, in every strategy.
    pub reduction: Reduction,
}

impl RunOptions {
    /// The options' consistency, as a usage error message.
    pub fn check(&self) -> Result<(), String> {
        if self.symmetry && self.strategy == Strategy::Bfs {
            return Err(
                "--symmetry: needs --strategy dfs or simulation (stateright's BFS \
                 ignores symmetry)"
                    .into(),
            );
        }
        Ok(())
    }

    /// Whether these options may check `model`: symmetry reduction renames pods and nodes, so
    /// it goes only with user-defined properties that cannot tell renamed states apart (spec
    /// PROP-SYM; the first that could is named).
    pub fn check_for(&self, model: &TaintSys) -> Result<(), String> {
        self.check()?;
        if self.symmetry && !model.custom.is_empty() {
            let symmetry = model.initial_state().symmetry;
            if let Some(problem) = model.custom.symmetry_problem(&symmetry) {
                return Err(format!("--symmetry: {problem}"));
            }
        }
        Ok(())
    }
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            strategy: Strategy::Bfs,
            threads: 1,
            target_states: None,
            seed: 0,
            symmetry: false,
            reduction: Reduction::Por,
        }
    }
}

/// A property's outcome. An incomplete run (a target reached, a simulation) cannot show that
/// an `always` property holds or that a `sometimes` property has no example: it says what it
/// did not find. Spec: CHECK-1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// An `always` property no reachable state violates (complete run).
    Holds,
    /// An `always` property some reachable state violates.
    Violated,
    /// A `sometimes` property with an example.
    ExampleFound,
    /// A `sometimes` property without one (vacuity alarm; complete run).
    NoExample,
    /// An `always` property no state explored violates (incomplete run).
    NotRefuted,
    /// A `sometimes` property no state explored exemplifies (incomplete run).
    NoExampleYet,
    /// A built-in `sometimes` property the configuration cannot exemplify, and without an
    /// example ([`applicability::not_applicable`], CHECK-1): not a finding.
    NotApplicable,
}

impl Status {
    /// Its report name.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Holds => "holds",
            Status::Violated => "violated",
            Status::ExampleFound => "example_found",
            Status::NoExample => "no_example",
            Status::NotRefuted => "not_refuted",
            Status::NoExampleYet => "no_example_yet",
            Status::NotApplicable => "not_applicable",
        }
    }

    /// The verdict of a property of kind `always` (else `sometimes`) that has (or has not) a
    /// discovery, in a complete (or incomplete) run.
    pub fn of(always: bool, discovered: bool, complete: bool) -> Status {
        match (always, discovered, complete) {
            (true, true, _) => Status::Violated,
            (true, false, true) => Status::Holds,
            (true, false, false) => Status::NotRefuted,
            (false, true, _) => Status::ExampleFound,
            (false, false, true) => Status::NoExample,
            (false, false, false) => Status::NoExampleYet,
        }
    }

    /// [`Status::of`], except that a `sometimes` property without a discovery that the
    /// configuration cannot exemplify (`inapplicable`) is [`Status::NotApplicable`].
    pub fn judged(always: bool, discovered: bool, complete: bool, inapplicable: bool) -> Status {
        if !always && !discovered && inapplicable {
            Status::NotApplicable
        } else {
            Status::of(always, discovered, complete)
        }
    }

    /// A finding for `check --gate`: a violated `always` property, or a `sometimes` property
    /// without an example (complete or not).
    pub fn fails_gate(self) -> bool {
        matches!(
            self,
            Status::Violated | Status::NoExample | Status::NoExampleYet
        )
    }
}

/// One line of the report; `P`, the path, is a [`Trace`], and `N`, a name, the model's (a
/// `merge`d report keeps the JSON and the names the parts wrote).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PropertyReport<P = Trace, N = &'static str> {
    /// The property's name.
    pub name: N,
    /// Its spec id (`EVICT-1`, `SOME-3`, ...; a user-defined property's name).
    pub id: N,
    /// `always` or `sometimes`.
    pub kind: &'static str,
    /// Its outcome.
    pub status: Status,
    /// The path to a violation (`always` properties only).
    pub counterexample: Option<P>,
    /// The path to a witness (`sometimes` properties only).
    pub example: Option<P>,
    /// Why the configuration cannot exemplify it ([`Status::NotApplicable`] only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<N>,
}

impl<P, N> PropertyReport<P, N> {
    /// The counterexample or the example, whichever it has.
    pub fn path(&self) -> Option<&P> {
        self.counterexample.as_ref().or(self.example.as_ref())
    }
}

/// The whole report, in the `--json` shape of the issue.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    /// The profile's name.
    pub profile: &'static str,
    /// The configuration's name.
    pub config: String,
    /// The strategy's name.
    pub strategy: &'static str,
    /// Whether symmetry reduction was on.
    pub symmetry: bool,
    /// The share of the state space explored (`check --partition I/N`); absent for a whole run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partition: Option<PartitionInfo>,
    /// What the cutoff cut from the configuration as given (MODEL-CUTOFF); absent when
    /// nothing was cut.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cutoff: Option<Cutoff>,
    /// The partial-order reduction (`none`, `por`).
    pub reduction: &'static str,
    /// States generated.
    pub states: usize,
    /// Distinct states (representatives, with symmetry).
    pub unique_states: usize,
    /// The longest path explored.
    pub max_depth: usize,
    /// Exploration time, without the shortest-counterexample pass.
    pub seconds: f64,
    /// The whole bounded state space was explored (no target reached, not a simulation).
    pub complete: bool,
    /// One line per property: the built-ins in [`PROPERTIES`](super::properties::PROPERTIES) order, then the user-defined
    /// ones ([`TaintSys::catalogue`]).
    pub properties: Vec<PropertyReport>,
}

impl Report {
    /// A verdict as the reports say it: an incomplete run's names the states it explored
    /// (`not refuted within N states`), never `holds`. Spec: CHECK-1.
    pub fn verdict_text(&self, s: Status) -> String {
        match s {
            Status::NotRefuted => format!("not refuted within {} states", self.unique_states),
            Status::NoExampleYet => format!("no example within {} states", self.unique_states),
            _ => s.as_str().to_string(),
        }
    }

    /// [`Report::verdict_text`] of `p`, with the reason of a `not_applicable` verdict.
    pub fn verdict_line(&self, p: &PropertyReport) -> String {
        match p.reason {
            Some(why) if p.status == Status::NotApplicable => format!("not applicable: {why}"),
            _ => self.verdict_text(p.status),
        }
    }

    /// The outcome of the property `name`.
    pub fn status(&self, name: &str) -> Option<Status> {
        self.properties
            .iter()
            .find(|p| p.name == name)
            .map(|p| p.status)
    }
}

/// Runs the checker to completion (or to the target) and builds the report. `progress` is
/// called about once a second with (states, unique, depth). Options must pass
/// [`RunOptions::check`].
pub fn run(
    model: TaintSys,
    opts: &RunOptions,
    mut progress: impl FnMut(usize, usize, usize) + Send,
) -> Report {
    run_here(model, opts, &mut progress)
}

/// [`run`] without its generic parameter: the checker's loop is compiled once, in this crate,
/// next to the model it calls, rather than into each caller's crate.
fn run_here(model: TaintSys, opts: &RunOptions, progress: Progress<'_>) -> Report {
    let model = reduced(model, opts);
    let explored = explore(model.clone(), opts, progress);
    report(&model, opts, explored, None)
}

/// `model` under the reduction a run with `opts` explores (a whole run and every part of a
/// partitioned one, [`super::partition`]): `--reduction` as given (spec MODEL-POR), narrowed
/// to the dispatchers' moves with symmetry ([`Reduction::PorDispatchers`]).
pub(super) fn reduced(model: TaintSys, opts: &RunOptions) -> TaintSys {
    let reduction = match opts.reduction {
        Reduction::Por if opts.symmetry => Reduction::PorDispatchers,
        r => r,
    };
    TaintSys { reduction, ..model }
}

/// What an exploration found, before its paths are made short and described.
pub(super) struct Explored {
    /// A path per property with a discovery, from an initial state of the explored model.
    pub discoveries: HashMap<&'static str, Path<SysState, Action>>,
    pub states: usize,
    pub unique_states: usize,
    pub max_depth: usize,
    /// Exploration time.
    pub seconds: f64,
    /// The whole bounded state space of the explored model was explored.
    pub complete: bool,
    /// The paths are already shortest ones (a part's, CHECK-6): BFS's pass is not run again.
    pub shortest: bool,
}

/// The progress callback: (states, unique, depth), about once a second.
pub(super) type Progress<'a> = &'a mut (dyn FnMut(usize, usize, usize) + Send);

/// Runs stateright's checker on `model` (the model, or a share of it: [`super::partition`]).
pub(super) fn explore<M>(model: M, opts: &RunOptions, progress: Progress<'_>) -> Explored
where
    M: Model<State = SysState, Action = Action> + Send + Sync + 'static,
{
    let start = Instant::now();
    let mut builder = model.checker().threads(opts.threads.max(1));
    if let Some(n) = opts.target_states {
        builder = builder.target_state_count(n);
    }
    if opts.symmetry {
        builder = builder.symmetry();
    }
    let checker: Box<dyn Checker<M> + Send + Sync> = match opts.strategy {
        Strategy::Bfs => Box::new(builder.spawn_bfs()),
        Strategy::Dfs => Box::new(builder.spawn_dfs()),
        Strategy::Simulation => {
            let b = if opts.target_states.is_none() {
                builder.target_state_count(100_000)
            } else {
                builder
            };
            Box::new(b.spawn_simulation(opts.seed, stateright::UniformChooser))
        }
    };
    // The checker's threads are joined here, not polled, so the time ends when they do; the
    // progress thread wakes once a second until told they are done.
    let mut checker = checker;
    let handles = checker.handles();
    let (done, finished) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|scope| {
        let checker = &checker;
        scope.spawn(move || {
            while let Err(RecvTimeoutError::Timeout) = finished.recv_timeout(Duration::from_secs(1))
            {
                progress(
                    checker.state_count(),
                    checker.unique_state_count(),
                    checker.max_depth(),
                );
            }
        });
        for h in handles {
            h.join().expect("checker thread panicked");
        }
        drop(done);
    });
    // Exploration time only: the shortest-counterexample pass is not part of the rate.
    let seconds = start.elapsed().as_secs_f64();
    let reached_target = opts
        .target_states
        .is_some_and(|n| checker.state_count() >= n);
    Explored {
        discoveries: checker.discoveries(),
        states: checker.state_count(),
        unique_states: checker.unique_state_count(),
        max_depth: checker.max_depth(),
        seconds,
        complete: opts.strategy != Strategy::Simulation && !reached_target,
        shortest: false,
    }
}

/// The report of an exploration of `model` (or of a share of it, `partition`): its paths made
/// shortest (BFS) or cut at their first discovery, then described.
pub(super) fn report(
    model: &TaintSys,
    opts: &RunOptions,
    explored: Explored,
    partition: Option<PartitionInfo>,
) -> Report {
    let mut discoveries = explored.discoveries;
    let catalogue = model.catalogue();
    let found: Vec<&'static str> = catalogue
        .iter()
        .filter(|p| discoveries.contains_key(p.name))
        .map(|p| p.name)
        .collect();
    match opts.strategy {
        // Shortest in the model as specified: the pass explores without reduction.
        Strategy::Bfs if explored.shortest => {}
        Strategy::Bfs => discoveries.extend(shortest::discoveries(&model.unreduced(), &found)),
        Strategy::Dfs | Strategy::Simulation => {
            for name in &found {
                if let Some(path) = discoveries.remove(name) {
                    discoveries.insert(name, shortest::first_discovery(model, name, path));
                }
            }
        }
    }
    let complete = explored.complete;
    let properties = catalogue
        .iter()
        .map(|p| {
            let path = discoveries.get(p.name).map(|path| Trace::of(model, path));
            let reason = applicability::not_applicable(&model.config, p.id)
                .filter(|_| !p.always && path.is_none());
            PropertyReport {
                name: p.name,
                id: p.id,
                kind: if p.always { "always" } else { "sometimes" },
                status: Status::judged(p.always, path.is_some(), complete, reason.is_some()),
                counterexample: path.clone().filter(|_| p.always),
                example: path.filter(|_| !p.always),
                reason,
            }
        })
        .collect();
    Report {
        profile: model.profile.name,
        config: model.config.name.clone(),
        strategy: opts.strategy.name(),
        symmetry: opts.symmetry,
        reduction: model.reduction.name(),
        partition,
        cutoff: model.cutoff.clone(),
        states: explored.states,
        unique_states: explored.unique_states,
        max_depth: explored.max_depth,
        seconds: explored.seconds,
        complete,
        properties,
    }
}

/// What a part's report says about its share (`partition` in `check --json`): enough for
/// [`merge`](super::partition::merge) to tell that N reports are the N shares of one cut.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PartitionInfo {
    /// This part, from 0.
    pub index: usize,
    /// How many parts.
    pub count: usize,
    /// The cut's depth (steps from the initial state).
    pub cut_depth: usize,
    /// States on the cut's level (all parts' roots together).
    pub cut_states: usize,
    /// States above the cut, judged by every part.
    pub prefix_states: usize,
    /// This part's roots.
    pub roots: usize,
    /// The initial state's fingerprint (hex): parts of different models do not merge.
    pub initial: String,
    /// Under BFS without reduction, per property whose path goes through the cut's level: the
    /// position there (over all parts) of the root it goes through. [`merge`](super::partition::merge) breaks ties
    /// between equally short paths by it, which makes the merged path the single run's.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub crossings: BTreeMap<&'static str, usize>,
}
