//! The runtime drives the core's one composition and reads no profile switch: no file of
//! `impl/src` reads a switch of `Profile` (every field but its name, taken from the core's
//! `profile.rs`, so that a new switch is covered at once) or calls the parts the core's
//! `Controller` composes (intake filters, sharding, the work queue, the handlers, the timed
//! queue, the work steps) or reads its internals (shards, workers, the works' phases). Each rule
//! is first shown to catch the core's own composition (or the model's reads), so a pattern that
//! matches nothing cannot pass vacuously.

use std::path::{Path, PathBuf};

/// The calls only a composition of the controller makes.
const COMPOSITION: &[&str] = &[
    "node_updated(",
    "pod_updated(",
    "shard_of(",
    "drain_first(",
    "worker_choices(",
    "WorkQueue",
    "TimedQueue",
    "TaintedNodes",
    "handlers::",
    "handle_pod_update(",
    "update_tainted_nodes(",
    "node_update_pod(",
    "process_pod_on_node(",
    "work::",
    "fire_timer(",
    "start_work(",
    ".add_work(",
    ".cancel_work(",
    ".complete(",
    "Arrivals",
];

/// The controller's internals, which the runtime watches only through the core's observation
/// API (`Controller::worker_status`, `Controller::finished_work`); the model reads them.
const INTERNALS: &[&str] = &[
    ".shards()",
    "Shard",
    "Worker::",
    "NodePhase",
    "timed_queue()",
    "WorkPhase",
    "driver::",
];

/// The switches of `Profile`: its public fields but the name, read from the core's source.
fn switches(workspace: &Path) -> Vec<String> {
    let source = read(&workspace.join("core/src/profile.rs"));
    let body = source
        .split("pub struct Profile {")
        .nth(1)
        .and_then(|rest| rest.split("\n}").next())
        .expect("core/src/profile.rs defines `pub struct Profile`");
    let fields: Vec<String> = body
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub ")?.split(':').next())
        .filter(|f| *f != "name")
        .map(|f| format!(".{f}"))
        .collect();
    assert!(
        fields.len() >= 10,
        "expected Profile's switches, found {fields:?}"
    );
    // Accessors that hand out the profile to read a switch from it.
    fields
        .into_iter()
        .chain([".profile()".to_string(), ".keeps_arrivals()".to_string()])
        .collect()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// Every `file:line: pattern` where code (comments aside) contains one of `patterns`.
fn hits(files: &[PathBuf], patterns: &[String]) -> Vec<String> {
    let mut found = Vec::new();
    for file in files {
        for (i, line) in read(file).lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for p in patterns.iter().filter(|p| code.contains(p.as_str())) {
                found.push(format!("{}:{}: {p}", file.display(), i + 1));
            }
        }
    }
    found
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("impl/ is inside the workspace")
        .to_path_buf()
}

#[test]
fn the_rules_catch_the_cores_own_composition() {
    let ws = workspace();
    let mut core = rust_files(&ws.join("core/src/controller"));
    core.extend(["handlers.rs", "work.rs"].map(|f| ws.join("core/src").join(f)));
    let composition: Vec<String> = COMPOSITION.iter().map(|p| p.to_string()).collect();
    assert!(
        hits(&core, &composition).len() >= 10,
        "the composition patterns no longer match the core's composition"
    );
    assert!(
        hits(&core, &switches(&ws)).len() >= 10,
        "the switch patterns no longer match the core's switch reads"
    );
    let internals: Vec<String> = INTERNALS.iter().map(|p| p.to_string()).collect();
    assert!(
        hits(&rust_files(&ws.join("model/src/check")), &internals).len() >= 10,
        "the internals patterns no longer match the model's reads of the controller's parts"
    );
}

#[test]
fn the_runtime_composes_nothing_and_reads_no_switch() {
    let ws = workspace();
    let runtime = rust_files(&ws.join("impl/src"));
    assert!(runtime.len() >= 10, "impl/src holds the runtime");
    let composition: Vec<String> = COMPOSITION.iter().map(|p| p.to_string()).collect();
    let internals: Vec<String> = INTERNALS.iter().map(|p| p.to_string()).collect();
    let found: Vec<String> = hits(&runtime, &composition)
        .into_iter()
        .chain(hits(&runtime, &internals))
        .chain(hits(&runtime, &switches(&ws)))
        .collect();
    assert!(
        found.is_empty(),
        "the runtime composes the controller, reads its internals or a profile switch:\n{}",
        found.join("\n")
    );
}
