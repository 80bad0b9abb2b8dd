//! Scale-out (CHECK-6): the N shares of `check --partition I/N`, merged, give the single run's
//! verdicts, and BFS's counterexamples are the single run's (shortest in the whole model).

use serde_json::Value;
use taintcheck_model::check::config::CheckConfig;
use taintcheck_model::check::partition::{self, Merged, Partition};
use taintcheck_model::check::run::{run, Report, RunOptions, Strategy};
use taintcheck_model::check::TaintSys;
use taintcheck_model::profile::Profile;

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

fn opts(strategy: Strategy, symmetry: bool) -> RunOptions {
    RunOptions {
        strategy,
        symmetry,
        ..RunOptions::default()
    }
}

/// The N parts' reports, as `check --partition I/N --json` writes them.
fn parts(model: &TaintSys, opts: &RunOptions, count: usize) -> Vec<(String, Value)> {
    (0..count)
        .map(|index| {
            let r = partition::run(
                model.clone(),
                opts,
                Partition { index, count },
                |_, _, _| {},
            );
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
    for (s, p) in single.properties.iter().zip(&m.properties) {
        assert_eq!(s.name, p.name);
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

#[test]
fn bfs_parts_merged_are_the_single_run_with_its_shortest_counterexamples() {
    for config in CONFIGS {
        let m = model("latest", config);
        let single = run(m.clone(), &RunOptions::default(), |_, _, _| {});
        for count in [2, 3] {
            let what = format!("latest/{config} bfs N={count}");
            assert_same(
                &what,
                &single,
                &merged(&m, &RunOptions::default(), count),
                true,
            );
        }
    }
    for profile in ["v1.18", "fixed"] {
        let m = model(profile, "default");
        let single = run(m.clone(), &RunOptions::default(), |_, _, _| {});
        let what = format!("{profile}/default bfs N=3");
        assert_same(&what, &single, &merged(&m, &RunOptions::default(), 3), true);
    }
}

#[test]
fn dfs_parts_merged_have_the_single_runs_verdicts() {
    for config in CONFIGS {
        let m = model("latest", config);
        let o = opts(Strategy::Dfs, false);
        let single = run(m.clone(), &o, |_, _, _| {});
        for count in [2, 3] {
            let what = format!("latest/{config} dfs N={count}");
            assert_same(&what, &single, &merged(&m, &o, count), false);
        }
    }
    let m = model("v1.18", "default");
    let o = opts(Strategy::Dfs, true);
    let single = run(m.clone(), &o, |_, _, _| {});
    assert_same(
        "v1.18/default dfs symmetry N=3",
        &single,
        &merged(&m, &o, 3),
        false,
    );
}

#[test]
fn the_shares_split_the_cut_and_each_explores_less_than_the_whole() {
    let m = model("latest", "default");
    let single = run(m.clone(), &RunOptions::default(), |_, _, _| {});
    let count = 3;
    let reports: Vec<Report> = (0..count)
        .map(|index| {
            partition::run(
                m.clone(),
                &RunOptions::default(),
                Partition { index, count },
                |_, _, _| {},
            )
        })
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
