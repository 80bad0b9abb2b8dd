//! Admission-time tolerations, as pure functions over compact tolerations (spec ADM-1..3). The
//! scenario layer applies them where the API server and the DaemonSet controller would.

use crate::api::{TaintEffect, Toleration};

/// The node lifecycle controller's taint for a node whose `Ready` condition is `False`; the
/// admission plugin gives every pod a default toleration of it.
pub const NOT_READY: &str = "node.kubernetes.io/not-ready";
/// The node lifecycle controller's taint for a node whose `Ready` condition is `Unknown` (its
/// kubelet stopped reporting); also tolerated by default.
pub const UNREACHABLE: &str = "node.kubernetes.io/unreachable";
/// A node condition taint the DaemonSet controller tolerates for its pods.
pub const DISK_PRESSURE: &str = "node.kubernetes.io/disk-pressure";
/// A node condition taint the DaemonSet controller tolerates for its pods.
pub const MEMORY_PRESSURE: &str = "node.kubernetes.io/memory-pressure";
/// A node condition taint the DaemonSet controller tolerates for its pods.
pub const PID_PRESSURE: &str = "node.kubernetes.io/pid-pressure";
/// The cordon taint; the DaemonSet controller tolerates it for its pods.
pub const UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";
/// The taint of a node without a configured network; tolerated by host-network DaemonSet pods.
pub const NETWORK_UNAVAILABLE: &str = "node.kubernetes.io/network-unavailable";

/// The kube-apiserver flags `--default-not-ready-toleration-seconds` and
/// `--default-unreachable-toleration-seconds`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DefaultTolerationSeconds {
    /// `tolerationSeconds` of the default not-ready toleration.
    pub not_ready: i64,
    /// `tolerationSeconds` of the default unreachable toleration.
    pub unreachable: i64,
}

impl Default for DefaultTolerationSeconds {
    /// 300 s each, upstream's flag defaults.
    fn default() -> Self {
        DefaultTolerationSeconds {
            not_ready: 300,
            unreachable: 300,
        }
    }
}

/// The DefaultTolerationSeconds admission plugin (`plugin/pkg/admission/
/// defaulttolerationseconds/admission.go`, newer copy; pod create and update). Spec: ADM-1, ADM-2.
///
/// For each of not-ready and unreachable, appends `{key, Exists, NoExecute, seconds}` unless some
/// toleration already "covers" it: key equal or empty, and effect `NoExecute` or empty.
/// **Quirk (semantics §8.4):** coverage ignores operator and value, so
/// `{not-ready, Equal, "x", NoExecute}` suppresses the default although it does not tolerate
/// the value-less not-ready taint; such a pod is evicted at once when its node goes NotReady.
#[doc(alias = "DefaultTolerationSeconds")]
pub fn default_toleration_seconds(
    tolerations: &mut Vec<Toleration>,
    cfg: DefaultTolerationSeconds,
) {
    let covers = |key: &str| {
        tolerations.iter().any(|t| {
            (t.key.is_empty() || &*t.key == key)
                && matches!(t.effect, None | Some(TaintEffect::NoExecute))
        })
    };
    let (not_ready, unreachable) = (covers(NOT_READY), covers(UNREACHABLE));
    if !not_ready {
        tolerations.push(Toleration::exists(
            NOT_READY,
            Some(TaintEffect::NoExecute),
            Some(cfg.not_ready),
        ));
    }
    if !unreachable {
        tolerations.push(Toleration::exists(
            UNREACHABLE,
            Some(TaintEffect::NoExecute),
            Some(cfg.unreachable),
        ));
    }
}

/// The DaemonSet controller's `AddOrUpdateDaemonPodTolerations`
/// (`pkg/controller/daemon/util/daemonset_util.go`). Spec: ADM-3.
///
/// Infinite `Exists` tolerations for not-ready and unreachable (NoExecute), `Exists` NoSchedule
/// tolerations for disk-, memory- and pid-pressure and unschedulable, and network-unavailable for
/// host-network pods; each through [`add_or_update_toleration`], so a user's
/// `{not-ready, Exists, NoExecute, 60 s}` becomes infinite.
#[doc(alias = "AddOrUpdateDaemonPodTolerations")]
pub fn daemonset_tolerations(tolerations: &mut Vec<Toleration>, host_network: bool) {
    let no_execute = Some(TaintEffect::NoExecute);
    let no_schedule = Some(TaintEffect::NoSchedule);
    add_or_update_toleration(
        tolerations,
        Toleration::exists(NOT_READY, no_execute.clone(), None),
    );
    add_or_update_toleration(
        tolerations,
        Toleration::exists(UNREACHABLE, no_execute, None),
    );
    for key in [DISK_PRESSURE, MEMORY_PRESSURE, PID_PRESSURE, UNSCHEDULABLE] {
        add_or_update_toleration(
            tolerations,
            Toleration::exists(key, no_schedule.clone(), None),
        );
    }
    if host_network {
        add_or_update_toleration(
            tolerations,
            Toleration::exists(NETWORK_UNAVAILABLE, no_schedule, None),
        );
    }
}

/// Upstream `AddOrUpdateTolerationInPodSpec` (`pkg/apis/core/v1/helper/helpers.go`): every
/// toleration with the same identity (`MatchToleration`: key, operator, value, effect) is
/// replaced in place by `toleration`; if none has it, it is appended.
///
/// Upstream's early "already present, nothing to do" check compares a pointer with a value
/// through `Semantic.DeepEqual`, whose differing types make it always false (inferred); so every
/// match is replaced, as here (replacing an equal toleration changes nothing).
#[doc(alias = "AddOrUpdateTolerationInPodSpec")]
pub fn add_or_update_toleration(tolerations: &mut Vec<Toleration>, toleration: Toleration) {
    let mut matched = false;
    for t in tolerations
        .iter_mut()
        .filter(|t| t.same_identity(&toleration))
    {
        matched = true;
        *t = toleration.clone();
    }
    if !matched {
        tolerations.push(toleration);
    }
}

#[cfg(test)]
mod tests;
