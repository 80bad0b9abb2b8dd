//! Scale-out (CHECK-6): the N shares of `check --partition I/N`, merged, give the single run's
//! verdicts, and BFS's counterexamples are the single run's (shortest in the whole model), with
//! partial-order reduction (the default) and without, for the built-in properties and the
//! user-defined ones.

use serde_json::Value;
use std::sync::Arc;
use taintcheck_core::profile::Profile;
use taintcheck_model::check::config::CheckConfig;
use taintcheck_model::check::partition::{self, Merged, Partition};
use taintcheck_model::check::reduction::Reduction;
use taintcheck_model::check::run::{run, Report, RunOptions, Strategy};
use taintcheck_model::check::state::SysState;
use taintcheck_model::check::TaintSys;

/// The tutorial's configuration with declared properties (PROP-1).
const POLICY: &str = "docs/tutorial/policy.yaml";

const CONFIGS: &[&str] = &[
    "default",
    "timer-vs-cancel",
    "same-name-successor",
    "toleration-change",
    "stale-cache",
    "failing-delete",
    "restart",
    "forever-toleration",
    "orphaned-timer",
    "live-read",
    "successor-stale-listing",
    "successor-while-deleting",
    "toleration-flip-while-deleting",
];

fn model(profile: &str, config: &str) -> TaintSys {
    TaintSys::new(
        Profile::by_name(profile).expect("known profile"),
        CheckConfig::builtin(config).expect("built-in config"),
    )
}

fn opts(strategy: Strategy, symmetry: bool, reduction: Reduction) -> RunOptions {
    RunOptions {
        strategy,
        symmetry,
        reduction,
        ..RunOptions::default()
    }
}

/// Both reductions a run may be asked for, `por` (the default) first.
const REDUCTIONS: [Reduction; 2] = [Reduction::Por, Reduction::None];

/// The report of part `index` of `count`.
fn part(model: &TaintSys, opts: &RunOptions, index: usize, count: usize) -> Report {
    partition::run(
        model.clone(),
        opts,
        Partition { index, count },
        |_, _, _| {},
    )
}

/// The N parts' reports, as `check --partition I/N --json` writes them.
fn parts(model: &TaintSys, opts: &RunOptions, count: usize) -> Vec<(String, Value)> {
    (0..count)
        .map(|index| {
            let r = part(model, opts, index, count);
            (
                format!("part-{index}.json"),
                serde_json::to_value(&r).expect("reports serialize"),
            )
        })
        .collect()
}

fn merged(model: &TaintSys, opts: &RunOptions, count: usize) -> Merged {
    partition::merge(&parts(model, opts, count)).expect("the parts of one run merge")
}

/// Every verdict of `m` is `single`'s; with `same_paths`, every path too.
fn assert_same(what: &str, single: &Report, m: &Merged, same_paths: bool) {
    assert_eq!(m.complete, single.complete, "{what}: complete");
    assert_eq!(m.reduction, single.reduction, "{what}: reduction");
    assert_eq!(
        m.properties.len(),
        single.properties.len(),
        "{what}: every property is merged"
    );
    for (s, p) in single.properties.iter().zip(&m.properties) {
        assert_eq!(s.name, p.name);
        assert_eq!(s.id, p.id);
        assert_eq!(s.status, p.status, "{what}: {}", s.name);
        let single_path = s.path().map(|t| serde_json::to_value(t).unwrap());
        let merged_path = p.counterexample.clone().or(p.example.clone());
        assert_eq!(
            single_path.is_some(),
            merged_path.is_some(),
            "{what}: {} has a path",
            s.name
        );
        if same_paths {
            assert_eq!(single_path, merged_path, "{what}: {}'s path", s.name);
        }
    }
}

/// For every configuration of [`CONFIGS`] under `latest`, N = 2 and 3, the merged verdicts of
/// the parts run with `o` are the single run's (with `same_paths`, every path too).
fn every_config_merges_to_the_single_run(o: &RunOptions, same_paths: bool) {
    for config in CONFIGS {
        let m = model("latest", config);
        let single = run(m.clone(), o, |_, _, _| {});
        for count in [2, 3] {
            let (strategy, reduction) = (o.strategy.name(), o.reduction.name());
            let what = format!("latest/{config} {strategy} {reduction} N={count}");
            assert_same(&what, &single, &merged(&m, o, count), same_paths);
        }
    }
}

#[test]
fn bfs_parts_merged_are_the_single_run_with_its_shortest_counterexamples() {
    for reduction in REDUCTIONS {
        let o = opts(Strategy::Bfs, false, reduction);
        every_config_merges_to_the_single_run(&o, true);
        for profile in ["v1.18", "fixed"] {
            let m = model(profile, "default");
            let single = run(m.clone(), &o, |_, _, _| {});
            let what = format!("{profile}/default bfs {} N=3", reduction.name());
            assert_same(&what, &single, &merged(&m, &o, 3), true);
        }
    }
}

/// Under BFS without reduction a part makes its paths shortest inside its own share, not in the
/// whole model: some part's path is not the single run's (it is longer, or as long through a
/// later root of the cut), none is shorter, every path through the cut names its root, and
/// `merge` still picks the single run's. With reduction a part runs the single run's pass on
/// the whole unreduced model, so every part's path is the single run's and names no root.
#[test]
fn bfs_parts_without_reduction_stay_in_their_share_for_shortest_paths() {
    let path_of = |r: &Report, name: &str| {
        let p = r.properties.iter().find(|p| p.name == name).unwrap();
        p.path().map(|t| serde_json::to_value(t).unwrap())
    };
    let steps = |v: &Value| v["steps"].as_array().unwrap().len();
    let count = 3;
    let (mut local, mut differing) = (0, 0);
    for config in CONFIGS {
        let m = model("latest", config);
        let o = opts(Strategy::Bfs, false, Reduction::None);
        let single = run(m.clone(), &o, |_, _, _| {});
        let reports: Vec<Report> = (0..count).map(|i| part(&m, &o, i, count)).collect();
        for r in &reports {
            let info = r.partition.as_ref().unwrap();
            for p in r.properties.iter().filter(|p| p.path().is_some()) {
                let (theirs, ours) = (path_of(r, p.name).unwrap(), path_of(&single, p.name));
                let ours = ours.expect("a part finds only what the whole run finds");
                assert!(
                    steps(&theirs) >= steps(&ours),
                    "latest/{config} part {}: {} shorter than the single run's",
                    info.index,
                    p.name
                );
                if steps(&theirs) >= info.cut_depth {
                    assert!(
                        info.crossings.contains_key(p.name),
                        "latest/{config} part {}: {} goes through the cut",
                        info.index,
                        p.name
                    );
                    local += 1;
                }
                if theirs != ours {
                    differing += 1;
                }
            }
        }
        let what = format!("latest/{config} bfs none N={count}");
        assert_same(&what, &single, &merged(&m, &o, count), true);
    }
    println!("{local} part paths through the cut, {differing} not the single run's");
    assert!(
        local > 0 && differing > 0,
        "{local} local, {differing} differ"
    );
    let m = model("latest", "default");
    let o = opts(Strategy::Bfs, false, Reduction::Por);
    let single = run(m.clone(), &o, |_, _, _| {});
    for i in 0..count {
        let r = part(&m, &o, i, count);
        assert!(r.partition.as_ref().unwrap().crossings.is_empty());
        for p in r.properties.iter().filter(|p| p.path().is_some()) {
            assert_eq!(path_of(&r, p.name), path_of(&single, p.name), "{}", p.name);
        }
    }
}

#[test]
fn dfs_parts_merged_have_the_single_runs_verdicts() {
    for reduction in REDUCTIONS {
        let o = opts(Strategy::Dfs, false, reduction);
        every_config_merges_to_the_single_run(&o, false);
        let m = model("v1.18", "default");
        let o = opts(Strategy::Dfs, true, reduction);
        let single = run(m.clone(), &o, |_, _, _| {});
        let what = format!("v1.18/default dfs symmetry {} N=3", reduction.name());
        assert_same(&what, &single, &merged(&m, &o, 3), false);
    }
}

/// A part explores the graph the single run explores: reduced by default, so its unique states
/// are fewer than the unreduced graph's share of the same cut, and it says which reduction.
#[test]
fn parts_explore_the_reduced_graph_and_say_so() {
    let m = model("latest", "default");
    for (reduction, symmetry, named) in [
        (Reduction::Por, false, "por"),
        (Reduction::None, false, "none"),
        (Reduction::Por, true, "por-dispatchers"),
    ] {
        let o = opts(Strategy::Dfs, symmetry, reduction);
        let single = run(m.clone(), &o, |_, _, _| {});
        assert_eq!(single.reduction, named);
        let first = part(&m, &o, 0, 2);
        assert_eq!(
            first.reduction, named,
            "the part says the reduction it used"
        );
    }
    let whole = |reduction| {
        let o = opts(Strategy::Bfs, false, reduction);
        let parts: Vec<Report> = (0..2).map(|index| part(&m, &o, index, 2)).collect();
        let prefix = parts[0].partition.as_ref().unwrap().prefix_states;
        let below: usize = parts.iter().map(|r| r.unique_states - prefix).sum();
        (run(m.clone(), &o, |_, _, _| {}).unique_states, below)
    };
    let (por, por_parts) = whole(Reduction::Por);
    let (none, none_parts) = whole(Reduction::None);
    assert!(
        por < none,
        "the reduction cuts the single run: {por} vs {none}"
    );
    assert!(
        por_parts < none_parts,
        "and the parts: {por_parts} below the cut with por, {none_parts} without"
    );
}

/// The declared properties of a configuration (and a Rust one, through the library) are shared
/// like the built-ins: the merged verdicts and paths are the single run's.
#[test]
fn parts_with_user_defined_properties_merge_to_the_single_run() {
    let config = CheckConfig::load(POLICY).expect("the tutorial's configuration");
    let declared = TaintSys::new(Profile::latest(), config);
    assert!(!declared.custom.is_empty());
    let mut with_rust = declared.clone();
    with_rust
        .custom
        .add(
            "db-0-exists",
            true,
            Arc::new(|s: &SysState| s.api.pods.keys().any(|k| &*k.name == "db-0")),
        )
        .expect("a Rust property");
    for (what, m) in [("declared", &declared), ("declared and Rust", &with_rust)] {
        for reduction in REDUCTIONS {
            for strategy in [Strategy::Bfs, Strategy::Dfs] {
                let o = opts(strategy, false, reduction);
                let single = run(m.clone(), &o, |_, _, _| {});
                for count in [2, 3] {
                    let what = format!(
                        "policy ({what}) {} {} N={count}",
                        strategy.name(),
                        reduction.name()
                    );
                    let merged = merged(m, &o, count);
                    assert_same(&what, &single, &merged, strategy == Strategy::Bfs);
                }
            }
        }
    }
}

/// `merge` requires every part to report the same properties, and names the file and the
/// property that differ.
#[test]
fn merge_refuses_parts_that_report_different_properties() {
    let config = CheckConfig::load(POLICY).expect("the tutorial's configuration");
    let m = TaintSys::new(Profile::latest(), config);
    let o = RunOptions::default();
    let three = parts(&m, &o, 3);
    let props = |v: &Value| v["properties"].as_array().unwrap().clone();

    let mut lacking = three.clone();
    let mut ps = props(&lacking[1].1);
    ps.retain(|p| p["name"] != "daemons-stay");
    lacking[1].1["properties"] = Value::Array(ps);
    let err = partition::merge(&lacking).unwrap_err();
    assert_eq!(
        err,
        "part-1.json: properties: property \"daemons-stay\": Required value (the part in \
         part-0.json reports it)"
    );

    let mut extra = three.clone();
    let mut ps = props(&extra[2].1);
    let mut added = ps.last().unwrap().clone();
    added["name"] = "someone-elses".into();
    added["id"] = "someone-elses".into();
    ps.push(added);
    let at = ps.len() - 1;
    extra[2].1["properties"] = Value::Array(ps);
    let err = partition::merge(&extra).unwrap_err();
    assert_eq!(
        err,
        format!(
            "part-2.json: properties[{at}]: property \"someone-elses\" is not in the part in \
             part-0.json (not the same properties)"
        )
    );

    let mut other_kind = three;
    let mut ps = props(&other_kind[1].1);
    let i = ps
        .iter()
        .position(|p| p["name"] == "web-can-be-evicted")
        .unwrap();
    ps[i]["kind"] = "always".into();
    other_kind[1].1["properties"] = Value::Array(ps);
    let err = partition::merge(&other_kind).unwrap_err();
    assert_eq!(
        err,
        format!(
            "part-1.json: properties[{i}]: property \"web-can-be-evicted\": Invalid value: \
             always with id \"web-can-be-evicted\" (the part in part-0.json has sometimes with \
             id \"web-can-be-evicted\")"
        )
    );
}

#[test]
fn the_shares_split_the_cut_and_each_explores_less_than_the_whole() {
    let m = model("latest", "default");
    let single = run(m.clone(), &RunOptions::default(), |_, _, _| {});
    let count = 3;
    let reports: Vec<Report> = (0..count)
        .map(|index| part(&m, &RunOptions::default(), index, count))
        .collect();
    let info: Vec<_> = reports
        .iter()
        .map(|r| r.partition.clone().unwrap())
        .collect();
    assert!(info[0].cut_states >= partition::ROOTS_PER_PART * count);
    assert_eq!(
        info.iter().map(|p| p.roots).sum::<usize>(),
        info[0].cut_states,
        "the roots are dealt, each to one part"
    );
    for r in &reports {
        let p = r.partition.as_ref().unwrap();
        assert!(p.roots >= info[0].cut_states / count);
        assert!(
            r.unique_states < single.unique_states,
            "part {}: {} unique states, the whole run {}",
            p.index,
            r.unique_states,
            single.unique_states
        );
    }
}

#[test]
fn merge_refuses_an_incomplete_or_mixed_set_of_parts() {
    let m = model("latest", "default");
    let o = RunOptions::default();
    let three = parts(&m, &o, 3);
    let err = partition::merge(&three[..2]).unwrap_err();
    assert_eq!(err, "missing parts: 2/3");
    let twice = vec![three[0].clone(), three[0].clone(), three[1].clone()];
    let err = partition::merge(&twice).unwrap_err();
    assert!(err.contains("partition.index: Duplicate value: 0"), "{err}");
    let mut other = parts(&model("latest", "timer-vs-cancel"), &o, 3);
    other[2] = three[2].clone();
    let err = partition::merge(&other).unwrap_err();
    assert!(
        err.starts_with("part-2.json: config: Invalid value"),
        "{err}"
    );
    let mut unreduced = three.clone();
    unreduced[1] = parts(&m, &opts(Strategy::Bfs, false, Reduction::None), 3).swap_remove(1);
    let err = partition::merge(&unreduced).unwrap_err();
    assert_eq!(
        err,
        "part-1.json: reduction: Invalid value: \"none\" (the part in part-0.json has \"por\")"
    );
    let whole = serde_json::to_value(run(m, &o, |_, _, _| {})).unwrap();
    let err = partition::merge(&[("whole.json".into(), whole)]).unwrap_err();
    assert!(
        err.starts_with("whole.json: partition: Required value"),
        "{err}"
    );
}

#[test]
fn partition_parses_i_of_n() {
    assert_eq!(
        Partition::parse("2/3"),
        Ok(Partition { index: 2, count: 3 })
    );
    for bad in ["3/3", "0/0", "1", "a/2", "1/b", "-1/2"] {
        assert!(Partition::parse(bad).is_err(), "{bad}");
    }
}
