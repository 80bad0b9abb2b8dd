//! `{manifest: PATH | OBJECT}` entries, as scenarios and model configurations accept them in
//! place of a compact node or pod: read, validated as the API server would, every problem
//! reported in the manifest's own file and line.

use super::{Diagnostic, Located, Manifests, Object};
use crate::field::{BadValue, FieldError, FieldPath};
use crate::yaml::{Error, Field, Read};
use std::path::Path;

/// `{manifest: PATH | OBJECT}`: Kubernetes manifests as `kubectl get -o yaml|json` prints
/// them, from a file relative to `dir` (the including file's directory; one object, a `List`,
/// several documents) or inline. Each must be a `kind` with a name, valid as the API server with
/// the comparison operators on accepts it (what `Lt`/`Gt` mean is each profile's matter).
/// `None` if anything is wrong.
pub fn read_entry<R: Read>(
    r: &mut R,
    dir: &Path,
    f: &Field,
    kind: &'static str,
) -> Option<Vec<Located>> {
    if !r.known_keys(f, &["manifest"]) {
        return None;
    }
    let read = f
        .get("manifest")
        .and_then(|c| read_manifest(r, dir, &c, kind))?;
    let before = r.errors().len();
    for d in &read.errors {
        diagnostic(r, d);
    }
    for o in &read.objects {
        let mut errors: Vec<Diagnostic> = o.validate(true);
        if o.kind() != kind {
            let e = FieldError::not_supported(
                FieldPath::new("kind"),
                BadValue::Str(o.kind().to_owned()),
                &[kind],
            );
            errors.push(o.locate(&e));
        }
        let name = match &o.object {
            Object::Pod(p) => p.metadata.name.as_deref(),
            Object::Node(n) => n.metadata.name.as_deref(),
        };
        if name.is_none_or(str::is_empty) {
            let path = FieldPath::new("metadata").child("name");
            let e = FieldError::required(path, "name or generateName is required");
            errors.push(o.locate(&e));
        }
        for d in &errors {
            diagnostic(r, d);
        }
    }
    (r.errors().len() == before).then_some(read.objects)
}

/// The manifest field's objects: inline, or read from the file it names.
fn read_manifest<R: Read>(r: &mut R, dir: &Path, f: &Field, kind: &str) -> Option<Manifests> {
    if f.mapping().is_some() {
        return Some(super::read_yaml(r.file(), f.node));
    }
    let Some(relative) = f.text().filter(|t| !t.is_empty()) else {
        r.invalid(
            f,
            &format!("a path to a {kind} manifest, or the manifest itself"),
        );
        return None;
    };
    let path = dir.join(&relative);
    let read = super::read_file(&path);
    if read.objects.is_empty() && read.errors.is_empty() {
        r.error(
            f,
            &format!(
                "Invalid value: {relative:?}: {} holds no object",
                path.display()
            ),
        );
        return None;
    }
    if let [Diagnostic {
        line: None,
        message,
        ..
    }] = read.errors.as_slice()
    {
        r.error(f, &format!("Invalid value: {relative:?}: {message}"));
        return None;
    }
    Some(read)
}

/// A manifest's problem, in its own file.
fn diagnostic<R: Read>(r: &mut R, d: &Diagnostic) {
    let error = Error {
        file: d.file.clone(),
        line: Some(d.line.unwrap_or(1)),
        field: FieldPath::root(),
        // The manifest's own field path (`spec.tolerations[1]`) reads after the line.
        message: if d.path.is_empty() {
            d.message.clone()
        } else {
            format!("{}: {}", d.path, d.message)
        },
    };
    r.errors().push(error);
}
