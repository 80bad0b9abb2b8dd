//! Error collection and typed accessors over [`Field`]s, shared by every reader built on this
//! layer. A reader keeps going after an error so that one run reports every problem of a file.

use super::{Error, Field};
use crate::field::FieldPath;
use saphyr::Scalar;
use taintcheck_core::time::Duration;

/// A reader of one input file: implementors give access to their error list and get the
/// accessors, each of which reports a wrong value at its field and returns `None`.
pub trait Read {
    /// The file's name, as errors print it.
    fn file(&self) -> &str;

    /// Where errors are collected.
    fn errors(&mut self) -> &mut Vec<Error>;

    /// Records `message` about `field` at `line`.
    fn error_at(&mut self, line: usize, field: FieldPath, message: &str) {
        let file = self.file().to_owned();
        self.errors().push(Error {
            file,
            line: Some(line),
            field,
            message: message.to_owned(),
        });
    }

    /// Records `message` about the field `f`.
    fn error(&mut self, f: &Field, message: &str) {
        self.error_at(f.line(), f.path.clone(), message);
    }

    /// `Invalid value: "<as written>": expected <expected>`.
    fn invalid(&mut self, f: &Field, expected: &str) {
        let message = format!("Invalid value: {:?}: expected {expected}", f.shown());
        self.error(f, &message);
    }

    /// Reports keys of mapping `f` that are not in `known`; false if `f` is not a mapping.
    fn known_keys(&mut self, f: &Field, known: &[&str]) -> bool {
        if f.mapping().is_none() {
            self.invalid(f, "a mapping");
            return false;
        }
        for (key, _) in f.entries() {
            let name = key.text().unwrap_or_default();
            if !known.contains(&name.as_str()) {
                let supported: Vec<String> = known.iter().map(|k| format!("{k:?}")).collect();
                let message = format!("unknown field: supported fields: {}", supported.join(", "));
                self.error(&key, &message);
            }
        }
        true
    }

    /// The value read from `f`'s `key`, or `Required value` at `f` if the key is absent.
    /// (`Some(None)`: present but wrong, already reported.)
    fn required<T>(&mut self, f: &Field, key: &str, v: Option<Option<T>>) -> Option<T> {
        match v {
            Some(v) => v,
            None => {
                self.error_at(f.line(), f.path.child(key), "Required value");
                None
            }
        }
    }

    /// Any scalar but null, as text.
    fn string(&mut self, f: &Field) -> Option<String> {
        let s = f.text();
        if s.is_none() {
            self.invalid(f, "a string");
        }
        s
    }

    /// `f` as a boolean.
    fn boolean(&mut self, f: &Field) -> Option<bool> {
        match f.scalar() {
            Some(Scalar::Boolean(b)) => Some(*b),
            _ => {
                self.invalid(f, "true or false");
                None
            }
        }
    }

    /// `f` as an integer.
    fn integer(&mut self, f: &Field) -> Option<i64> {
        match f.scalar() {
            Some(Scalar::Integer(i)) => Some(*i),
            _ => {
                self.invalid(f, "an integer");
                None
            }
        }
    }

    /// An integer in `min..=max`.
    fn integer_in(&mut self, f: &Field, min: i64, max: i64) -> Option<i64> {
        let i = self.integer(f)?;
        if !(min..=max).contains(&i) {
            self.invalid(f, &format!("an integer from {min} to {max}"));
            return None;
        }
        Some(i)
    }

    /// A non-negative integer.
    fn count(&mut self, f: &Field) -> Option<usize> {
        let i = self.integer(f)?;
        let n = usize::try_from(i).ok();
        if n.is_none() {
            self.invalid(f, "a non-negative integer");
        }
        n
    }

    /// `300s`, `1.5s`, `250ms`, `5m`, `1h`, or a bare number of seconds.
    fn duration(&mut self, f: &Field) -> Option<Duration> {
        let d = f.text().and_then(|s| parse_duration(&s));
        if d.is_none() {
            self.invalid(f, "a duration such as 300s, 1.5s or 250ms");
        }
        d
    }

    /// The items of a list read with `item`, those that read; null is the empty list.
    fn list<'a, 'y, T>(
        &mut self,
        f: &Field<'a, 'y>,
        mut item: impl FnMut(&mut Self, &Field<'a, 'y>) -> Option<T>,
    ) -> Vec<T>
    where
        Self: Sized,
    {
        if f.sequence().is_none() {
            if !f.is_null() {
                self.invalid(f, "a list");
            }
            return Vec::new();
        }
        f.items().filter_map(|i| item(self, &i)).collect()
    }
}

/// `300s`, `1.5s`, `250ms`, `5m`, `1h`, or a bare (integer or decimal) number of seconds.
pub fn parse_duration(s: &str) -> Option<Duration> {
    let s = s.trim();
    let (number, unit_ms) = if let Some(n) = s.strip_suffix("ms") {
        (n, 1)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1000)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60_000)
    } else if let Some(n) = s.strip_suffix('h') {
        (n, 3_600_000)
    } else {
        (s, 1000)
    };
    let (whole, frac) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() || !whole.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if !frac.bytes().all(|b| b.is_ascii_digit()) || frac.len() > 3 {
        return None;
    }
    let whole: i64 = whole.parse().ok()?;
    let frac_ms = if frac.is_empty() {
        0
    } else {
        let scaled: i64 = format!("{frac:0<3}").parse().ok()?;
        scaled * unit_ms / 1000
    };
    Some(Duration(whole.checked_mul(unit_ms)?.checked_add(frac_ms)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::load_one;

    struct Probe(Vec<Error>);

    impl Read for Probe {
        fn file(&self) -> &str {
            "p.yaml"
        }
        fn errors(&mut self) -> &mut Vec<Error> {
            &mut self.0
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("300s"), Some(Duration(300_000)));
        assert_eq!(parse_duration("1.5s"), Some(Duration(1_500)));
        assert_eq!(parse_duration("250ms"), Some(Duration(250)));
        assert_eq!(parse_duration("5m"), Some(Duration(300_000)));
        assert_eq!(parse_duration("60"), Some(Duration(60_000)));
        assert_eq!(parse_duration("soon"), None);
        assert_eq!(parse_duration("-1s"), None);
        assert_eq!(parse_duration("1.2345s"), None);
    }

    #[test]
    fn accessors_report_wrong_values_at_their_field_and_line() {
        let doc = load_one("p.yaml", "a:\n  n: -1\n  b: maybe\n  l: 3\n  m: 17\nx: 1\n").unwrap();
        let root = Field::root(&doc);
        let a = root.get("a").unwrap();
        let mut r = Probe(Vec::new());
        assert!(r.known_keys(&root, &["a"]));
        assert_eq!(r.count(&a.get("n").unwrap()), None);
        assert_eq!(r.boolean(&a.get("b").unwrap()), None);
        assert!(r.list(&a.get("l").unwrap(), |r, i| r.integer(i)).is_empty());
        assert_eq!(r.integer_in(&a.get("m").unwrap(), 0, 16), None);
        let z = a.get("z").map(|z| r.string(&z));
        assert_eq!(r.required(&a, "z", z), None);
        let shown: Vec<String> = r.0.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "p.yaml:6: x: unknown field: supported fields: \"a\"",
                "p.yaml:2: a.n: Invalid value: \"-1\": expected a non-negative integer",
                "p.yaml:3: a.b: Invalid value: \"maybe\": expected true or false",
                "p.yaml:4: a.l: Invalid value: \"3\": expected a list",
                "p.yaml:5: a.m: Invalid value: \"17\": expected an integer from 0 to 16",
                "p.yaml:2: a.z: Required value",
            ]
        );
    }

    #[test]
    fn line_of_finds_a_field_or_its_nearest_ancestor() {
        let doc = load_one("p.yaml", "pods:\n  - name: a\n  - name: b\n    node: n\n").unwrap();
        let root = Field::root(&doc);
        let pods = FieldPath::new("pods");
        assert_eq!(root.line_of(&pods.index(1).child("node")), 4);
        assert_eq!(root.line_of(&pods.index(0).child("node")), 2);
        assert_eq!(root.line_of(&FieldPath::new("nodes")), 1);
    }
}
