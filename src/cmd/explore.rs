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
}

pub fn run(args: ExploreArgs) -> Outcome {
    let model = args.model.model()?;
    if args.addr.parse::<std::net::SocketAddr>().is_err() {
        return Err(Failure::usage(format!(
            "--addr: Invalid value: \"{}\": expected host:port",
            args.addr
        )));
    }
    eprintln!(
        "Explorer for profile {} on config {}: http://{}/",
        model.profile.name, model.config.name, args.addr
    );
    model.checker().serve(args.addr.as_str());
    Ok(ExitCode::SUCCESS)
}
