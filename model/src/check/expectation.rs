//! `check --expect FILE`: a verdict set a run must reproduce exactly. The file is a YAML (or
//! JSON) mapping from property (spec id such as `EVICT-1`, or the full name) to `holds`,
//! `violated`, `example-found`, `no-example` or `not-applicable`; a property it does not list is
//! expected to hold (`always`) or to have an example (`sometimes`), or to be not applicable (a
//! `sometimes` property the configuration cannot exemplify). `no-example` is met by a
//! `not_applicable` verdict too (that property has no example either); `not-applicable` only by
//! that verdict. So an upstream profile's file lists its known races and nothing else.
//! Spec: CHECK-1.

use super::properties::{PropertyInfo, PROPERTIES};
use super::run::{Report, Status};
use saphyr::{Scalar, YamlData};
use taintcheck_formats::field::FieldPath;
use taintcheck_formats::yaml::{self, Error, Errors, Node};

/// The verdicts a file expects, one per property of the model's catalogue (the built-ins in
/// [`PROPERTIES`] order, then the user-defined ones).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expectation(Vec<(PropertyInfo, Status, bool)>);

/// The verdict names a file may use, and their statuses.
const VERDICTS: [(&str, Status); 5] = [
    ("holds", Status::Holds),
    ("violated", Status::Violated),
    ("example-found", Status::ExampleFound),
    ("no-example", Status::NoExample),
    ("not-applicable", Status::NotApplicable),
];

impl Expectation {
    /// Parses the file `file` holding `text`, about the built-in properties.
    pub fn parse(file: &str, text: &str) -> Result<Expectation, Errors> {
        Expectation::parse_for(file, text, PROPERTIES)
    }

    /// Parses the file `file` holding `text`, about the properties of `catalogue`
    /// ([`TaintSys::catalogue`](super::TaintSys::catalogue)).
    pub fn parse_for(
        file: &str,
        text: &str,
        catalogue: &[PropertyInfo],
    ) -> Result<Expectation, Errors> {
        let doc = yaml::load_one(file, text)?;
        let error = |node: &Node, field: FieldPath, message: String| Error {
            file: file.to_owned(),
            line: Some(node.span.start.line()),
            field,
            message,
        };
        let YamlData::Mapping(entries) = &doc.data else {
            let message = "expected a mapping from property to verdict".to_owned();
            return Err(Errors(vec![error(&doc, FieldPath::root(), message)]));
        };
        let mut statuses: Vec<(PropertyInfo, Status, bool)> = catalogue
            .iter()
            .map(|p| (*p, Status::of(p.always, !p.always, true), false))
            .collect();
        let mut errors = Vec::new();
        for (k, v) in entries {
            let key = scalar(k);
            let field = FieldPath::new(&key);
            let Some(i) = catalogue.iter().position(|p| p.id == key || p.name == key) else {
                let ids: Vec<String> = catalogue.iter().map(|p| format!("\"{}\"", p.id)).collect();
                let message = format!(
                    "Unsupported value: \"{key}\": supported values: {}",
                    ids.join(", ")
                );
                errors.push(error(k, FieldPath::root(), message));
                continue;
            };
            let value = scalar(v);
            let Some(&(_, status)) = VERDICTS
                .iter()
                .find(|(name, _)| *name == value || name.replace('-', "_") == value)
            else {
                let names: Vec<String> = VERDICTS.iter().map(|(n, _)| format!("\"{n}\"")).collect();
                let message = format!(
                    "Unsupported value: \"{value}\": supported values: {}",
                    names.join(", ")
                );
                errors.push(error(v, field, message));
                continue;
            };
            let property = &catalogue[i];
            if kind_of(status) != property.always {
                let message = format!(
                    "Invalid value: \"{value}\": {} is a `{}` property",
                    property.id,
                    if property.always {
                        "always"
                    } else {
                        "sometimes"
                    }
                );
                errors.push(error(v, field, message));
                continue;
            }
            statuses[i].1 = status;
            statuses[i].2 = true;
        }
        if errors.is_empty() {
            Ok(Expectation(statuses))
        } else {
            Err(Errors(errors))
        }
    }

    /// Every property whose verdict in `report` differs from the expected one, as a line
    /// `ID: expected X, got Y`.
    pub fn differences(&self, report: &Report) -> Vec<String> {
        self.0
            .iter()
            .filter_map(|(p, expected, _)| {
                let got = report.status(p.name)?;
                (!self.met(p.name, got)?).then(|| {
                    format!(
                        "{}: expected {}, got {}",
                        p.id,
                        verdict_name(*expected),
                        report.verdict_text(got)
                    )
                })
            })
            .collect()
    }

    /// The expected verdict of `p`, one of the properties the file was read for.
    pub fn of(&self, p: &PropertyInfo) -> Status {
        self.of_name(p.name)
            .expect("one of the catalogue's properties")
    }

    /// The expected verdict of the property named `name`, if the file was read for it.
    pub fn of_name(&self, name: &str) -> Option<Status> {
        self.0
            .iter()
            .find(|(p, _, _)| p.name == name)
            .map(|(_, s, _)| *s)
    }

    /// Whether the verdict `got` of the property named `name` meets the file (`None`: not read
    /// for it). A `not_applicable` verdict meets an unlisted `sometimes` property and
    /// `no-example`.
    pub fn met(&self, name: &str, got: Status) -> Option<bool> {
        let (_, expected, listed) = self.0.iter().find(|(p, _, _)| p.name == name)?;
        Some(
            got == *expected
                || (got == Status::NotApplicable
                    && (*expected == Status::NoExample
                        || (!listed && *expected == Status::ExampleFound))),
        )
    }
}

/// The file's name of a complete run's verdict.
fn verdict_name(s: Status) -> &'static str {
    VERDICTS
        .iter()
        .find(|(_, v)| *v == s)
        .map_or(s.as_str(), |(n, _)| n)
}

/// Whether `s` is a verdict of an `always` property.
fn kind_of(s: Status) -> bool {
    matches!(s, Status::Holds | Status::Violated | Status::NotRefuted)
}

fn scalar(n: &Node) -> String {
    match &n.data {
        YamlData::Value(Scalar::String(s)) => s.to_string(),
        YamlData::Value(Scalar::Integer(i)) => i.to_string(),
        YamlData::Value(Scalar::Boolean(b)) => b.to_string(),
        _ => String::new(),
    }
}
