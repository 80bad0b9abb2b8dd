//! Taints as text: `kubectl taint` arguments and upstream `Taint.ToString` (spec: TAINT-1..4).
//!
//! * [`parse_specs`]: kubectl's `parseTaints` (`staging/src/k8s.io/kubectl/pkg/cmd/taint/utils.go`):
//!   `key=value:Effect` and `key:Effect` add a taint, `key:Effect-` removes one, `key-` removes
//!   every effect of a key. Errors use kubectl's wording.
//! * [`reorganize`]: kubectl's `reorganizeTaints`, the node's new taint list.
//! * `Display for Taint`: `Taint.ToString` (`staging/src/k8s.io/api/core/v1/taint.go`), whose four
//!   forms [`parse_display`] reads back.

use crate::field::go_quote;
use crate::validate::{label_key_errors, label_value_errors};
use std::collections::HashSet;
use taintcheck_core::api::{Name, Taint, TaintEffect};

/// One `kubectl taint` argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TaintSpec {
    /// `key=value:Effect` or `key:Effect`.
    Add(Taint),
    /// `key:Effect-` (one effect) or `key-` (`effect: None`, every effect of the key).
    Remove {
        /// The key whose taints go.
        key: Name,
        /// The one effect removed; `None`: every effect of the key.
        effect: Option<TaintEffect>,
    },
}

/// A `kubectl taint` argument kubectl would reject; the message is kubectl's.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TaintSyntaxError(pub String);

/// kubectl `parseTaints`: the taints to add and to remove, in argument order. Adding needs an
/// effect, and two added taints may not share key and effect. Spec: TAINT-1, TAINT-2.
pub fn parse_specs<S: AsRef<str>>(specs: &[S]) -> Result<Vec<TaintSpec>, TaintSyntaxError> {
    let mut out: Vec<TaintSpec> = Vec::with_capacity(specs.len());
    for spec in specs {
        let spec = spec.as_ref();
        if let Some(body) = spec.strip_suffix('-') {
            let (key, _, effect) = parse_taint(body)?;
            out.push(TaintSpec::Remove {
                key: key.into(),
                effect: effect.map(TaintEffect::parse),
            });
            continue;
        }
        let (key, value, effect) = parse_taint(spec)?;
        let Some(effect) = effect else {
            return Err(TaintSyntaxError(format!("invalid taint spec: {spec}")));
        };
        let taint = Taint::new(key, value, TaintEffect::parse(effect));
        let duplicate = out
            .iter()
            .any(|s| matches!(s, TaintSpec::Add(t) if t.same_identity(&taint)));
        if duplicate {
            return Err(TaintSyntaxError(format!(
                "duplicated taints with the same key and effect: {{{} {} {} <nil>}}",
                taint.key, taint.value, taint.effect
            )));
        }
        out.push(TaintSpec::Add(taint));
    }
    Ok(out)
}

/// One argument: `spec` or, for a removal, `spec` without its trailing `-`.
pub fn parse_spec(spec: &str) -> Result<TaintSpec, TaintSyntaxError> {
    parse_specs(&[spec]).map(|mut v| v.remove(0))
}

/// kubectl `parseTaint`: `key`, `key:effect` or `key=value:effect` → (key, value, effect).
fn parse_taint(st: &str) -> Result<(&str, &str, Option<&str>), TaintSyntaxError> {
    let invalid = || TaintSyntaxError(format!("invalid taint spec: {st}"));
    let parts: Vec<&str> = st.split(':').collect();
    let (key, value, effect) = match parts.as_slice() {
        [key] => (*key, "", None),
        [kv, effect] => {
            if !["NoSchedule", "PreferNoSchedule", "NoExecute"].contains(effect) {
                return Err(TaintSyntaxError(format!(
                    "invalid taint effect: {effect}, unsupported taint effect"
                )));
            }
            let kv: Vec<&str> = kv.split('=').collect();
            let (key, value) = match kv.as_slice() {
                [key] => (*key, ""),
                [key, value] => {
                    let errs = label_value_errors(value);
                    if !errs.is_empty() {
                        return Err(TaintSyntaxError(format!(
                            "invalid taint spec: {st}, {}",
                            errs.join("; ")
                        )));
                    }
                    (*key, *value)
                }
                _ => return Err(invalid()),
            };
            (key, value, Some(*effect))
        }
        _ => return Err(invalid()),
    };
    let errs = label_key_errors(key);
    if !errs.is_empty() {
        return Err(TaintSyntaxError(format!(
            "invalid taint spec: {st}, {}",
            errs.join("; ")
        )));
    }
    Ok((key, value, effect))
}

/// How `kubectl taint` describes what it did to a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    /// Taints added, none removed (`node/n1 tainted`).
    Tainted,
    /// Nothing added (`node/n1 untainted`).
    Untainted,
    /// Taints both added and removed, or `--overwrite` given (`node/n1 modified`).
    Modified,
}

/// kubectl `reorganizeTaints`: the added taints first (in argument order), then the node's old
/// taints not replaced by one of them, minus the removed ones. Removals that match nothing are
/// reported as `taint "…" not found`. Spec: TAINT-3.
pub fn reorganize(
    old: &[Taint],
    specs: &[TaintSpec],
    overwrite: bool,
) -> (Operation, Vec<Taint>, Vec<String>) {
    let mut taints: Vec<Taint> = specs
        .iter()
        .filter_map(|s| match s {
            TaintSpec::Add(t) => Some(t.clone()),
            TaintSpec::Remove { .. } => None,
        })
        .collect();
    // kubectl scans the list built so far for each old taint; a set of the identities (key,
    // effect: `MatchTaint`) in it keeps the same first-wins outcome linear in the taints.
    let mut seen: HashSet<(&str, &TaintEffect)> = specs
        .iter()
        .filter_map(|s| match s {
            TaintSpec::Add(t) => Some((&*t.key, &t.effect)),
            TaintSpec::Remove { .. } => None,
        })
        .collect();
    for t in old {
        if seen.insert((&*t.key, &t.effect)) {
            taints.push(t.clone());
        }
    }
    let added = old.len() != taints.len();
    let mut errors = Vec::new();
    let mut removed = false;
    for spec in specs {
        let TaintSpec::Remove { key, effect } = spec else {
            continue;
        };
        let before = taints.len();
        taints.retain(|t| !(t.key == *key && effect.as_ref().is_none_or(|e| *e == t.effect)));
        removed = taints.len() != before;
        if !removed {
            let shown = Taint::new(
                key,
                "",
                effect.clone().unwrap_or(TaintEffect::Other("".into())),
            );
            errors.push(format!("taint {} not found", go_quote(&shown.to_string())));
        }
    }
    let operation = if (added && removed) || overwrite {
        Operation::Modified
    } else if added {
        Operation::Tainted
    } else {
        Operation::Untainted
    };
    (operation, taints, errors)
}

/// kubectl `checkIfTaintsAlreadyExists`: the keys of `to_add` the node already has with the same
/// effect, comma-separated (kubectl refuses these without `--overwrite`).
pub fn already_existing(old: &[Taint], to_add: &[Taint]) -> String {
    let keys: Vec<&str> = to_add
        .iter()
        .flat_map(|t| old.iter().filter(|o| o.same_identity(t)).map(|_| &*t.key))
        .collect();
    keys.join(",")
}

/// The inverse of `Display for Taint` for keys and values without `:` or `=` (which validation
/// guarantees): `key=value:effect`, `key:effect`, `key=value:` or `key`. Spec: TAINT-4.
pub fn parse_display(s: &str) -> Taint {
    let (kv, effect) = s.split_once(':').unwrap_or((s, ""));
    let (key, value) = kv.split_once('=').unwrap_or((kv, ""));
    Taint::new(key, value, TaintEffect::parse(effect))
}

/// `key` or `key=value`, always NoExecute: how configurations and the command line name a taint.
pub fn no_execute(s: &str) -> Taint {
    let (key, value) = s.split_once('=').unwrap_or((s, ""));
    Taint::new(key, value, TaintEffect::NoExecute)
}

/// `key` or `key=value` (always NoExecute), each part valid as the API server checks a taint's
/// key and value; else what is wrong, as `expected …`.
pub fn checked_no_execute(s: &str) -> Result<Taint, String> {
    let taint = no_execute(s);
    let problems: Vec<String> = crate::validate::label_key_errors(&taint.key)
        .into_iter()
        .chain(crate::validate::label_value_errors(&taint.value))
        .collect();
    if problems.is_empty() {
        Ok(taint)
    } else {
        Err(format!("key or key=value: {}", problems.join("; ")))
    }
}

#[cfg(test)]
mod tests;
