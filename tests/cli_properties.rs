//! `taintcheck check` and `explore` with user-defined properties (specs/spec.md, PROP-1): reported
//! like the built-ins in every format, with `--symmetry` permuting only pods no claim tells apart
//! (PROP-SYM), and a configuration's mistakes located with exit 2.

mod cli_support;

use cli_support::{stderr, stdout, taintcheck};

const POLICY: &str = "docs/tutorial/policy.yaml";

#[test]
fn json_itf_and_junit_carry_user_properties() {
    let dir = std::env::temp_dir().join(format!("taintcheck-props-{}", std::process::id()));
    let itf = dir.join("itf");
    let junit = dir.join("check.xml");
    std::fs::create_dir_all(&dir).unwrap();
    let o = taintcheck(&[
        "check",
        "--config",
        POLICY,
        "--json",
        "--itf",
        itf.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let report: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    let db = report["properties"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == "db-keeps-10m")
        .expect("the user's property is reported");
    assert_eq!(db["kind"], "always");
    assert_eq!(db["status"], "violated");
    assert_eq!(db["counterexample"]["steps"].as_array().unwrap().len(), 17);
    assert!(itf.join("latest-policy-db-keeps-10m.itf.json").exists());
    assert!(itf
        .join("latest-policy-web-can-be-evicted.itf.json")
        .exists());
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("<testcase classname=\"taintcheck.latest.policy\" name=\"db-keeps-10m\">\n      <failure message=\"violated\""), "{xml}");
    std::fs::remove_dir_all(&dir).ok();
}

/// PROP-SYM: claims naming some pods split the pods the reduction may permute instead of
/// refusing `--symmetry`; the tutorial's policy names every pod's kind, so nothing is renamed,
/// and the run says so, with the verdicts of the run without it.
#[test]
fn symmetry_goes_with_claims_naming_pods_and_mistakes_are_located() {
    let verdicts = |o: &std::process::Output| -> Vec<String> {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .take_while(|l| !l.is_empty())
            .skip(2)
            .map(str::to_string)
            .collect()
    };
    let dfs = ["check", "--config", POLICY, "--strategy", "dfs"];
    let plain = taintcheck(&dfs);
    let o = taintcheck(&[&dfs[..], &["--symmetry"]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("\nSymmetry (PROP-SYM): permutes no pods (interchangeable within each set"),
        "{out}"
    );
    assert_eq!(verdicts(&o), verdicts(&plain));
    assert!(verdicts(&o).len() >= 15, "{out}");

    let dir = std::env::temp_dir().join(format!("taintcheck-props-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.yaml");
    std::fs::write(
        &bad,
        "nodes: [{name: n1}]\npods: [{name: p1, node: n1}]\nproperties:\n  - name: p1-early\n    always:\n      not_deleted_before: {pods: p1}\n  - name: p1-early\n    sometimes: {never_deleted: {}}\n",
    )
    .unwrap();
    let o = taintcheck(&["check", "--config", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let file = bad.display();
    assert_eq!(
        stderr(&o),
        format!(
            "{file}:6: properties[0].always.not_deleted_before.after: Required value\n\
             {file}:8: properties[1].sometimes: Invalid value: a safety claim is checked with \"always\"; \"sometimes\" takes deleted or event\n"
        )
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// PROP-SYM: claims about every pod go with `--symmetry`, on two nodes the reduction swaps (the
/// anchored claims' first sightings move with them); the verdicts are those without it.
#[test]
fn symmetry_checks_claims_about_every_pod() {
    let dir = std::env::temp_dir().join(format!("taintcheck-props-sym-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("all.yaml");
    std::fs::write(
        &config,
        "nodes: [{name: n1}, {name: n2}]\n\
         pods: [{name: a, node: n1}, {name: b, node: n2}]\n\
         taints: [k]\noperations: [add_taint]\nbudget: 2\nworkers: 1\n\
         properties:\n\
         \x20 - {name: none-deleted, always: {never_deleted: {}}}\n\
         \x20 - {name: not-at-once, always: {not_deleted_before: {taint: k, after: 1s}}}\n\
         \x20 - {name: not-before-taint, always: {not_deleted_before: {taint: k, after: 0s}}}\n\
         \x20 - {name: marked-once, always: {marked_at_most_once: {}}}\n\
         \x20 - {name: one-deleted, sometimes: {deleted: {pods: \"*\"}}}\n",
    )
    .unwrap();
    let statuses = |symmetry: bool| {
        let mut args = vec!["check", "--config", config.to_str().unwrap()];
        args.extend(["--strategy", "dfs", "--json"]);
        if symmetry {
            args.push("--symmetry");
        }
        let o = taintcheck(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let report: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
        assert_eq!(report["symmetry"], symmetry);
        report["properties"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p["id"].to_string(), p["status"].to_string()))
            .collect::<Vec<_>>()
    };
    let plain = statuses(false);
    for (id, status) in [
        ("none-deleted", "violated"),
        ("not-at-once", "violated"),
        ("not-before-taint", "holds"),
        ("marked-once", "holds"),
        ("one-deleted", "example_found"),
    ] {
        let line = (format!("{id:?}"), format!("{status:?}"));
        assert!(plain.contains(&line), "{line:?} in {plain:?}");
    }
    assert_eq!(statuses(true), plain);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn explore_refuses_a_sometimes_user_property() {
    let o = taintcheck(&[
        "explore",
        "--config",
        POLICY,
        "--property",
        "web-can-be-evicted",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("\"web-can-be-evicted\" is a `sometimes` property"),
        "{}",
        stderr(&o)
    );
}
