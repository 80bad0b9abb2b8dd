//! One module per subcommand: each parses its own arguments, calls the library and prints.

pub mod bench;
pub mod check;
pub mod conform;
pub mod expect;
pub mod explain;
pub mod explore;
pub mod import;
pub mod run;
pub mod validate;

use std::path::Path;
use std::process::ExitCode;
use taintcheck_model::scenario::{parse_scenario, Scenario};

/// Reads and parses a scenario file for `run` and `expect`; on failure prints the errors (file,
/// line, field path) and gives the exit code for bad input.
pub fn load_scenario(path: &Path) -> Result<Scenario, ExitCode> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| {
        eprintln!("{file}: {e}");
        ExitCode::from(2)
    })?;
    parse_scenario(&file, &text).map_err(|errors| {
        eprintln!("{errors}");
        ExitCode::from(2)
    })
}
