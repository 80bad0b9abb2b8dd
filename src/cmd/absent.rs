//! The real-cluster commands in a build without them. They need the kube-rs stack (kube,
//! tokio, rustls, hyper), most of a first build, so they are the `cluster` feature, off by
//! default: `check` and every command on models, scenarios and traces build without it. Each
//! absent command takes any arguments and says how to build it (exit 2).

use super::failure::{Failure, Outcome};
use clap::Args;

/// Whatever the command was given; unread.
#[derive(Args, Debug)]
pub struct Absent {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    args: Vec<String>,
}

/// The usage error of `taintcheck COMMAND` (`bench proxy`, ...) in this build.
pub fn run(command: &str) -> Outcome {
    Err(Failure::usage(format!(
        "`taintcheck {command}` talks to a real cluster, and this taintcheck was built without \
         the real-cluster commands (controller, proxy, record, reproduce, upstream, bench \
         proxy): build it with the `cluster` feature (`cargo install --path . --features \
         cluster`, or `cargo run --release --features cluster -- {command} ...`)"
    )))
}
