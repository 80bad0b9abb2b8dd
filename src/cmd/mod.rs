//! One module per subcommand: each parses its own arguments, calls the library and prints.
//! Shared arguments live in [`args`], the one error style in [`failure`].

#[cfg(not(feature = "cluster"))]
pub mod absent;
pub mod args;
pub mod bench;
pub mod catalogue;
pub mod check;
pub mod conform;
#[cfg(feature = "cluster")]
pub mod controller;
pub mod expect;
pub mod explain;
pub mod explore;
pub mod failure;
pub mod generate;
pub mod import;
pub mod merge;
pub mod minimize;
pub mod output;
pub mod profiles;
#[cfg(feature = "cluster")]
pub mod proxy;
#[cfg(feature = "cluster")]
pub mod record;
pub mod replay;
pub mod report;
#[cfg(feature = "cluster")]
pub mod reproduce;
pub mod run;
#[cfg(feature = "cluster")]
pub mod upstream;
pub mod validate;

use failure::Failure;
use std::path::Path;
use taintcheck_formats::limits;
use taintcheck_formats::scenario::{parse_scenario, Scenario};

/// Reads a whole input file through the bounded reader: a file that cannot be read is a usage
/// error (`taintcheck: FILE: cannot read file: …`), text that is not UTF-8 bad input at its line.
pub fn read_input(path: &Path) -> Result<String, Failure> {
    limits::read_file(path).map_err(|e| match e.line {
        Some(_) => Failure::input(e),
        None => Failure::usage(e),
    })
}

/// Reads and parses a scenario file for `run` and `expect`.
pub fn load_scenario(path: &Path) -> Result<Scenario, Failure> {
    let file = path.display().to_string();
    let text = read_input(path)?;
    parse_scenario(&file, &text).map_err(Failure::input)
}
