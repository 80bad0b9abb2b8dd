//! `taintcheck run`'s cost follows its operations and what it prints, never their square
//! (LIMIT-COST), measured without a clock: callgrind counts the process's instructions.
//!
//! * A taint added and removed in turn keeps the node small: the cost per operation stays flat
//!   from 500 to 2,000 operations.
//! * N taints added to one node make each operation read and print the node's whole taint list,
//!   as upstream reads it (kubectl's rewrite, `handleNodeUpdate`) and as the timeline shows it:
//!   N²/2 printed taints. The cost per printed taint stays flat from 250 to 500 operations.
//!
//! Needs valgrind; without it the tests say so and pass, unless
//! `TAINTCHECK_REQUIRE_VALGRIND=1` (set by `.ci/run`) makes a missing valgrind a failure.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("taintcheck-run-cost-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn valgrind_missing() -> bool {
    if Command::new("valgrind").arg("--version").output().is_ok() {
        return false;
    }
    assert!(
        std::env::var("TAINTCHECK_REQUIRE_VALGRIND").as_deref() != Ok("1"),
        "TAINTCHECK_REQUIRE_VALGRIND=1 but no valgrind on the PATH (apt-get install valgrind)"
    );
    eprintln!("valgrind is not installed: run's cost is not measured");
    true
}

/// A node, a pod tolerating every NoExecute taint, and `ops` (one operation a line, at i·10 ms).
fn scenario(name: &str, ops: impl Iterator<Item = String>) -> PathBuf {
    let mut s = String::from(
        "name: ops\nnodes: [{name: n1}]\npods:\n  - {name: p, node: n1, tolerations: \
         [{operator: Exists, effect: NoExecute}]}\nops:\n",
    );
    for (i, op) in ops.enumerate() {
        s.push_str(&format!("  - {{at: {}ms, taint: {op}}}\n", i * 10));
    }
    let path = dir().join(name);
    std::fs::write(&path, s).unwrap();
    path
}

/// The instructions of `taintcheck run FILE`, its output discarded.
fn instructions(file: &Path) -> f64 {
    let o = Command::new("valgrind")
        .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
        .arg(env!("CARGO_BIN_EXE_taintcheck"))
        .arg("run")
        .arg(file)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // `==PID== Collected : N`: the whole process's instructions.
    let collected = stderr(&o)
        .lines()
        .find_map(|l| {
            l.split_once("Collected : ")
                .map(|(_, n)| n.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no instruction count: {}", stderr(&o)));
    collected.parse().unwrap()
}

#[test]
fn a_taint_added_and_removed_in_turn_costs_the_same_per_operation() {
    if valgrind_missing() {
        return;
    }
    let per_op = |n: usize| {
        let ops = (0..n).map(|i| match i % 2 {
            0 => "n1 k=v:NoExecute".to_string(),
            _ => "n1 k:NoExecute-".to_string(),
        });
        instructions(&scenario(&format!("turns{n}.yaml"), ops)) / n as f64
    };
    let (small, large) = (per_op(500), per_op(2_000));
    println!("run: {small:.0} instructions per operation at 500, {large:.0} at 2,000");
    assert!(
        large <= 1.3 * small,
        "{small:.0} -> {large:.0} instructions per operation from 500 to 2,000 operations"
    );
}

#[test]
fn taints_piling_up_on_a_node_cost_the_same_per_printed_taint() {
    if valgrind_missing() {
        return;
    }
    let per_printed = |n: usize| {
        let ops = (0..n).map(|i| format!("n1 k{i}=v:NoExecute"));
        let printed = (n * (n + 1) / 2) as f64;
        instructions(&scenario(&format!("pile{n}.yaml"), ops)) / printed
    };
    let (small, large) = (per_printed(250), per_printed(500));
    println!("run: {small:.0} instructions per printed taint at 250 operations, {large:.0} at 500");
    // Quadratic in N is what is printed; a cost growing faster (a scan of the run's history per
    // operation) would double this from 250 to 500.
    assert!(
        large <= 1.3 * small,
        "{small:.0} -> {large:.0} instructions per printed taint from 250 to 500 operations"
    );
}
