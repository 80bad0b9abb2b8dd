//! PROFILE-R3: the release profiles rest on upstream files whose SHA-256 `releases::PINNED`
//! records. This test recomputes them from the Go module cache (`go env GOMODCACHE`) for the
//! releases the cache holds, and fails naming the file and the release when one differs. The
//! ignored run (`cargo test --release --test provenance -- --ignored`) requires every pinned
//! release, downloading the missing ones first (`go mod download`, allowed: the Go module proxy).
//! Without Go or a module cache the test says it did not run; `TAINTCHECK_REQUIRE_GO=1` (CI)
//! makes that a failure.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;
use taintcheck_core::releases::{Pinned, PINNED};

/// `go env GOMODCACHE`, or why there is none.
fn module_cache() -> Result<PathBuf, String> {
    let out = Command::new("go")
        .args(["env", "GOMODCACHE"])
        .output()
        .map_err(|e| format!("go not found: {e}"))?;
    let dir = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || dir.is_empty() {
        return Err("go env GOMODCACHE gave no directory".into());
    }
    Ok(PathBuf::from(dir))
}

/// The cache, or the test's reason not to run (a failure under `TAINTCHECK_REQUIRE_GO=1`).
fn cache_or_skip() -> Option<PathBuf> {
    match module_cache() {
        Ok(dir) if dir.is_dir() => Some(dir),
        Ok(dir) => skip(&format!("no Go module cache at {}", dir.display())),
        Err(why) => skip(&why),
    }
}

fn skip(why: &str) -> Option<PathBuf> {
    assert!(
        std::env::var_os("TAINTCHECK_REQUIRE_GO").is_none(),
        "TAINTCHECK_REQUIRE_GO is set but the provenance check cannot run: {why}"
    );
    println!("provenance: NOT RUN: {why}");
    None
}

fn sha256(path: &Path) -> std::io::Result<String> {
    let bytes = std::fs::read(path)?;
    Ok(Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// What checking one pinned release found.
#[derive(Debug, PartialEq, Eq)]
enum Check {
    /// Every file's hash agrees.
    Same,
    /// A module of the release is not in the cache (named).
    Absent(String),
    /// The files that differ: `release path: recorded, found`.
    Differs(Vec<String>),
}

/// Recompute `pinned`'s hashes under `cache`.
fn check(cache: &Path, pinned: &Pinned) -> Check {
    let mut differs = Vec::new();
    for f in pinned.files {
        let dir = cache.join(f.module_dir(pinned.release));
        if !dir.is_dir() {
            return Check::Absent(f.module_dir(pinned.release));
        }
        let found = sha256(&dir.join(f.path)).unwrap_or_else(|e| format!("unreadable ({e})"));
        if found != f.sha256 {
            differs.push(format!(
                "Kubernetes {} {}/{}: recorded {}, found {found}",
                pinned.release,
                f.module_dir(pinned.release),
                f.path,
                f.sha256
            ));
        }
    }
    if differs.is_empty() {
        Check::Same
    } else {
        Check::Differs(differs)
    }
}

/// The releases the cache holds agree with their recorded hashes; the others are named as
/// skipped. At least one release is checked, else the test says it did not run.
#[test]
fn pinned_hashes_match_the_module_cache() {
    let Some(cache) = cache_or_skip() else {
        return;
    };
    let (mut checked, mut skipped, mut failures) = (vec![], vec![], vec![]);
    for pinned in PINNED {
        match check(&cache, pinned) {
            Check::Same => checked.push(pinned.release),
            Check::Absent(module) => {
                skipped.push(format!("{} ({module} not in the cache)", pinned.release))
            }
            Check::Differs(lines) => failures.extend(lines),
        }
    }
    println!(
        "provenance: checked {}: {}",
        checked.len(),
        checked.join(" ")
    );
    println!(
        "provenance: skipped {} (run `go mod download` or the ignored test): {}",
        skipped.len(),
        skipped.join(", ")
    );
    assert!(
        failures.is_empty(),
        "upstream files changed; read them again:\n{}",
        failures.join("\n")
    );
    if checked.is_empty() {
        skip("the module cache holds none of the pinned releases");
    }
}

/// Every pinned release, downloaded where missing: the whole provenance. Slow (a module of
/// ~100 MB per release) and needs the Go module proxy.
#[test]
#[ignore = "downloads every pinned release (go mod download)"]
fn every_pinned_release_matches() {
    let Some(cache) = cache_or_skip() else {
        return;
    };
    let mut failures = vec![];
    for pinned in PINNED {
        for f in pinned.files {
            let module = f.module_dir(pinned.release);
            if !cache.join(&module).is_dir() {
                let status = Command::new("go")
                    .args(["mod", "download", &module])
                    .current_dir(std::env::temp_dir())
                    .status()
                    .expect("go runs");
                assert!(status.success(), "go mod download {module}");
            }
        }
        match check(&cache, pinned) {
            Check::Same => println!("provenance: {} agrees", pinned.release),
            Check::Absent(module) => failures.push(format!("{}: {module} absent", pinned.release)),
            Check::Differs(lines) => failures.extend(lines),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// An altered hash is caught, and the failure names the release and the file.
#[test]
fn an_altered_hash_is_caught() {
    let Some(cache) = cache_or_skip() else {
        return;
    };
    let Some(pinned) = PINNED
        .iter()
        .rev()
        .find(|p| check(&cache, p) == Check::Same)
    else {
        skip("the module cache holds none of the pinned releases");
        return;
    };
    let mut files = pinned.files.to_vec();
    let altered = format!("{}0", &files[0].sha256[..63]);
    let altered = if altered == files[0].sha256 {
        format!("{}1", &files[0].sha256[..63])
    } else {
        altered
    };
    files[0].sha256 = Box::leak(altered.into_boxed_str());
    let files: &'static [_] = Box::leak(files.into_boxed_slice());
    let tampered = Pinned {
        release: pinned.release,
        files,
    };
    match check(&cache, &tampered) {
        Check::Differs(lines) => {
            assert_eq!(lines.len(), 1, "{lines:?}");
            assert!(lines[0].starts_with(&format!("Kubernetes {} ", pinned.release)));
            assert!(lines[0].contains(files[0].path), "{}", lines[0]);
        }
        other => panic!(
            "the altered hash of {} was not caught: {other:?}",
            pinned.release
        ),
    }
}
