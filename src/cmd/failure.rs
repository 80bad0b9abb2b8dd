//! How a command fails (exit 2), in one style for every command: `taintcheck: message` for
//! arguments and files, `file:line: field.path: message` for bad input.

use std::fmt::Display;
use std::process::ExitCode;
use taintcheck_formats::manifest::Diagnostic;

/// Why a command stops with exit code 2.
#[derive(Debug)]
pub enum Failure {
    /// Arguments, or a file that cannot be read or written.
    Usage(String),
    /// Bad input: one or more lines, each already located (`file:line: field.path: message`,
    /// or `file: message` when no line applies).
    Input(String),
}

impl Failure {
    pub fn usage(message: impl Display) -> Failure {
        Failure::Usage(message.to_string())
    }

    pub fn input(message: impl Display) -> Failure {
        Failure::Input(message.to_string())
    }

    /// What stderr shows.
    pub fn text(&self) -> String {
        match self {
            Failure::Usage(m) => format!("taintcheck: {m}"),
            Failure::Input(m) => m.clone(),
        }
    }

    /// Print on stderr; the exit code for bad input and usage.
    pub fn report(&self) -> ExitCode {
        super::output::eprint(&format!("{}\n", self.text()));
        ExitCode::from(2)
    }
}

/// A command's outcome: its exit code (0 or 1), or why it could not run.
pub type Outcome = Result<ExitCode, Failure>;

/// A manifest problem as stderr shows it: located input errors as they are, a file that could
/// not be read as a usage error.
pub fn diagnostic_line(d: &Diagnostic) -> String {
    match d.line {
        Some(_) => d.to_string(),
        None => Failure::usage(d).text(),
    }
}
