//! One module per subcommand: each parses its own arguments, calls the library and prints.

pub mod bench;
pub mod check;
pub mod explain;
pub mod explore;
pub mod run;
pub mod validate;
