//! Running the built `taintcheck` binary from the repository root, for the `cli_*` tests.

use std::process::{Command, Output};

pub fn taintcheck(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_taintcheck"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the taintcheck binary runs")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
