//! Scale-out: `check --partition I/N` explores one of N shares of the state space, and
//! [`merge`] combines the N reports into the verdicts of the whole run. Spec: CHECK-6
//! (specs/spec.md, "Scaling out").
//!
//! Every part explores the graph a single run with the same options explores: reduced as
//! `--reduction` says (`run::reduced`, one decision for both). The reduced graph is a fixed
//! graph (the ample choice reads the state alone, MODEL-POR), so everything below holds of it,
//! and it has the full model's verdicts.
//!
//! The cut: every part walks that graph breadth-first from the initial state, in the
//! model's deterministic action order, until a level holds at least [`ROOTS_PER_PART`] states
//! per part (or the graph ends, or [`PREFIX_LIMIT`] states lie above the level). The states
//! above the cut (the prefix) are judged by every part; the states of the cut's level are
//! dealt round-robin, and part I explores everything reachable from its own. Every reachable
//! state below the cut has a shortest path through some state of the cut's level, so the union
//! of the N shares is the reachable state space and the merged verdicts are the single run's.
//! The shares are disjoint in their roots; states reachable from the roots of two parts are
//! explored by both (the price of needing no communication between parts).
//!
//! Paths found in a share start at a root; the prefix's parent links extend them back to the
//! initial state, so every counterexample is a path of the whole (reduced) model. Under BFS
//! without reduction the shortest pass ([`super::shortest`]) stays in the share and [`merge`]
//! keeps the shortest path, the one through the earliest root on a tie: the single run's.
//! With reduction a shortest path of the unreduced model may leave the reduced graph, so the
//! pass runs on the whole unreduced model, as in a single run.
//! Every property the model has is shared, the user-defined ones too; [`merge`] combines
//! whatever properties the parts report, the same in every part.

use super::action::Action;
use super::cutoff::Cutoff;
use super::properties::custom::MAX_CUSTOM;
use super::properties::PROPERTIES;
use super::reduction::Reduction;
use super::run::{
    self, Explored, PartitionInfo, PropertyReport, Report, RunOptions, Status, Strategy,
};
use super::shortest::{self, discovered, fingerprint, Parents};
use super::state::SysState;
use super::transition::TaintSys;
use serde::Serialize;
use serde_json::{Map, Value};
use stateright::{Model, Path, Property};
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// The cut's level holds at least this many states per part (balance: the more roots, the
/// more evenly unequal subtrees spread over the parts).
pub const ROOTS_PER_PART: usize = 16;
/// The cut is made at the latest after this many prefix states, whatever the level's size.
pub const PREFIX_LIMIT: usize = 200_000;

/// One share of N: `index` in `0..count` (`JOB_COMPLETION_INDEX` counts from 0 too).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Partition {
    /// This part, from 0.
    pub index: usize,
    /// How many parts.
    pub count: usize,
}

impl Partition {
    /// `I/N` with `0 <= I < N`, `1 <= N <= 65,536`.
    pub fn parse(s: &str) -> Result<Partition, String> {
        let invalid = |why: &str| format!("Invalid value: {s:?}: {why}");
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| invalid("expected I/N, e.g. 0/4"))?;
        let index: usize = i
            .trim()
            .parse()
            .map_err(|_| invalid("I: expected an integer"))?;
        let count: usize = n
            .trim()
            .parse()
            .map_err(|_| invalid("N: expected an integer"))?;
        if count == 0 || count > 65_536 {
            return Err(invalid("N: expected 1 to 65536"));
        }
        if index >= count {
            return Err(invalid("I: expected 0 to N-1"));
        }
        Ok(Partition { index, count })
    }
}

/// The prefix above the cut and the cut's level.
struct Cut {
    depth: usize,
    /// How each state of the prefix and the level was first reached (`None`: initial).
    parents: Parents,
    level: Vec<SysState>,
    prefix_states: usize,
    /// The first prefix state (BFS order) that is a discovery, per property.
    found: BTreeMap<&'static str, u64>,
}

impl Cut {
    fn new(model: &TaintSys, count: usize) -> Cut {
        let properties = model.properties();
        let mut parents = Parents::default();
        let mut level = Vec::new();
        for s in model.init_states() {
            if let Entry::Vacant(e) = parents.entry(fingerprint(&s)) {
                e.insert(None);
                level.push(s);
            }
        }
        let (mut depth, mut prefix_states) = (0, 0);
        let mut found = BTreeMap::new();
        let mut actions = Vec::new();
        while !level.is_empty()
            && level.len() < ROOTS_PER_PART * count
            && prefix_states < PREFIX_LIMIT
        {
            let mut next = Vec::new();
            for s in &level {
                let fp = fingerprint(s);
                for p in &properties {
                    if !found.contains_key(p.name) && discovered(model, p, s) {
                        found.insert(p.name, fp);
                    }
                }
                model.actions(s, &mut actions);
                for a in actions.drain(..) {
                    let Some(succ) = model.next_state(s, a.clone()) else {
                        continue;
                    };
                    if !model.within_boundary(&succ) {
                        continue;
                    }
                    if let Entry::Vacant(e) = parents.entry(fingerprint(&succ)) {
                        e.insert(Some((fp, a)));
                        next.push(succ);
                    }
                }
            }
            prefix_states += level.len();
            level = next;
            depth += 1;
        }
        Cut {
            depth,
            parents,
            level,
            prefix_states,
            found,
        }
    }

    /// The path of the whole model to the prefix or level state `fp`, then along `then`.
    fn path(&self, model: &TaintSys, fp: u64, then: Vec<Action>) -> Path<SysState, Action> {
        let prefix = shortest::path_to(model, &self.parents, fp);
        if then.is_empty() {
            return prefix;
        }
        let steps = prefix.into_vec();
        let init = steps[0].0.clone();
        let actions: Vec<Action> = steps
            .into_iter()
            .filter_map(|(_, a)| a)
            .chain(then)
            .collect();
        Path::from_actions(model, init, &actions).expect("a path through the cut replays")
    }
}

/// A property's condition on the whole model.
type Condition = fn(&TaintSys, &SysState) -> bool;

/// The model restricted to one share: its initial states are the part's roots.
#[derive(Clone)]
struct Share {
    model: TaintSys,
    roots: Arc<Vec<SysState>>,
    conditions: Arc<Vec<Condition>>,
}

/// The `I`-th property of the share: the model's, read through `conditions` (stateright's
/// properties are plain function pointers, so each index needs its own).
fn condition<const I: usize>(share: &Share, s: &SysState) -> bool {
    (share.conditions[I])(&share.model, s)
}

/// One [`condition`] per property index: the built-ins, then the user-defined ones.
const CONDITIONS: [fn(&Share, &SysState) -> bool; 33] = [
    condition::<0>,
    condition::<1>,
    condition::<2>,
    condition::<3>,
    condition::<4>,
    condition::<5>,
    condition::<6>,
    condition::<7>,
    condition::<8>,
    condition::<9>,
    condition::<10>,
    condition::<11>,
    condition::<12>,
    condition::<13>,
    condition::<14>,
    condition::<15>,
    condition::<16>,
    condition::<17>,
    condition::<18>,
    condition::<19>,
    condition::<20>,
    condition::<21>,
    condition::<22>,
    condition::<23>,
    condition::<24>,
    condition::<25>,
    condition::<26>,
    condition::<27>,
    condition::<28>,
    condition::<29>,
    condition::<30>,
    condition::<31>,
    condition::<32>,
];
const _: () = assert!(PROPERTIES.len() + MAX_CUSTOM <= CONDITIONS.len());

impl Model for Share {
    type State = SysState;
    type Action = Action;

    fn init_states(&self) -> Vec<SysState> {
        self.roots.as_ref().clone()
    }

    fn actions(&self, s: &SysState, actions: &mut Vec<Action>) {
        self.model.actions(s, actions)
    }

    fn next_state(&self, s: &SysState, action: Action) -> Option<SysState> {
        self.model.next_state(s, action)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        self.model
            .properties()
            .iter()
            .zip(CONDITIONS)
            .map(|(p, condition)| Property {
                expectation: p.expectation.clone(),
                name: p.name,
                condition,
            })
            .collect()
    }

    fn within_boundary(&self, s: &SysState) -> bool {
        self.model.within_boundary(s)
    }
}

/// Explores share `part` of `model` and reports it. Options must pass
/// [`RunOptions::check`] and [`check_options`].
pub fn run(
    model: TaintSys,
    opts: &RunOptions,
    part: Partition,
    mut progress: impl FnMut(usize, usize, usize) + Send,
) -> Report {
    run_here(model, opts, part, &mut progress)
}

/// [`run`] without its generic parameter, so that the checker is compiled in this crate.
fn run_here(
    model: TaintSys,
    opts: &RunOptions,
    part: Partition,
    progress: run::Progress<'_>,
) -> Report {
    // The cut and the share are made in the graph the single run explores: the reduced one.
    let model = run::reduced(model, opts);
    let cut = Cut::new(&model, part.count);
    let cut_states = cut.level.len();
    let roots: Vec<SysState> = cut
        .level
        .iter()
        .skip(part.index)
        .step_by(part.count)
        .cloned()
        .collect();
    let mut info = PartitionInfo {
        index: part.index,
        count: part.count,
        cut_depth: cut.depth,
        cut_states,
        prefix_states: cut.prefix_states,
        roots: roots.len(),
        initial: model
            .init_states()
            .first()
            .map(|s| format!("{:016x}", fingerprint(s)))
            .unwrap_or_default(),
        crossings: BTreeMap::new(),
    };
    // Without reduction the share is a share of the model as specified, so BFS's pass can stay
    // in it (CHECK-6, "Paths"); with it, a shortest path of the unreduced model may leave the
    // reduced graph, and `run::report` runs the pass on the whole unreduced model.
    let local = opts.strategy == Strategy::Bfs && model.reduction == Reduction::None;
    let share = Share {
        model: model.clone(),
        roots: Arc::new(roots),
        conditions: Arc::new(model.properties().iter().map(|p| p.condition).collect()),
    };
    let mut explored = if share.roots.is_empty() {
        Explored {
            discoveries: HashMap::new(),
            states: 0,
            unique_states: 0,
            max_depth: 0,
            seconds: 0.0,
            complete: true,
            shortest: local,
        }
    } else {
        let mut explored = run::explore(share.clone(), opts, progress);
        if local {
            // Found below the cut only: a discovery above it is shorter than any through it.
            let below: Vec<&'static str> = explored
                .discoveries
                .keys()
                .filter(|name| !cut.found.contains_key(*name))
                .copied()
                .collect();
            explored
                .discoveries
                .extend(shortest::discoveries(&share, &below));
            explored.shortest = true;
        }
        explored
    };
    // A share's paths start at a root: extend them back to the initial state. A discovery above
    // the cut is shorter than any through it.
    let mut discoveries = HashMap::new();
    for (name, path) in explored.discoveries.drain() {
        let steps = path.into_vec();
        let root = fingerprint(&steps[0].0);
        if local {
            if let Some(j) = share.roots.iter().position(|r| fingerprint(r) == root) {
                info.crossings.insert(name, part.index + j * part.count);
            }
        }
        let then = steps.into_iter().filter_map(|(_, a)| a).collect();
        discoveries.insert(name, cut.path(&model, root, then));
    }
    for (name, fp) in &cut.found {
        info.crossings.remove(name);
        discoveries.insert(*name, cut.path(&model, *fp, Vec::new()));
    }
    explored.discoveries = discoveries;
    explored.max_depth = if explored.unique_states == 0 {
        cut.depth.saturating_sub(1)
    } else {
        explored.max_depth + cut.depth
    };
    explored.states += cut.prefix_states;
    explored.unique_states += cut.prefix_states;
    run::report(&model, opts, explored, Some(info))
}

/// The options a partitioned run refuses, as a usage error message.
pub fn check_options(opts: &RunOptions) -> Result<(), String> {
    if opts.strategy == Strategy::Simulation {
        return Err(
            "--partition: needs --strategy bfs or dfs (a simulation has no \
                    state space to share)"
                .into(),
        );
    }
    Ok(())
}

/// Combines the `--json` reports of the N parts of one partitioned run (each `(file, report)`)
/// into the report of the whole run. Every part must report the same properties (built-in and
/// user-defined); a property is discovered if some part discovered it, and holds (has no
/// example) if every part completed without; each path is the shortest any part found (the
/// lowest part on a tie). Counts are sums, `max_depth` and `seconds` maxima.
pub fn merge(parts: &[(String, Value)]) -> Result<Merged, String> {
    let mut by_index: BTreeMap<u64, (&str, &Map<String, Value>)> = BTreeMap::new();
    let mut first: Option<(&str, &Map<String, Value>)> = None;
    for (file, report) in parts {
        let r = report
            .as_object()
            .ok_or_else(|| format!("{file}: expected a `check --json` report (an object)"))?;
        let partition = r
            .get("partition")
            .and_then(Value::as_object)
            .ok_or_else(|| {
                format!("{file}: partition: Required value (a `check --partition` report)")
            })?;
        let index = partition.get("index").and_then(Value::as_u64);
        let index = index.ok_or_else(|| format!("{file}: partition.index: Required value"))?;
        if let Some((first_file, f)) = first {
            for key in [
                "profile",
                "config",
                "strategy",
                "symmetry",
                "cutoff",
                "reduction",
            ] {
                if r.get(key) != f.get(key) {
                    return Err(format!(
                        "{file}: {key}: Invalid value: {} (the part in {first_file} has {})",
                        show(r.get(key)),
                        show(f.get(key))
                    ));
                }
            }
            let fp = f.get("partition").and_then(Value::as_object);
            for key in [
                "count",
                "cut_depth",
                "cut_states",
                "prefix_states",
                "initial",
            ] {
                let theirs = fp.and_then(|p| p.get(key));
                if partition.get(key) != theirs {
                    return Err(format!(
                        "{file}: partition.{key}: Invalid value: {} (the part in {first_file} \
                         has {}: not the same model or cut)",
                        show(partition.get(key)),
                        show(theirs)
                    ));
                }
            }
        } else {
            first = Some((file, r));
        }
        if let Some((other, _)) = by_index.insert(index, (file, r)) {
            return Err(format!(
                "{file}: partition.index: Duplicate value: {index} (also {other})"
            ));
        }
    }
    let Some((_, f)) = first else {
        return Err("no reports to merge".into());
    };
    let count = f
        .get("partition")
        .and_then(|p| p.get("count"))
        .and_then(Value::as_u64)
        .ok_or("partition.count: Required value")?;
    let missing: Vec<String> = (0..count)
        .filter(|i| !by_index.contains_key(i))
        .map(|i| format!("{i}/{count}"))
        .collect();
    if !missing.is_empty() {
        return Err(format!("missing parts: {}", missing.join(", ")));
    }
    let reports: Vec<(&str, &Map<String, Value>)> = by_index.into_values().collect();
    let complete = reports
        .iter()
        .all(|(_, r)| r.get("complete") == Some(&Value::Bool(true)));
    let sum = |key: &str| -> u64 { reports.iter().filter_map(|(_, r)| r[key].as_u64()).sum() };
    let max_u = |key: &str| reports.iter().filter_map(|(_, r)| r[key].as_u64()).max();
    let max_f = |key: &str| {
        reports
            .iter()
            .filter_map(|(_, r)| r[key].as_f64())
            .fold(0.0, f64::max)
    };
    let lines = reports
        .iter()
        .map(|(file, r)| lines(file, r))
        .collect::<Result<Vec<_>, _>>()?;
    let (first_file, catalogue) = (reports[0].0, &lines[0]);
    for ((file, _), theirs) in reports.iter().zip(&lines).skip(1) {
        same_properties(first_file, catalogue, file, theirs)?;
    }
    let mut properties = Vec::new();
    for p in catalogue {
        let path_key = if p.always {
            "counterexample"
        } else {
            "example"
        };
        // The shortest; on a tie, the one through the earliest root of the cut's level, then
        // the lowest part.
        let mut shortest: Option<((usize, u64), &Value)> = None;
        for ((_, r), part) in reports.iter().zip(&lines) {
            let line = part.iter().find(|q| q.name == p.name).map(|q| q.line);
            let path = line.and_then(|l| l.get(path_key)).filter(|v| !v.is_null());
            if let Some(path) = path {
                let len = path["steps"].as_array().map_or(usize::MAX, Vec::len);
                let crossing = r["partition"]["crossings"][p.name].as_u64();
                let rank = (len, crossing.unwrap_or(u64::MAX));
                if shortest.is_none_or(|(best, _)| rank < best) {
                    shortest = Some((rank, path));
                }
            }
        }
        let path = shortest.map(|(_, path)| path.clone());
        // Every part judges applicability from the one configuration: the first part's reason.
        let reason = p
            .line
            .get("reason")
            .and_then(Value::as_str)
            .map(str::to_string)
            .filter(|_| !p.always && path.is_none());
        properties.push(PropertyReport {
            name: p.name.to_string(),
            id: p.id.to_string(),
            kind: if p.always { "always" } else { "sometimes" },
            status: Status::judged(p.always, path.is_some(), complete, reason.is_some()),
            counterexample: path.clone().filter(|_| p.always),
            example: path.filter(|_| !p.always),
            reason,
        });
    }
    Ok(Merged {
        profile: f["profile"].clone(),
        config: f["config"].clone(),
        strategy: f["strategy"].clone(),
        symmetry: f["symmetry"].clone(),
        cutoff: f
            .get("cutoff")
            .map(|c| serde_json::from_value(c.clone()).map_err(|e| format!("cutoff: {e}")))
            .transpose()?,
        reduction: f["reduction"].clone(),
        parts: count,
        states: sum("states"),
        unique_states: sum("unique_states"),
        max_depth: max_u("max_depth").unwrap_or(0),
        seconds: max_f("seconds"),
        complete,
        properties,
    })
}

/// The merged report: `check --json`'s shape, with `parts` for `partition`.
#[derive(Clone, Debug, Serialize)]
pub struct Merged {
    /// The parts' profile, configuration, strategy, symmetry and reduction (the same in every
    /// part).
    pub profile: Value,
    /// See `profile`.
    pub config: Value,
    /// See `profile`.
    pub strategy: Value,
    /// See `profile`.
    pub symmetry: Value,
    /// The parts' cutoff (MODEL-CUTOFF), the same in every part; absent when nothing was cut.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cutoff: Option<Cutoff>,
    /// See `profile`.
    pub reduction: Value,
    /// How many parts were merged.
    pub parts: u64,
    /// Sums over the parts (the prefix, and states reachable from several shares, count once
    /// per part).
    pub states: u64,
    /// See `states`.
    pub unique_states: u64,
    /// The longest path any part explored.
    pub max_depth: u64,
    /// The slowest part's exploration time.
    pub seconds: f64,
    /// Every part explored its whole share.
    pub complete: bool,
    /// One line per property the parts report, in the first part's order (the built-ins in
    /// [`PROPERTIES`] order, then the user-defined ones).
    pub properties: Vec<PropertyReport<Value, String>>,
}

/// A property line of a part's report.
struct Line<'a> {
    name: &'a str,
    id: &'a str,
    /// `kind` is `always` (else `sometimes`).
    always: bool,
    line: &'a Map<String, Value>,
}

/// The property lines of `file`'s report `r`, in its order.
fn lines<'a>(file: &str, r: &'a Map<String, Value>) -> Result<Vec<Line<'a>>, String> {
    let listed = r
        .get("properties")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("{file}: properties: Required value"))?;
    let mut lines: Vec<Line<'a>> = Vec::with_capacity(listed.len());
    for (i, p) in listed.iter().enumerate() {
        let line = p
            .as_object()
            .ok_or_else(|| format!("{file}: properties[{i}]: expected an object"))?;
        let field = |key: &str| {
            line.get(key)
                .and_then(Value::as_str)
                .ok_or_else(|| format!("{file}: properties[{i}].{key}: Required value"))
        };
        let (name, id) = (field("name")?, field("id")?);
        let always = match field("kind")? {
            "always" => true,
            "sometimes" => false,
            other => {
                return Err(format!(
                    "{file}: properties[{i}].kind: Unsupported value: {other:?}: expected \
                     \"always\" or \"sometimes\""
                ))
            }
        };
        if lines.iter().any(|l| l.name == name) {
            return Err(format!(
                "{file}: properties[{i}].name: Duplicate value: {name:?}"
            ));
        }
        lines.push(Line {
            name,
            id,
            always,
            line,
        });
    }
    Ok(lines)
}

/// `theirs` (the lines of the part in `file`) names the properties `ours` (the lines of the
/// part in `first`) names, each with the same id and kind: parts of one run check one
/// catalogue, so a property one part lacks has no verdict.
fn same_properties(first: &str, ours: &[Line], file: &str, theirs: &[Line]) -> Result<(), String> {
    let kind = |l: &Line| if l.always { "always" } else { "sometimes" };
    for (i, t) in theirs.iter().enumerate() {
        let Some(o) = ours.iter().find(|o| o.name == t.name) else {
            return Err(format!(
                "{file}: properties[{i}]: property {:?} is not in the part in {first} (not the \
                 same properties)",
                t.name
            ));
        };
        if (o.id, o.always) != (t.id, t.always) {
            return Err(format!(
                "{file}: properties[{i}]: property {:?}: Invalid value: {} with id {:?} (the \
                 part in {first} has {} with id {:?})",
                t.name,
                kind(t),
                t.id,
                kind(o),
                o.id
            ));
        }
    }
    if let Some(o) = ours
        .iter()
        .find(|o| theirs.iter().all(|t| t.name != o.name))
    {
        return Err(format!(
            "{file}: properties: property {:?}: Required value (the part in {first} reports it)",
            o.name
        ));
    }
    Ok(())
}

/// A JSON value in a message, short.
fn show(v: Option<&Value>) -> String {
    let s = v.map_or("nothing".to_string(), Value::to_string);
    if s.chars().count() > 60 {
        format!("{}...", s.chars().take(60).collect::<String>())
    } else {
        s
    }
}
