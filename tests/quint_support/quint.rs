//! Running Quint (TypeScript backend, installed from `specs/quint/package-lock.json`): simulating
//! the modules of `profiles.qnt` into ITF traces (Quint → Rust), and asking whether a Quint
//! behaviour follows a given sequence of projections (Rust → Quint, `specs/quint/track.qnt`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use super::itf::Projection;

pub fn quint_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("specs/quint")
}

pub fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Installs Quint from the lock file when missing, once per test process: the tests of a binary
/// run in parallel, and two `npm ci` in one directory race on `node_modules` (ENOTEMPTY).
/// `Err` says why Quint cannot run.
pub fn ensure_quint(dir: &Path) -> Result<(), String> {
    static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();
    INSTALLED.get_or_init(|| install(dir)).clone()
}

fn install(dir: &Path) -> Result<(), String> {
    let ok = |cmd: &mut Command| cmd.output().map(|o| o.status.success()).unwrap_or(false);
    if !ok(Command::new("node").arg("--version")) {
        return Err("node is not installed".into());
    }
    if !dir.join("node_modules/.bin/quint").exists() {
        let out = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(dir)
            .output()
            .map_err(|e| format!("npm: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "`npm ci` in specs/quint failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    Ok(())
}

/// Simulates `module` and returns its traces (file contents).
pub fn simulate(dir: &Path, module: &str, out: &Path, traces: usize, steps: usize) -> Vec<String> {
    let pattern = out.join(format!("{module}_{{seq}}.itf.json"));
    let status = Command::new(dir.join("node_modules/.bin/quint"))
        .args(["run", "--backend", "typescript", "--main", module])
        .args(["--max-samples", &traces.to_string()])
        .args(["--n-traces", &traces.to_string()])
        .args(["--max-steps", &steps.to_string()])
        .arg("--out-itf")
        .arg(&pattern)
        .arg("profiles.qnt")
        .current_dir(dir)
        .output()
        .expect("runs quint");
    assert!(
        status.status.success(),
        "quint run {module} failed: {}{}",
        String::from_utf8_lossy(&status.stdout),
        String::from_utf8_lossy(&status.stderr)
    );
    read_dir(out, module)
}

/// Runs the `run …Test` definitions of `file` (`quint test`); `Err` holds Quint's report.
pub fn run_tests(dir: &Path, file: &str) -> Result<String, String> {
    let out = Command::new(dir.join("node_modules/.bin/quint"))
        .args(["test", "--backend", "typescript", file])
        .current_dir(dir)
        .output()
        .map_err(|e| format!("quint: {e}"))?;
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() {
        Ok(report)
    } else {
        Err(report)
    }
}

pub fn read_dir(dir: &Path, module: &str) -> Vec<String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("reads the ITF directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&format!("{module}_")) && n.ends_with(".itf.json"))
        })
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| std::fs::read_to_string(p).expect("reads a trace"))
        .collect()
}

/// Whether some Quint behaviour of `module` follows `track` (the projections of a Rust behaviour,
/// consecutive duplicates removed) to its end and, there, violates the Quint invariant
/// `property` (`None`: whatever holds there). Runs `quint run` on a copy of the specification in
/// `scratch` with a module `replay`: `module` with `TRACK` set, and `GUIDE` set to `guide` (the
/// Rust behaviour's steps: each state's projection and the name of the action reaching it) when
/// given; `Err` says what went wrong.
pub fn follows(
    dir: &Path,
    scratch: &Path,
    module: &str,
    track: &[Projection],
    guide: Option<&[(Projection, String)]>,
    property: Option<&str>,
    samples: usize,
) -> Result<bool, String> {
    std::fs::create_dir_all(scratch).map_err(|e| e.to_string())?;
    for entry in std::fs::read_dir(dir).map_err(|e| e.to_string())? {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.extension().is_some_and(|x| x == "qnt") {
            std::fs::copy(&path, scratch.join(path.file_name().expect("a file name")))
                .map_err(|e| e.to_string())?;
        }
    }
    let profiles = std::fs::read_to_string(dir.join("profiles.qnt")).map_err(|e| e.to_string())?;
    let start = profiles
        .find(&format!("module {module} {{"))
        .ok_or_else(|| format!("no module {module} in profiles.qnt"))?;
    let block = &profiles[start..];
    let block = &block[..block.find("\n}\n").ok_or("unterminated module")? + 1];
    let literal: Vec<String> = track.iter().map(Projection::to_quint).collect();
    let guide: Vec<String> = guide
        .unwrap_or_default()
        .iter()
        .map(|(p, label)| format!("{{ proj: {}, label: {label:?} }}", p.to_quint()))
        .collect();
    let reached = match property {
        Some(p) => format!("TRACK_END and not({p})"),
        None => "TRACK_END".to_string(),
    };
    let text = format!(
        "// Generated by tests/quint_replay.rs: {module} following a Rust behaviour.\n{}\n  val FOLLOWED = not({reached})\n}}\n",
        block
            .replacen(&format!("module {module} {{"), "module replay {", 1)
            .replacen(
                "TRACK = List()",
                &format!("TRACK = List(\n      {})", literal.join(",\n      ")),
                1
            )
            .replacen(
                "GUIDE = List()",
                &format!("GUIDE = List(\n      {})", guide.join(",\n      ")),
                1
            )
    );
    std::fs::write(scratch.join("replay.qnt"), text).map_err(|e| e.to_string())?;
    // Quint needs a few steps per projection change (deliveries, dispatch, worker phases) and
    // MODEL-INIT before the first.
    let steps = 40 + 8 * track.len();
    let out = Command::new(dir.join("node_modules/.bin/quint"))
        .args(["run", "--backend", "typescript", "--main", "replay"])
        .args(["--invariant", "FOLLOWED"])
        .args(["--max-samples", &samples.to_string()])
        .args(["--max-steps", &steps.to_string()])
        .arg("replay.qnt")
        .current_dir(scratch)
        .output()
        .map_err(|e| format!("quint: {e}"))?;
    let stdout = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if stdout.contains("[violation]") {
        Ok(true)
    } else if out.status.success() {
        Ok(false)
    } else {
        Err(format!("quint run failed: {stdout}"))
    }
}
