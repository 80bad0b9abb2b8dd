//! `taintcheck explore`: stateright's Explorer on the model (blocks until interrupted). With
//! `--property NAME` it first finds the shortest counterexample of NAME, the same path `check`
//! prints ([`shortest::counterexamples`]), and prints the Explorer's URL of it; the page's
//! timeline then explains NAME first.

use super::check::ModelArgs;
use super::failure::{Failure, Outcome};
use super::output::outln;
use clap::Args;
use stateright::Model;
use std::net::{SocketAddr, TcpListener};
use std::process::ExitCode;
use taintcheck_model::check::properties::PropertyInfo;
use taintcheck_model::check::shortest;

#[derive(Args, Debug)]
pub struct ExploreArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Where the Explorer listens (port 0: a free port, printed).
    #[arg(long, default_value = "127.0.0.1:3000")]
    pub addr: String,
    /// Allow an `--addr` other than loopback: the Explorer has no authentication, and anyone
    /// who reaches it can make it explore (spend this machine's CPU and memory).
    #[arg(long)]
    pub allow_remote: bool,
    /// Open at the shortest counterexample of this `always` property (its spec id, `CANCEL-1`,
    /// or its full name as `check` prints it).
    #[arg(long)]
    pub property: Option<String>,
    /// "Run to completion" stops after about this many states, at least 1: the Explorer keeps
    /// every state it reaches in memory, and its page may be asked to search the whole model.
    #[arg(long, default_value_t = 1_000_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub target_states: u64,
}

/// The `always` property `arg` names, by spec id or full name: a built-in or one of the
/// model's user-defined properties.
fn property(arg: &str, catalogue: &[PropertyInfo]) -> Result<&'static str, Failure> {
    let found = catalogue.iter().find(|p| p.id == arg || p.name == arg);
    match found {
        Some(p) if p.always => Ok(p.name),
        Some(p) => Err(Failure::usage(format!(
            "--property: \"{arg}\" is a `sometimes` property ({}): it has examples, not \
             counterexamples; `taintcheck check` lists them",
            p.name
        ))),
        None => {
            let ids: Vec<String> = catalogue
                .iter()
                .filter(|p| p.always)
                .map(|p| format!("\"{}\"", p.id))
                .collect();
            Err(Failure::usage(format!(
                "--property: Unsupported value: \"{arg}\": supported values: {}",
                ids.join(", ")
            )))
        }
    }
}

/// The address to serve on, port 0 resolved to a free port; taken now so that a busy port is a
/// usage error rather than a panic inside the server.
fn listen_addr(addr: &str, allow_remote: bool) -> Result<SocketAddr, Failure> {
    let parsed: SocketAddr = addr.parse().map_err(|_| {
        Failure::usage(format!(
            "--addr: Invalid value: \"{addr}\": expected host:port"
        ))
    })?;
    if !parsed.ip().is_loopback() && !allow_remote {
        return Err(Failure::usage(format!(
            "--addr: Invalid value: \"{addr}\": not a loopback address; the Explorer has no \
             authentication (add --allow-remote to serve it there anyway)"
        )));
    }
    let listener = TcpListener::bind(parsed)
        .map_err(|e| Failure::usage(format!("--addr: cannot listen on {addr}: {e}")))?;
    listener
        .local_addr()
        .map_err(|e| Failure::usage(format!("--addr: {addr}: {e}")))
}

pub fn run(args: ExploreArgs) -> Outcome {
    let mut model = args.model.model()?;
    let catalogue = model.catalogue();
    let focus = args
        .property
        .as_deref()
        .map(|arg| property(arg, &catalogue))
        .transpose()?;
    let addr = listen_addr(&args.addr, args.allow_remote)?;
    model.focus = focus;
    let base = format!("http://{addr}/");
    let about = format!(
        "profile {} on config {}",
        model.profile.name, model.config.name
    );
    match focus {
        None => {
            eprintln!("Explorer for {about}:");
            outln!("{base}");
        }
        Some(name) => match shortest::counterexamples(&model, &[name]).remove(name) {
            Some(path) => {
                let steps = path.clone().into_actions().len();
                eprintln!("Shortest counterexample to \"{name}\" ({steps} steps), {about}:");
                outln!("{base}#/steps/{}", path.encode(&model));
            }
            None => {
                eprintln!(
                    "\"{name}\" holds for {about}: no counterexample; the Explorer starts at the \
                     initial state:"
                );
                outln!("{base}");
            }
        },
    }
    let target = usize::try_from(args.target_states).unwrap_or(usize::MAX);
    eprintln!("\"Run to completion\" stops after about {target} states (--target-states).");
    model.checker().target_state_count(target).serve(addr);
    Ok(ExitCode::SUCCESS)
}
