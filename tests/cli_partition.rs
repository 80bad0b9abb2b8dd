//! `check --partition I/N` and `taintcheck merge` through the binary (CHECK-6): the merged
//! verdicts and counterexamples are the single run's; usage errors exit 2.

mod cli_support;

use cli_support::{stderr, stdout, taintcheck};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

/// A fresh directory for one test's files.
fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("taintcheck-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temporary directory");
    d
}

fn json(o: &std::process::Output) -> Value {
    serde_json::from_str(&stdout(o)).expect("the output is JSON")
}

/// Runs the `count` parts of `config` (`check --partition I/N --json`) into files under `d`, and
/// `merge --json` on them: the files, and merge's output (exit 0).
fn split_and_merge(d: &Path, config: &str, count: usize) -> (Vec<String>, Output) {
    split_and_merge_with(d, config, count, &[])
}

/// [`split_and_merge`] with `extra` arguments to every part.
fn split_and_merge_with(
    d: &Path,
    config: &str,
    count: usize,
    extra: &[&str],
) -> (Vec<String>, Output) {
    let mut files = Vec::new();
    for i in 0..count {
        let part = format!("{i}/{count}");
        let mut args = vec!["check", "--config", config, "--partition", &part, "--json"];
        args.extend(extra);
        let o = taintcheck(&args);
        assert_eq!(o.status.code(), Some(0), "{part}: {}", stderr(&o));
        assert_eq!(json(&o)["partition"]["index"], i);
        let file = d.join(format!("part-{i}-of-{count}.json"));
        std::fs::write(&file, &o.stdout).unwrap();
        files.push(file.display().to_string());
    }
    let mut args = vec!["merge", "--json"];
    args.extend(files.iter().map(String::as_str));
    let merged = taintcheck(&args);
    assert_eq!(merged.status.code(), Some(0), "{}", stderr(&merged));
    (files, merged)
}

#[test]
fn three_parts_merged_are_the_single_run() {
    let d = dir("merge");
    let single = taintcheck(&["check", "--config", "timer-vs-cancel", "--json"]);
    assert_eq!(single.status.code(), Some(0), "{}", stderr(&single));
    let (files, merged) = split_and_merge(&d, "timer-vs-cancel", 3);
    let (single, merged_json) = (json(&single), json(&merged));
    assert_eq!(merged_json["parts"], 3);
    let props = |v: &Value| v["properties"].as_array().unwrap().clone();
    for (s, m) in props(&single).iter().zip(props(&merged_json).iter()) {
        assert_eq!(s["name"], m["name"]);
        assert_eq!(s["status"], m["status"], "{}", s["name"]);
        assert_eq!(
            s["counterexample"]["action_path"], m["counterexample"]["action_path"],
            "{}",
            s["name"]
        );
    }
    let mut gate = vec!["merge", "--gate"];
    gate.extend(files.iter().map(String::as_str));
    let text = taintcheck(&gate);
    assert_eq!(
        text.status.code(),
        Some(1),
        "timer-vs-cancel violates properties"
    );
    let out = stdout(&text);
    assert!(
        out.starts_with("merged 3 parts: profile latest, config timer-vs-cancel"),
        "{out}"
    );
    assert!(out.contains("Counterexample to"), "{out}");
    let missing = taintcheck(&["merge", &files[0], &files[2]]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        stderr(&missing).contains("missing parts: 1/3"),
        "{}",
        stderr(&missing)
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// Each part's report says the reduction it explored under.
#[test]
fn a_part_says_its_reduction() {
    for (extra, named) in [
        (&[][..], "por"),
        (&["--reduction", "none"][..], "none"),
        (&["--strategy", "dfs", "--symmetry"][..], "por-dispatchers"),
    ] {
        let mut args = vec![
            "check",
            "--config",
            "default",
            "--partition",
            "1/2",
            "--json",
        ];
        args.extend(extra);
        let o = taintcheck(&args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert_eq!(json(&o)["reduction"], named, "{args:?}");
    }
}

/// Without reduction, BFS parts make their paths shortest in their own shares and name the root
/// of the cut each goes through (`partition.crossings`); `merge` still gives the single run's
/// counterexamples.
#[test]
fn unreduced_bfs_parts_name_their_roots_and_merge_to_the_single_runs_paths() {
    let d = dir("merge-unreduced");
    let none = ["--reduction", "none"];
    let mut args = vec!["check", "--config", "default", "--json"];
    args.extend(none);
    let single = taintcheck(&args);
    assert_eq!(single.status.code(), Some(0), "{}", stderr(&single));
    let (files, merged) = split_and_merge_with(&d, "default", 3, &none);
    let crossings: usize = files
        .iter()
        .map(|f| {
            let part: Value = serde_json::from_slice(&std::fs::read(f).unwrap()).unwrap();
            part["partition"]["crossings"]
                .as_object()
                .map_or(0, |c| c.len())
        })
        .sum();
    assert!(crossings > 0, "some path goes through the cut");
    let (single, merged) = (json(&single), json(&merged));
    let props = |v: &Value| v["properties"].as_array().unwrap().clone();
    for (s, m) in props(&single).iter().zip(props(&merged).iter()) {
        assert_eq!(s["status"], m["status"], "{}", s["name"]);
        for path in ["counterexample", "example"] {
            assert_eq!(s[path], m[path], "{}'s {path}", s["name"]);
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// The tutorial's configuration with declared properties, split in 2 and 3 parts, merges to
/// the single run's verdicts and counterexamples; parts reporting different properties do not.
#[test]
fn parts_with_declared_properties_merge_to_the_single_run() {
    const POLICY: &str = "docs/tutorial/policy.yaml";
    let d = dir("merge-policy");
    let single = taintcheck(&["check", "--config", POLICY, "--json"]);
    assert_eq!(single.status.code(), Some(0), "{}", stderr(&single));
    let single = json(&single);
    let props = |v: &Value| v["properties"].as_array().unwrap().clone();
    for count in [2, 3] {
        let (files, merged) = split_and_merge(&d, POLICY, count);
        let merged = json(&merged);
        assert_eq!(merged["reduction"], single["reduction"]);
        let (s, m) = (props(&single), props(&merged));
        assert_eq!(s.len(), m.len(), "N={count}: every property is merged");
        assert!(m.iter().any(|p| p["name"] == "db-keeps-10m"));
        for (s, m) in s.iter().zip(&m) {
            assert_eq!(s["name"], m["name"]);
            assert_eq!(s["status"], m["status"], "N={count}: {}", s["name"]);
            for path in ["counterexample", "example"] {
                assert_eq!(
                    s[path]["action_path"], m[path]["action_path"],
                    "N={count}: {}'s {path}",
                    s["name"]
                );
            }
        }
        if count == 2 {
            let mut lacking: Value =
                serde_json::from_slice(&std::fs::read(&files[1]).unwrap()).unwrap();
            let mut ps = props(&lacking);
            ps.retain(|p| p["name"] != "daemons-stay");
            lacking["properties"] = Value::Array(ps);
            std::fs::write(&files[1], lacking.to_string()).unwrap();
            let o = taintcheck(&["merge", &files[0], &files[1]]);
            assert_eq!(o.status.code(), Some(2));
            let err = stderr(&o);
            assert!(
                err.contains(&format!(
                    "{}: properties: property \"daemons-stay\": Required value",
                    files[1]
                )),
                "{err}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn partition_usage_errors_exit_2() {
    for (args, message) in [
        (vec!["check", "--partition", "3/3"], "I: expected 0 to N-1"),
        (vec!["check", "--partition", "x"], "expected I/N"),
        (
            vec!["check", "--partition", "0/2", "--strategy", "simulation"],
            "--partition: needs --strategy bfs or dfs",
        ),
    ] {
        let o = taintcheck(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(message), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn merge_of_a_file_that_is_not_json_names_its_line() {
    let d = dir("merge-bad");
    let bad = d.join("part-0.json");
    std::fs::write(&bad, "{\n  \"profile\": \n").unwrap();
    let o = taintcheck(&["merge", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains(&format!("{}:3:", bad.display())), "{err}");
    let _ = std::fs::remove_dir_all(&d);
}
