//! The profiles as the CLI shows them (PROFILE-R1 .. PROFILE-R4): `--version` names the
//! Kubernetes releases each named profile has the switches of and lists the release profiles,
//! every `--profile` takes a name or a release (`--kubernetes` with a patch), `--feature-gates`
//! is refused as kube-controller-manager refuses it, and `taintcheck profiles` prints a
//! release's switches and the upstream files they were read from.

mod cli_support;

use cli_support::{stderr, stdout, taintcheck};
use taintcheck_core::releases::{Release, RELEASES};

#[test]
fn version_lists_each_profile_with_its_kubernetes_releases() {
    let o = taintcheck(&["--version"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], concat!("taintcheck ", env!("CARGO_PKG_VERSION")));
    assert_eq!(lines[1], "profiles:");
    assert_eq!(
        lines[2],
        "  v1.18   Kubernetes 1.18.0-1.18.8 with default gates"
    );
    assert_eq!(
        lines[3],
        "  latest  Kubernetes 1.35.0-1.35.6, 1.36.0-1.36.5, 1.37.0-1.37.2 with default gates"
    );
    assert!(
        lines[4].starts_with("  fixed   our corrected design"),
        "{text}"
    );
    let releases: Vec<&str> = RELEASES.iter().map(|r| r.name).collect();
    assert_eq!(lines[5], format!("releases: {}", releases.join(" ")));
    assert!(lines[5].contains(" 1.18 1.19 ") && lines[5].ends_with(" 1.36 1.37"));
}

#[test]
fn every_profile_option_rejects_an_unknown_release_naming_what_it_takes() {
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
        for (value, why) in [
            (
                "1.38",
                "no profile: the releases read are 1.18.0 to 1.37.2; ",
            ),
            (
                "1.31.15",
                "no profile: the releases read are 1.18.0 to 1.37.2; ",
            ),
            ("newest", ""),
        ] {
            let mut args = command.to_vec();
            args.extend(["--profile", value]);
            let o = taintcheck(&args);
            assert_eq!(o.status.code(), Some(2), "{command:?}: {}", stderr(&o));
            assert_eq!(stdout(&o), "", "{command:?}");
            let expected = format!(
                "taintcheck: invalid value '{value}' for '--profile <PROFILE>': {why}expected \
                 v1.18, latest, fixed or a Kubernetes release 1.18.0 to 1.37.2 (1.MINOR or \
                 1.MINOR.PATCH)"
            );
            assert!(
                stderr(&o).starts_with(&expected),
                "{command:?}: {}",
                stderr(&o)
            );
        }
    }
}

/// `--profile 1.31` and `--kubernetes 1.31.4` select the release profile wherever a profile is
/// taken; the output names it.
#[test]
fn a_release_profile_works_wherever_a_profile_does() {
    for selection in [["--profile", "1.31"], ["--kubernetes", "1.31.4"]] {
        let mut args = vec!["check", "--config", "timer-vs-cancel"];
        args.extend(selection);
        let o = taintcheck(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let text = stdout(&o);
        assert!(
            text.contains("profile 1.31, config timer-vs-cancel"),
            "{text}"
        );
        // 1.31 has N1 and N2 (EVICT-1, CANCEL-1 on timer-vs-cancel), as every release.
        assert!(
            text.lines()
                .any(|l| l.contains("EVICT-1") && l.contains("violated")),
            "{text}"
        );
    }
    let scenario = "specs/scenarios/t1-90794-forever-does-not-cancel.yaml";
    for command in [
        vec!["run", scenario, "--profile", "1.18.6"],
        vec!["expect", scenario, "--kubernetes", "1.26.4"],
        vec![
            "report",
            "EVICT-1",
            "--config",
            "timer-vs-cancel",
            "--profile",
            "1.34",
        ],
    ] {
        let o = taintcheck(&command);
        assert_ne!(o.status.code(), Some(2), "{command:?}: {}", stderr(&o));
    }
    let o = taintcheck(&[
        "report",
        "EVICT-1",
        "--config",
        "timer-vs-cancel",
        "--profile",
        "1.34",
    ]);
    assert!(
        stdout(&o).contains(
            "**Affected versions:** Kubernetes 1.33.0-1.33.13, 1.34.0-1.34.5 with default gates \
             (taintcheck profile `1.34`"
        ),
        "{}",
        stdout(&o)
    );
}

/// PROFILE-R4: a gate that differs from the release's default is a flag, named in the profile;
/// refused like kube-controller-manager refuses it.
#[test]
fn feature_gates_change_the_profile_or_are_refused() {
    let o = taintcheck(&[
        "profiles",
        "--kubernetes",
        "1.35",
        "--feature-gates",
        "TaintTolerationComparisonOperators=true",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.starts_with("profile 1.35,TaintTolerationComparisonOperators=true\n"),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>()
                == ["comparison_operators", "true", "PROFILE-11"]),
        "{text}"
    );
    for (args, message) in [
        (
            vec!["--kubernetes", "1.35", "--feature-gates", "NoSuchGate=true"],
            "taintcheck: invalid value 'NoSuchGate=true' for '--feature-gates <NAME=BOOL,...>': \
             unrecognized feature gate: NoSuchGate",
        ),
        (
            vec![
                "--kubernetes",
                "1.34",
                "--feature-gates",
                "TaintTolerationComparisonOperators=true",
            ],
            "taintcheck: --feature-gates: Kubernetes 1.34 (profile 1.34): feature gate \
             TaintTolerationComparisonOperators does not exist in this release",
        ),
        (
            vec![
                "--kubernetes",
                "1.31",
                "--feature-gates",
                "PodDisruptionConditions=false",
            ],
            "taintcheck: --feature-gates: Kubernetes 1.31 (profile 1.31): cannot set feature \
             gate PodDisruptionConditions to false, feature is locked to true",
        ),
        (
            vec![
                "--profile",
                "fixed",
                "--feature-gates",
                "TaintTolerationComparisonOperators=true",
            ],
            "taintcheck: --feature-gates: profile fixed is not a Kubernetes release",
        ),
    ] {
        let mut full = vec!["check", "--config", "timer-vs-cancel"];
        full.extend(args);
        let o = taintcheck(&full);
        assert_eq!(o.status.code(), Some(2), "{full:?}: {}", stderr(&o));
        assert!(stderr(&o).starts_with(message), "{full:?}: {}", stderr(&o));
    }
}

#[test]
fn profiles_lists_every_release_with_its_switch_set() {
    let o = taintcheck(&["profiles"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>()
                == [
                    "comparison_operators",
                    "false",
                    "false",
                    "true",
                    "PROFILE-11"
                ]),
        "{text}"
    );
    let row = |name: &str| {
        text.lines()
            .find(|l| l.split_whitespace().next() == Some(name) && l.starts_with("  "))
            .unwrap_or_else(|| panic!("no row {name:?} in\n{text}"))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(
        row("1.18.0-1.18.8"),
        "1.18.0-1.18.8 1.18.0-1.18.8 switches 1.18.0-1.18.8 (= v1.18)"
    );
    assert_eq!(
        row("1.31"),
        "1.31 1.31.0-1.31.14 switches 1.30-1.32; gates PodDisruptionConditions=true (locked), \
         SeparateTaintEvictionController=true"
    );
    assert_eq!(
        row("1.37"),
        "1.37 1.37.0-1.37.2 switches 1.35-1.37 (= latest); gates \
         SeparateTaintEvictionController=true (locked), TaintTolerationComparisonOperators=false"
    );
    for r in &RELEASES {
        row(r.name);
    }
}

/// PROFILE-R3: a release's profile, the releases sharing its switches, and the upstream files
/// it was read from with their SHA-256.
#[test]
fn kubernetes_1_34_2_prints_its_profile_releases_and_upstream_files() {
    let o = taintcheck(&["profiles", "--kubernetes", "1.34.2"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.starts_with(
            "profile 1.34\n  Kubernetes 1.34.0-1.34.5 (switch set 1.33-1.34); gates \
             SeparateTaintEvictionController=true (locked)\n  the same switches: Kubernetes \
             1.33.0-1.33.13, 1.34.0-1.34.5\n"
        ),
        "{text}"
    );
    for line in [
        "  completion             Delete               PROFILE-3",
        "  cancel_flag            Absent               PROFILE-4",
        "  Kubernetes 1.34.0",
        "  Kubernetes 1.34.5",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing {line:?} in\n{text}"
        );
    }
    let release = Release::parse("1.34.2").expect("a release");
    let mut files = 0;
    for pinned in release.pinned() {
        for f in pinned.files {
            let line = format!(
                "    {}  {}/{}",
                f.sha256,
                f.module_dir(pinned.release),
                f.path
            );
            assert!(
                text.lines().any(|l| l == line),
                "missing {line:?} in\n{text}"
            );
            files += 1;
        }
    }
    assert!(files >= 12, "{files} files");
    assert!(
        text.contains("k8s.io/api@v0.34.5/core/v1/toleration.go"),
        "{text}"
    );
}

#[test]
fn a_release_no_profile_covers_is_a_usage_error() {
    for version in ["1.17", "1.38", "1.37.3", "2.0", "1.x"] {
        let o = taintcheck(&["profiles", "--kubernetes", version]);
        assert_eq!(o.status.code(), Some(2), "{version}: {}", stderr(&o));
        assert!(
            stderr(&o).starts_with(&format!(
                "taintcheck: invalid value '{version}' for '--kubernetes <VERSION>'"
            )),
            "{version}: {}",
            stderr(&o)
        );
    }
}
