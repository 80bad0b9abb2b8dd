//! `taintcheck explore`: stateright's Explorer on the model (blocks until interrupted).

use super::check::ModelArgs;
use super::failure::{Failure, Outcome};
use clap::Args;
use stateright::Model;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct ExploreArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Where the Explorer listens.
    #[arg(long, default_value = "127.0.0.1:3000")]
    pub addr: String,
    /// Allow an `--addr` other than loopback: the Explorer has no authentication, and anyone
    /// who reaches it can make it explore (spend this machine's CPU and memory).
    #[arg(long)]
    pub allow_remote: bool,
}

pub fn run(args: ExploreArgs) -> Outcome {
    let model = args.model.model()?;
    let Ok(addr) = args.addr.parse::<std::net::SocketAddr>() else {
        return Err(Failure::usage(format!(
            "--addr: Invalid value: \"{}\": expected host:port",
            args.addr
        )));
    };
    if !addr.ip().is_loopback() && !args.allow_remote {
        return Err(Failure::usage(format!(
            "--addr: Invalid value: \"{}\": not a loopback address; the Explorer has no \
             authentication (add --allow-remote to serve it there anyway)",
            args.addr
        )));
    }
    // stateright panics if it cannot listen: find out first (the port may be in use).
    drop(
        std::net::TcpListener::bind(addr)
            .map_err(|e| Failure::usage(format!("--addr {}: {e}", args.addr)))?,
    );
    eprintln!(
        "Explorer for profile {} on config {}: http://{}/",
        model.profile.name, model.config.name, args.addr
    );
    model.checker().serve(args.addr.as_str());
    Ok(ExitCode::SUCCESS)
}
