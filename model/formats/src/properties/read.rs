//! Reading a `properties:` list (spec PROP-1), a configuration's or a scenario's expectation
//! (SCN-5): each entry a user-named property, `always` with a safety claim or `sometimes` with
//! an occurrence claim, every error at its file, line and field.

use super::vocabulary::{Claim, Declared, Pattern, TaintFilter, Timing};
use super::{name_problem, MAX_CUSTOM};
use crate::yaml::{Field, Read};
use std::collections::BTreeSet;
use taintcheck_core::EventKind;

/// Reads the vocabulary on any reader of the YAML layer.
pub trait ReadProperties: Read + Sized {
    /// The `properties:` list.
    fn properties(&mut self, f: &Field) -> Vec<Declared> {
        let declared = self.list(f, |r, p| r.property(p));
        let mut seen = BTreeSet::new();
        for (d, item) in declared.iter().zip(f.items()) {
            if !seen.insert(d.name.clone()) {
                let name = item.get("name").unwrap_or(item);
                self.error(&name, &format!("Duplicate value: \"{}\"", d.name));
            }
        }
        if let Some(extra) = f.items().nth(MAX_CUSTOM) {
            self.error(
                &extra,
                &format!("Too many: at most {MAX_CUSTOM} user-defined properties"),
            );
        }
        declared
    }

    /// `{name, always: CLAIM}` or `{name, sometimes: CLAIM}`.
    fn property(&mut self, f: &Field) -> Option<Declared> {
        if !self.known_keys(f, &["name", "always", "sometimes"]) {
            return None;
        }
        let name = match f.get("name") {
            Some(n) => {
                let name = self.string(&n)?;
                if let Some(problem) = name_problem(&name) {
                    self.error(&n, &format!("Invalid value: {name:?}: {problem}"));
                    return None;
                }
                name
            }
            None => {
                self.error_at(f.line(), f.path.child("name"), "Required value");
                return None;
            }
        };
        let (always, body) = match (f.get("always"), f.get("sometimes")) {
            (Some(a), None) => (true, a),
            (None, Some(s)) => (false, s),
            _ => {
                self.error_at(
                    f.line(),
                    f.path.clone(),
                    "Invalid value: expected exactly one of \"always\" or \"sometimes\"",
                );
                return None;
            }
        };
        let claim = self.claim(&body)?;
        if claim.is_safety() != always {
            let message = if always {
                "Invalid value: an occurrence claim (deleted, event) is checked with \
                 \"sometimes\""
            } else {
                "Invalid value: a safety claim is checked with \"always\"; \"sometimes\" takes \
                 deleted or event"
            };
            self.error(&body, message);
            return None;
        }
        Some(Declared { name, claim })
    }

    /// A mapping with one claim name as its key.
    fn claim(&mut self, f: &Field) -> Option<Claim> {
        if !self.known_keys(f, &Claim::NAMES) {
            return None;
        }
        let mut entries = f.entries();
        let (Some((key, body)), None) = (entries.next(), entries.next()) else {
            let names: Vec<_> = Claim::NAMES.iter().map(|n| format!("\"{n}\"")).collect();
            let message = format!("Invalid value: expected one claim of {}", names.join(", "));
            self.error(f, &message);
            return None;
        };
        let kind = key.text().unwrap_or_default();
        let fields: &[&str] = match kind.as_str() {
            "never_deleted" | "marked_at_most_once" | "deleted_only_if_exposed" => &["pods"],
            "evicted_in_time" => &["pods", "slack", "across_restarts"],
            "deleted" => &["pods", "when", "after_restart"],
            "not_deleted_before" => &["pods", "taint", "after"],
            "deleted_within" => &["pods", "taint", "from", "to"],
            "at_most_deletions" => &["pods", "count", "window"],
            _ => &["pods", "event"],
        };
        if !self.known_keys(&body, fields) {
            return None;
        }
        let pods = match body.get("pods") {
            Some(p) => self.pattern(&p)?,
            None => Pattern("*".into()),
        };
        let taint = match body.get("taint") {
            Some(t) => Some(self.taint_filter(&t)?),
            None => None,
        };
        let duration = |r: &mut Self, key: &str| {
            let d = body.get(key).map(|c| r.duration(&c));
            r.required(&body, key, d)
        };
        Some(match kind.as_str() {
            "never_deleted" => Claim::NeverDeleted { pods },
            "marked_at_most_once" => Claim::MarkedAtMostOnce { pods },
            "deleted_only_if_exposed" => Claim::DeletedOnlyIfExposed { pods },
            "evicted_in_time" => {
                let slack = duration(self, "slack");
                let across = self.flag(&body, "across_restarts");
                Claim::EvictedInTime {
                    pods,
                    slack: slack?,
                    across_restarts: across?,
                }
            }
            "deleted" => {
                let when = match body.get("when") {
                    Some(w) => Some(self.timing(&w)?),
                    None => None,
                };
                Claim::Deleted {
                    pods,
                    when,
                    after_restart: self.flag(&body, "after_restart")?,
                }
            }
            "not_deleted_before" => Claim::NotDeletedBefore {
                after: duration(self, "after")?,
                pods,
                taint,
            },
            "deleted_within" => {
                let from = duration(self, "from");
                let to = duration(self, "to");
                let (from, to) = (from?, to?);
                if to < from {
                    self.invalid(&body.get("to")?, "a duration no shorter than \"from\"");
                    return None;
                }
                Claim::DeletedWithin {
                    pods,
                    taint,
                    from,
                    to,
                }
            }
            "at_most_deletions" => {
                let count = body.get("count").map(|c| self.integer_in(&c, 0, 255));
                let count = self.required(&body, "count", count);
                let window = duration(self, "window");
                Claim::AtMostDeletions {
                    pods,
                    count: count? as u8,
                    window: window?,
                }
            }
            _ => {
                let event = body.get("event").map(|e| self.event_kind(&e));
                Claim::Event {
                    event: self.required(&body, "event", event)?,
                    pods,
                }
            }
        })
    }

    /// A pod name pattern: a pod name's characters and `*`.
    fn pattern(&mut self, f: &Field) -> Option<Pattern> {
        let s = self.string(f)?;
        let ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || "-.*".contains(c);
        if s.is_empty() || s.len() > 253 || !s.chars().all(ok) {
            self.invalid(
                f,
                "a pod name, '*' standing for any characters (db-*, web, *)",
            );
            return None;
        }
        Some(Pattern(s))
    }

    /// `key` or `key=value`, valid as a taint's.
    fn taint_filter(&mut self, f: &Field) -> Option<TaintFilter> {
        let s = self.string(f)?;
        match crate::taint_syntax::checked_no_execute(&s) {
            Ok(t) => Some(TaintFilter {
                key: t.key.to_string(),
                value: s.contains('=').then(|| t.value.to_string()),
            }),
            Err(problem) => {
                self.invalid(f, &problem);
                None
            }
        }
    }

    /// An optional boolean field, `false` when absent.
    fn flag(&mut self, body: &Field, key: &str) -> Option<bool> {
        match body.get(key) {
            Some(b) => self.boolean(&b),
            None => Some(false),
        }
    }

    /// `at_once` or `after_toleration`.
    fn timing(&mut self, f: &Field) -> Option<Timing> {
        match self.string(f)?.as_str() {
            "at_once" => Some(Timing::AtOnce),
            "after_toleration" => Some(Timing::AfterToleration),
            s => {
                let message = format!(
                    "Unsupported value: \"{s}\": supported values: \"at_once\", \
                     \"after_toleration\""
                );
                self.error(f, &message);
                None
            }
        }
    }

    /// `MarkingForDeletion` or `CancellingDeletion`.
    fn event_kind(&mut self, f: &Field) -> Option<EventKind> {
        match self.string(f)?.as_str() {
            "MarkingForDeletion" => Some(EventKind::MarkingForDeletion),
            "CancellingDeletion" => Some(EventKind::CancellingDeletion),
            s => {
                let message = format!(
                    "Unsupported value: \"{s}\": supported values: \"MarkingForDeletion\", \
                     \"CancellingDeletion\""
                );
                self.error(f, &message);
                None
            }
        }
    }
}

impl<R: Read> ReadProperties for R {}
