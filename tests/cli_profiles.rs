//! The profiles as the CLI shows them: `--version` names the Kubernetes releases and commits
//! each mirrors, every `--profile` takes only the profile names, and `taintcheck profiles`
//! answers "which profile for my release" without pretending where none fits.

mod cli_support;

use cli_support::{stderr, stdout, taintcheck};

#[test]
fn version_lists_each_profile_with_its_kubernetes_releases_and_commits() {
    let o = taintcheck(&["--version"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], concat!("taintcheck ", env!("CARGO_PKG_VERSION")));
    assert_eq!(lines[1], "profiles:");
    let profile_lines = &lines[2..];
    assert_eq!(profile_lines.len(), 3, "{text}");
    let expected = [
        ("v1.18", "Kubernetes 1.18.0", "99600aa1"),
        (
            "latest",
            "Kubernetes newest upstream (after 1.33",
            "5ce22905",
        ),
        ("fixed", "Kubernetes none", "commits none"),
    ];
    for (line, (name, versions, commit)) in profile_lines.iter().zip(expected) {
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words[0], name, "{line}");
        assert!(line.contains(versions), "{line}");
        assert!(line.contains(commit), "{line}");
    }
}

#[test]
fn every_profile_option_rejects_an_unknown_name_with_the_names() {
    let scenario = "specs/scenarios/t1-90794-forever-does-not-cancel.yaml";
    let commands: [&[&str]; 7] = [
        &["check"],
        &["explore"],
        &["run", scenario],
        &["expect", scenario],
        &["conform", "-"],
        &["bench", "runtime"],
        &["bench", "oracle"],
    ];
    for command in commands {
        let mut args = command.to_vec();
        args.extend(["--profile", "1.31"]);
        let o = taintcheck(&args);
        assert_eq!(o.status.code(), Some(2), "{command:?}: {}", stderr(&o));
        assert_eq!(stdout(&o), "", "{command:?}");
        let err = stderr(&o);
        assert!(
            err.starts_with("taintcheck: invalid value '1.31' for '--profile <PROFILE>'"),
            "{command:?}: {err}"
        );
        assert!(
            err.contains("[possible values: v1.18, latest, fixed]"),
            "{command:?}: {err}"
        );
    }
}

#[test]
fn profile_help_names_the_releases() {
    let o = taintcheck(&["run", "--help"]);
    let help = stdout(&o);
    assert!(help.contains("v1.18:  1.18.0 to the last"), "{help}");
    assert!(help.contains("latest: newest upstream"), "{help}");
}

#[test]
fn profiles_shows_switches_and_the_closest_profile_per_release() {
    let o = taintcheck(&["profiles"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>()
                == ["cancel_on_forever", "false", "true", "true", "PROFILE-1"]),
        "{text}"
    );
    let row = |label: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("  {label}  ")))
            .unwrap_or_else(|| panic!("no row {label:?} in\n{text}"))
            .to_owned()
    };
    assert!(row("1.18.0 to 1.18.x before #93814").ends_with("  = v1.18"));
    assert!(row("1.30 to 1.32")
        .ends_with("  no profile; closest v1.18 and latest (3 switch(es) differ)"));
    assert!(row("newest upstream (008b3652)").ends_with("  = latest"));
}

#[test]
fn kubernetes_1_31_is_told_which_switches_each_profile_gets_wrong() {
    let o = taintcheck(&["profiles", "--kubernetes", "1.31"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.starts_with("Kubernetes 1.31: 1.30 to 1.32\n"),
        "{text}"
    );
    assert!(
        !text.contains("the same switches"),
        "no profile is 1.31: {text}"
    );
    for line in [
        "  profile v1.18: 3 switch(es) differ:",
        "    cancel_on_forever (PROFILE-1): upstream true, v1.18 false",
        "    delete_sequence (PROFILE-5): upstream GetPatchDelete, v1.18 DeleteOnly",
        "  profile latest: 3 switch(es) differ:",
        "    completion (PROFILE-3): upstream Tombstone, latest Delete",
        "    cancel_flag (PROFILE-4): upstream Absent, latest BeforeStart",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing {line:?} in\n{text}"
        );
    }
}

#[test]
fn releases_the_sources_do_not_settle_show_every_candidate() {
    let o = taintcheck(&["profiles", "--kubernetes", "v1.18"]);
    let text = stdout(&o);
    assert!(
        text.starts_with("Kubernetes v1.18 is in one of 2 ranges"),
        "{text}"
    );
    let o = taintcheck(&["profiles", "--kubernetes", "1.18.6"]);
    let text = stdout(&o);
    assert!(
        text.contains("  profile v1.18: the same switches"),
        "{text}"
    );
    let o = taintcheck(&["profiles", "--kubernetes", "1.36"]);
    let text = stdout(&o);
    assert!(
        text.contains("  profile latest: the same switches"),
        "{text}"
    );
    assert!(
        text.contains("1.33 until the release with 4766d191"),
        "{text}"
    );
}

#[test]
fn profiles_rejects_a_release_no_profile_covers() {
    for (version, message) in [
        ("1.17", "taintcheck: --kubernetes: Unsupported value: \"1.17\": no profile covers releases before 1.18\n"),
        ("latest", "taintcheck: --kubernetes: Invalid value: \"latest\": expected 1.MINOR or 1.MINOR.PATCH\n"),
    ] {
        let o = taintcheck(&["profiles", "--kubernetes", version]);
        assert_eq!(o.status.code(), Some(2));
        assert_eq!(stderr(&o), message);
    }
}
