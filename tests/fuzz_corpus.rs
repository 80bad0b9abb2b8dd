//! The fuzz corpus as a regression suite: every file of `fuzz/corpus/<target>/` (seeds from
//! real inputs, and every input a fuzzer once crashed a reader with) goes through the same
//! target body `cargo fuzz` runs (fuzz/src/lib.rs, included here so there is one copy), on
//! stable, on every `cargo test`. fuzz/README.md says how to fuzz and add to the corpus.

#[path = "../fuzz/src/lib.rs"]
mod targets;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// One corpus directory and one `cargo fuzz` target per shared body, and nothing else: a
/// target added without a corpus (or a corpus left behind by a removed target) fails here.
#[test]
fn every_target_has_its_corpus_and_its_fuzz_target() {
    let mut targets: Vec<String> = targets::TARGETS
        .iter()
        .map(|(n, _)| n.to_string())
        .collect();
    targets.sort();
    assert_eq!(names_in(&fuzz_dir().join("corpus")), targets);
    let bins: Vec<String> = names_in(&fuzz_dir().join("fuzz_targets"))
        .iter()
        .map(|f| f.strip_suffix(".rs").expect("a Rust file").to_string())
        .collect();
    assert_eq!(bins, targets);
}

/// Every corpus file goes through its target without a broken contract; the failures are
/// collected so that one report names every file at fault.
#[test]
fn the_corpus_replays_through_every_target() {
    let mut failed = Vec::new();
    for (name, target) in targets::TARGETS {
        let dir = fuzz_dir().join("corpus").join(name);
        let files = names_in(&dir);
        assert!(
            files.len() >= 5,
            "{}: only {} seeds",
            dir.display(),
            files.len()
        );
        for file in files {
            let path = dir.join(&file);
            let data = std::fs::read(&path).unwrap();
            if catch_unwind(AssertUnwindSafe(|| target(&data))).is_err() {
                failed.push(path.display().to_string());
            }
        }
    }
    assert!(
        failed.is_empty(),
        "inputs that broke a reader:\n{}",
        failed.join("\n")
    );
}
