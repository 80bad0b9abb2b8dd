//! `taintcheck profiles [--kubernetes 1.x[.y]]`: the named profiles with the Kubernetes releases
//! and upstream commits they mirror and their switches; for one release, upstream's switches
//! there and how far each profile is from them. `--profile` takes only profile names: where no
//! profile pins a release's switches this says which differ instead of picking one.
//! Spec: specs/profiles.md ("Profiles and Kubernetes releases").

use super::failure::{Failure, Outcome};
use crate::cmd::output::out;
use clap::Args;
use std::fmt::Write;
use std::process::ExitCode;
use taintcheck_model::profile::{Profile, Release, PROVENANCE};

#[derive(Args)]
pub struct ProfilesArgs {
    /// A Kubernetes release (`1.31`, `v1.18.6`): upstream's switches in it and the switches in
    /// which each profile differs.
    #[arg(long, value_name = "VERSION")]
    kubernetes: Option<String>,
}

pub fn run(args: &ProfilesArgs) -> Outcome {
    let text = match &args.kubernetes {
        None => overview(),
        Some(version) => {
            let (minor, patch) = parse_version(version).ok_or_else(|| {
                Failure::usage(format!(
                    "--kubernetes: Invalid value: {version:?}: expected 1.MINOR or 1.MINOR.PATCH"
                ))
            })?;
            let rows = Release::for_version(minor, patch);
            if rows.is_empty() {
                return Err(Failure::usage(format!(
                    "--kubernetes: Unsupported value: {version:?}: no profile covers releases \
                     before 1.18"
                )));
            }
            release(version, &rows)
        }
    };
    out!("{text}");
    Ok(ExitCode::SUCCESS)
}

/// `1.31`, `v1.31` or `1.31.4` as (minor, patch).
fn parse_version(text: &str) -> Option<(u32, Option<u32>)> {
    let mut parts = text.strip_prefix('v').unwrap_or(text).split('.');
    if parts.next()? != "1" {
        return None;
    }
    let minor = parts.next()?.parse().ok()?;
    let patch = parts.next().map(str::parse).transpose().ok()?;
    parts.next().is_none().then_some((minor, patch))
}

fn named() -> Vec<Profile> {
    Profile::NAMES
        .iter()
        .filter_map(|n| Profile::by_name(n))
        .collect()
}

/// The profiles, their switches side by side, and every release range with its closest profile.
fn overview() -> String {
    let mut out = String::new();
    for p in &PROVENANCE {
        let _ = writeln!(out, "{:6}  Kubernetes {}", p.name, p.kubernetes);
        let _ = writeln!(out, "{:6}  commits {}", "", p.commits);
    }
    let profiles = named();
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
        "\nKubernetes releases (details: --kubernetes 1.MINOR):"
    );
    let rows = Release::all();
    let label = rows.iter().map(|r| r.label.len()).max().unwrap_or(0);
    for r in &rows {
        let _ = writeln!(out, "  {:label$}  {}", r.label, closest(&r.switches));
    }
    out
}

/// `= NAME` when a profile has exactly these switches, else the closest ones and how far.
fn closest(switches: &Profile) -> String {
    let distances: Vec<(usize, &str)> = named()
        .iter()
        .map(|p| (differences(switches, p).len(), p.name))
        .collect();
    let nearest = distances.iter().map(|d| d.0).min().unwrap_or(0);
    let names: Vec<&str> = distances
        .iter()
        .filter(|d| d.0 == nearest)
        .map(|d| d.1)
        .collect();
    match nearest {
        0 => format!("= {}", names.join(", ")),
        n => format!(
            "no profile; closest {} ({n} switch(es) differ)",
            names.join(" and ")
        ),
    }
}

/// The switches in which `profile` differs from upstream's `release`: (switch, spec id,
/// upstream's value, the profile's value).
fn differences(
    release: &Profile,
    profile: &Profile,
) -> Vec<(&'static str, &'static str, String, String)> {
    release
        .switches()
        .into_iter()
        .zip(profile.switches())
        .filter(|(r, p)| r.value != p.value)
        .map(|(r, p)| (r.name, r.spec, r.value, p.value))
        .collect()
}

/// One release: its range or ranges, upstream's switches there, and each profile's differences.
fn release(version: &str, rows: &[Release]) -> String {
    let mut out = String::new();
    if rows.len() > 1 {
        let _ = writeln!(
            out,
            "Kubernetes {version} is in one of {} ranges; the sources do not say which:",
            rows.len()
        );
    }
    for r in rows {
        let _ = writeln!(out, "Kubernetes {version}: {}", r.label);
        let _ = writeln!(out, "  sources: {}", r.sources);
        let mut profiles = named();
        profiles.sort_by_key(|p| differences(&r.switches, p).len());
        for p in &profiles {
            let diff = differences(&r.switches, p);
            if diff.is_empty() {
                let _ = writeln!(out, "  profile {}: the same switches", p.name);
                continue;
            }
            let _ = writeln!(
                out,
                "  profile {}: {} switch(es) differ:",
                p.name,
                diff.len()
            );
            for (name, spec, upstream, ours) in diff {
                let _ = writeln!(
                    out,
                    "    {name} ({spec}): upstream {upstream}, {} {ours}",
                    p.name
                );
            }
        }
    }
    out
}
