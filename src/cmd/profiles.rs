//! `taintcheck profiles [--kubernetes 1.x[.y]] [--feature-gates ...]`: the named profiles and
//! the Kubernetes releases each has the switches of, every release range with its switch set
//! and default gates; for one release or profile, its switches with their spec ids, the
//! releases that share them, and the upstream files (with their SHA-256) they were read from.
//! Spec: specs/profiles.md (PROFILE-R1 .. PROFILE-R4).

use super::args::{gates_parser, profile_parser, with_gates, GateSettings};
use super::failure::Outcome;
use crate::cmd::output::out;
use clap::Args;
use std::fmt::Write;
use std::process::ExitCode;
use taintcheck_core::profile::Profile;
use taintcheck_core::releases::{release_of, Release, RELEASES};

#[derive(Args)]
pub struct ProfilesArgs {
    /// A Kubernetes release (`1.31`, `v1.18.6`) or a profile name: its switches, the releases
    /// sharing them and the upstream files they were read from.
    #[arg(long, visible_alias = "profile", value_name = "VERSION", value_parser = profile_parser())]
    kubernetes: Option<Profile>,
    /// kube-controller-manager's gates where they differ from the release's defaults.
    #[arg(long, value_name = "NAME=BOOL,...", value_parser = gates_parser, requires = "kubernetes")]
    feature_gates: Option<GateSettings>,
}

pub fn run(args: &ProfilesArgs) -> Outcome {
    let text = match args.kubernetes {
        None => overview(),
        Some(profile) => {
            let gates = args.feature_gates.as_ref().map_or(&[][..], |g| &g.0[..]);
            one(&with_gates(profile, gates)?)
        }
    };
    out!("{text}");
    Ok(ExitCode::SUCCESS)
}

/// What a named profile is, in one line (also `--version`'s).
pub fn named_line(profile: &Profile) -> String {
    let releases: Vec<&str> = profile.releases().iter().map(|r| r.name).collect();
    match (profile.name, releases.is_empty()) {
        ("fixed", _) => "our corrected design (no release): latest plus the fixes".to_string(),
        (_, true) => "no release has these switches".to_string(),
        (_, false) => format!(
            "Kubernetes {} with default gates",
            releases
                .iter()
                .map(|name| release_of(name).expect("a range").span())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The named profiles, their switches side by side, and every release range.
fn overview() -> String {
    let mut out = String::new();
    let profiles: Vec<Profile> = Profile::NAMES
        .iter()
        .filter_map(|n| Profile::by_name(n))
        .collect();
    for p in &profiles {
        let _ = writeln!(out, "{:6}  {}", p.name, named_line(p));
    }
    let switches: Vec<_> = profiles.iter().map(Profile::switches).collect();
    let width = switches[0].iter().map(|s| s.name.len()).max().unwrap_or(0);
    let columns: Vec<usize> = switches
        .iter()
        .zip(&profiles)
        .map(|(s, p)| {
            s.iter()
                .map(|s| s.value.len())
                .chain([p.name.len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let _ = write!(out, "\n{:width$}", "SWITCH");
    for (p, w) in profiles.iter().zip(&columns) {
        let _ = write!(out, "  {:w$}", p.name);
    }
    let _ = writeln!(out, "  SPEC");
    for (i, s) in switches[0].iter().enumerate() {
        let _ = write!(out, "{:width$}", s.name);
        for (column, w) in switches.iter().zip(&columns) {
            let _ = write!(out, "  {:w$}", column[i].value);
        }
        let _ = writeln!(out, "  {}", s.spec);
    }
    let _ = writeln!(
        out,
        "\nKubernetes releases (--profile NAME; details: --kubernetes NAME):"
    );
    let name = RELEASES.iter().map(|r| r.name.len()).max().unwrap_or(0);
    for r in &RELEASES {
        let same = profiles
            .iter()
            .find(|p| p.switches() == r.profile().switches())
            .map_or(String::new(), |p| format!(" (= {})", p.name));
        let _ = writeln!(
            out,
            "  {:name$}  {:16}  switches {}{same}{}",
            r.name,
            r.span(),
            r.switch_set().label,
            gates(r)
        );
    }
    out
}

/// `; gates PodDisruptionConditions=true (locked)`: the release's gates that a profile reads.
fn gates(r: &Release) -> String {
    if r.gates.is_empty() {
        return String::new();
    }
    let gates: Vec<String> = r
        .gates
        .iter()
        .map(|g| {
            let locked = if g.locked { " (locked)" } else { "" };
            format!("{}={}{locked}", g.gate.name(), g.default)
        })
        .collect();
    format!("; gates {}", gates.join(", "))
}

/// One profile: its switches, its releases, and for a release profile the files it was read
/// from with their hashes.
fn one(profile: &Profile) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "profile {}", profile.name);
    // `v1.18` names a profile, not the minor 1.18.
    let range = match profile.name {
        name if Profile::NAMES.contains(&name) => None,
        name => release_of(name),
    };
    match range {
        Some(r) => {
            let _ = writeln!(
                out,
                "  Kubernetes {} (switch set {}){}",
                r.span(),
                r.switch_set().label,
                gates(r)
            );
        }
        None => {
            let _ = writeln!(out, "  {}", named_line(profile));
        }
    }
    let shared: Vec<String> = profile.releases().iter().map(|r| r.span()).collect();
    if !shared.is_empty() {
        let _ = writeln!(out, "  the same switches: Kubernetes {}", shared.join(", "));
    }
    let _ = writeln!(out, "\nswitches:");
    for s in profile.switches() {
        let _ = writeln!(out, "  {:22} {:20} {}", s.name, s.value, s.spec);
    }
    let ranges: Vec<&Release> = match range {
        Some(r) => vec![r],
        None => profile.releases(),
    };
    let mut first = true;
    for r in ranges {
        for pinned in r.pinned() {
            if first {
                let _ = writeln!(out, "\nread from (Go module cache, SHA-256):");
                first = false;
            }
            let _ = writeln!(out, "  Kubernetes {}", pinned.release);
            for f in pinned.files {
                let _ = writeln!(
                    out,
                    "    {}  {}/{}",
                    f.sha256,
                    f.module_dir(pinned.release),
                    f.path
                );
            }
        }
    }
    out
}
