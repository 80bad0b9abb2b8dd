//! API-server validation of the fields taint eviction reads (spec: specs/matching.md, VAL-*).
//!
//! Validation runs on the k8s-openapi objects exactly as read, not on the compact types, because
//! the API server sees distinctions the compact types erase (an empty operator is not `Equal`
//! when checking that an update only added tolerations). Every error is returned, in upstream's
//! order, never only the first. Messages are upstream's, character for character, including its
//! quirks (an invalid `Equal` value is reported on the `operator` path).
//!
//! Sources: `pkg/apis/core/validation/validation.go` (`ValidateTolerations`,
//! `validateTaintEffect`, `validateNodeTaints`, `validateOnlyAddedTolerations`,
//! `ValidatePodUpdate`) and apimachinery `pkg/api/validate/content` (`IsLabelKey`,
//! `IsLabelValue`, `IsDNS1123Subdomain`, `IsDecimalInteger`), Kubernetes 1.35 era.

use crate::field::{BadValue, FieldError, FieldPath};
use k8s_openapi::api::core::v1 as k8s;
use std::collections::HashSet;
use taintcheck_core::matching::is_decimal_integer;

/// The three effects validation accepts, in upstream's order (`validateTaintEffect`).
const EFFECTS: [&str; 3] = ["NoSchedule", "PreferNoSchedule", "NoExecute"];
/// Operators accepted without the comparison-operator gate.
const OPERATORS: [&str; 2] = ["Equal", "Exists"];
/// Operators accepted with the `TaintTolerationComparisonOperators` gate on. Unverified: the
/// list upstream prints in this case; the rejection itself is verified.
const OPERATORS_GATED: [&str; 4] = ["Equal", "Exists", "Lt", "Gt"];

const LABEL_KEY_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_KEY_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DECIMAL_INT_MSG: &str = "must be a valid decimal integer in canonical form";

/// A pod as the API server validates it on create: `spec.tolerations` (VAL-TOL-*).
/// Spec: VAL-TOL-1..7.
pub fn pod(pod: &k8s::Pod, comparison_operators: bool) -> Vec<FieldError> {
    let spec = FieldPath::new("spec");
    match pod.spec.as_ref().and_then(|s| s.tolerations.as_deref()) {
        Some(tolerations) => tolerations_at(
            tolerations,
            &spec.child("tolerations"),
            comparison_operators,
        ),
        None => Vec::new(),
    }
}

/// A node as the API server validates it: `spec.taints` (VAL-TAINT-*).
pub fn node(node: &k8s::Node) -> Vec<FieldError> {
    match node.spec.as_ref().and_then(|s| s.taints.as_deref()) {
        Some(taints) => node_taints(taints, &FieldPath::new("spec").child("taints")),
        None => Vec::new(),
    }
}

/// A pod update (`ValidatePodUpdate`, the parts taint eviction depends on). Spec: VAL-UPD-1..3.
///
/// * Tolerations may only be appended, or have their `tolerationSeconds` changed
///   (`validateOnlyAddedTolerations`); the new list is validated too.
/// * `spec.nodeName` may not change once set. Setting it from empty is what the `pods/binding`
///   subresource does; the scenario layer models binding as an update, so that is accepted here.
/// * The comparison operators are "ratcheted": allowed if the old pod already used them
///   (`allowTaintTolerationComparisonOperators(oldPodSpec)`).
pub fn pod_update(new: &k8s::Pod, old: &k8s::Pod, comparison_operators: bool) -> Vec<FieldError> {
    let spec = FieldPath::new("spec");
    let (new_tols, old_tols) = (tolerations_of(new), tolerations_of(old));
    let gate = comparison_operators
        || old_tols
            .iter()
            .any(|t| matches!(t.operator.as_deref(), Some("Lt" | "Gt")));
    let mut errs = only_added_tolerations(new_tols, old_tols, &spec.child("tolerations"), gate);

    let node_name = |p: &k8s::Pod| {
        p.spec
            .as_ref()
            .and_then(|s| s.node_name.clone())
            .unwrap_or_default()
    };
    let (new_node, old_node) = (node_name(new), node_name(old));
    if !old_node.is_empty() && new_node != old_node {
        errs.push(FieldError::forbidden(spec, POD_UPDATE_FORBIDDEN));
    }
    errs
}

fn tolerations_of(p: &k8s::Pod) -> &[k8s::Toleration] {
    p.spec
        .as_ref()
        .and_then(|s| s.tolerations.as_deref())
        .unwrap_or_default()
}

/// The detail of upstream's spec-wide update error (upstream appends a structural diff, omitted).
const POD_UPDATE_FORBIDDEN: &str = "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

/// Upstream `validateOnlyAddedTolerations`: every old toleration must appear in the new list
/// with only its seconds changed; the first one missing ends the check with one `Forbidden`.
fn only_added_tolerations(
    new: &[k8s::Toleration],
    old: &[k8s::Toleration],
    path: &FieldPath,
    comparison_operators: bool,
) -> Vec<FieldError> {
    let same_but_seconds = |a: &k8s::Toleration, b: &k8s::Toleration| {
        a.key == b.key && a.operator == b.operator && a.value == b.value && a.effect == b.effect
    };
    if old
        .iter()
        .any(|o| !new.iter().any(|n| same_but_seconds(o, n)))
    {
        return vec![FieldError::forbidden(
            path.clone(),
            "existing toleration can not be modified except its tolerationSeconds",
        )];
    }
    tolerations_at(new, path, comparison_operators)
}

/// Upstream `ValidateTolerations` over a list at `path` (e.g. `spec.tolerations`).
/// Spec: VAL-TOL-1..7.
pub fn tolerations_at(
    tolerations: &[k8s::Toleration],
    path: &FieldPath,
    comparison_operators: bool,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, t) in tolerations.iter().enumerate() {
        let at = path.index(i);
        let key = t.key.as_deref().unwrap_or("");
        let operator = t.operator.as_deref().unwrap_or("");
        let value = t.value.as_deref().unwrap_or("");
        let effect = t.effect.as_deref().unwrap_or("");

        if !key.is_empty() {
            errs.extend(label_key(key, &at.child("key")));
        }
        if key.is_empty() && operator != "Exists" {
            errs.push(FieldError::invalid(
                at.child("operator"),
                BadValue::Str(operator.to_owned()),
                "operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
            ));
        }
        if t.toleration_seconds.is_some() && effect != "NoExecute" {
            errs.push(FieldError::invalid(
                at.child("effect"),
                BadValue::Str(effect.to_owned()),
                "effect must be 'NoExecute' when `tolerationSeconds` is set",
            ));
        }
        match operator {
            // Upstream reports this on `operator`, not `value`.
            "" | "Equal" => errs.extend(label_value(value, &at.child("operator"))),
            "Exists" => {
                if !value.is_empty() {
                    errs.push(FieldError::invalid(
                        at.child("operator"),
                        BadValue::Str(value.to_owned()),
                        "value must be empty when `operator` is 'Exists'",
                    ));
                }
            }
            "Lt" | "Gt" if comparison_operators => {
                for msg in decimal_integer_errors(value) {
                    errs.push(FieldError::invalid(
                        at.child("value"),
                        BadValue::Str(value.to_owned()),
                        msg,
                    ));
                }
            }
            other => {
                let supported: &[&str] = if comparison_operators {
                    &OPERATORS_GATED
                } else {
                    &OPERATORS
                };
                errs.push(FieldError::not_supported(
                    at.child("operator"),
                    BadValue::Str(other.to_owned()),
                    supported,
                ));
            }
        }
        if !effect.is_empty() {
            errs.extend(taint_effect(effect, true, &at.child("effect")));
        }
    }
    errs
}

/// Upstream `validateNodeTaints` over a list at `path` (`spec.taints`). Spec: VAL-TAINT-1..4.
pub fn node_taints(taints: &[k8s::Taint], path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    // A set, so that a node with many taints is validated in linear time.
    let mut seen: HashSet<(&str, &str)> = HashSet::new();
    for (i, t) in taints.iter().enumerate() {
        let at = path.index(i);
        let value = t.value.as_deref().unwrap_or("");
        errs.extend(label_key(&t.key, &at.child("key")));
        errs.extend(label_value(value, &at.child("value")));
        errs.extend(taint_effect(&t.effect, false, &at.child("effect")));
        if !seen.insert((t.effect.as_str(), t.key.as_str())) {
            errs.push(FieldError::duplicate(
                at,
                BadValue::GoSyntax(go_taint_syntax(t)),
                "taints must be unique by key and effect pair",
            ));
        }
    }
    errs
}

/// Upstream `validateTaintEffect`: required unless `allow_empty`, else one of three.
fn taint_effect(effect: &str, allow_empty: bool, path: &FieldPath) -> Vec<FieldError> {
    if !allow_empty && effect.is_empty() {
        return vec![FieldError::required(path.clone(), "")];
    }
    if EFFECTS.contains(&effect) {
        Vec::new()
    } else {
        vec![FieldError::not_supported(
            path.clone(),
            BadValue::Str(effect.to_owned()),
            &EFFECTS,
        )]
    }
}

/// Upstream `ValidateLabelName`: one `Invalid` per `IsLabelKey` message.
fn label_key(key: &str, path: &FieldPath) -> Vec<FieldError> {
    label_key_errors(key)
        .into_iter()
        .map(|msg| FieldError::invalid(path.clone(), BadValue::Str(key.to_owned()), &msg))
        .collect()
}

/// Upstream's label-value check at a call site: one `Invalid` with the messages joined by `;`.
fn label_value(value: &str, path: &FieldPath) -> Option<FieldError> {
    let msgs = label_value_errors(value);
    (!msgs.is_empty()).then(|| {
        FieldError::invalid(
            path.clone(),
            BadValue::Str(value.to_owned()),
            &msgs.join(";"),
        )
    })
}

/// Upstream `content.IsLabelKey` (a.k.a. `IsQualifiedName`): an optional lowercase DNS-1123
/// subdomain prefix and `/`, then a name of at most 63 bytes. Spec: VAL-KEY.
pub fn label_key_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_owned());
            } else {
                errs.extend(
                    dns1123_subdomain_errors(prefix)
                        .into_iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            *name
        }
        _ => {
            return vec![format!(
                "a valid label key {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(LABEL_KEY_MSG, LABEL_KEY_FMT, &["MyName", "my.name", "123-abc"])
            )]
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_owned());
    } else if name.len() > 63 {
        errs.push(format!("name part {}", max_len_error(63)));
    }
    if !is_label_name(name) {
        errs.push(format!(
            "name part {}",
            regex_error(
                LABEL_KEY_MSG,
                LABEL_KEY_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errs
}

/// Upstream `content.IsLabelValue`: empty, or at most 63 bytes of the label-name form.
/// Spec: VAL-VALUE.
pub fn label_value_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push(max_len_error(63));
    }
    if !value.is_empty() && !is_label_name(value) {
        errs.push(regex_error(
            LABEL_VALUE_MSG,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

/// Upstream `content.IsDNS1123Subdomain`.
fn dns1123_subdomain_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 253 {
        errs.push(max_len_error(253));
    }
    let label_ok = |l: &str| {
        let b = l.as_bytes();
        let alnum = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
        match (b.first(), b.last()) {
            (Some(first), Some(last)) => {
                alnum(first) && alnum(last) && b.iter().all(|c| alnum(c) || *c == b'-')
            }
            _ => false,
        }
    };
    if !value.split('.').all(label_ok) {
        errs.push(regex_error(
            DNS1123_SUBDOMAIN_MSG,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

/// Upstream `content.IsDecimalInteger`: `0`, or an optional `-`, a digit 1-9, then digits.
/// Values beyond int64 pass here (and then never match, MATCH-1). Spec: VAL-TOL-7.
fn decimal_integer_errors(value: &str) -> Vec<&'static str> {
    if value.is_empty() {
        vec!["must be non-empty"]
    } else if is_decimal_integer(value) {
        Vec::new()
    } else {
        vec![DECIMAL_INT_MSG]
    }
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, anchored.
fn is_label_name(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && b.iter()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

/// Upstream `MaxLenError`.
fn max_len_error(n: usize) -> String {
    format!("must be no more than {n} bytes")
}

/// Upstream `RegexError`, including its doubled space before each "or".
fn regex_error(msg: &str, re: &str, examples: &[&str]) -> String {
    let mut s = format!("{msg} (e.g. ");
    for (i, e) in examples.iter().enumerate() {
        if i > 0 {
            s.push_str(" or ");
        }
        s.push_str(&format!("'{e}', "));
    }
    s.push_str(&format!("regex used for validation is '{re}')"));
    s
}

/// A taint as Go's `%#v` prints the internal `core.Taint` in a `Duplicate value` error. Go prints
/// a set `TimeAdded` as a pointer address; the timestamp is printed instead, for determinism.
fn go_taint_syntax(t: &k8s::Taint) -> String {
    let time = match &t.time_added {
        None => "(*v1.Time)(nil)".to_owned(),
        Some(time) => format!("(*v1.Time)({})", time.0),
    };
    format!(
        "core.Taint{{Key:{}, Value:{}, Effect:{}, TimeAdded:{time}}}",
        crate::field::go_quote(&t.key),
        crate::field::go_quote(t.value.as_deref().unwrap_or("")),
        crate::field::go_quote(&t.effect),
    )
}

#[cfg(test)]
mod tests;
