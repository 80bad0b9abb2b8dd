//! `specs/reproductions.json`: per cell (a property on a configuration), the scenario and
//! schedule that make it happen on a real controller, or why it cannot be made to from outside.

use crate::cmd::failure::Failure;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `specs/reproductions.json`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Catalogue {
    pub reproductions: Vec<Entry>,
}

/// How one cell (a property on a configuration) is made to happen on a real controller, or
/// why it cannot be, per named profile (`v1.18`, `latest`, or `all`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
// `report` reads only `reproduced_on`; `reproduce` (the `cluster` feature) reads the rest.
#[cfg_attr(not(feature = "cluster"), allow(dead_code))]
pub struct Entry {
    pub race: String,
    pub property: String,
    pub config: String,
    /// The releases (and `fixed`, for `--ours fixed`) whose real runs show the violation;
    /// tests/reproduce.rs holds every claim to a run, and `report` quotes them.
    #[serde(default)]
    pub reproduced_on: Vec<String>,
    #[serde(default)]
    pub scenario: Option<PathBuf>,
    #[serde(default)]
    pub schedule: Option<PathBuf>,
    #[serde(default)]
    pub steps: Option<String>,
    #[serde(default)]
    pub cannot: BTreeMap<String, String>,
}

impl Catalogue {
    /// The cell of `property` (its id) on configuration `config`.
    pub fn cell(&self, property: &str, config: &str) -> Option<&Entry> {
        self.reproductions
            .iter()
            .find(|e| e.property == property && e.config == config)
    }
}

/// Reads the catalogue; an error names the line and the field.
pub fn load(path: &Path) -> Result<Catalogue, Failure> {
    let text = crate::cmd::read_input(path)?;
    let mut de = serde_json::Deserializer::from_str(&text);
    serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let (line, field) = (e.inner().line(), e.path().to_string());
        Failure::input(format!(
            "{}:{line}: {field}: {}",
            path.display(),
            e.into_inner()
        ))
    })
}
