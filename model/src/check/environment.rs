//! The environment: the cluster changes, restarts and faults a run may make (budgeted, on the
//! clock's grid), and how each changes the API server's truth and queues its watch events.
//! Spec: MODEL-A5, ENV-1..ENV-13 (specs/spec.md, "Actions").

use super::action::{Action, EnvOp, Watched};
use super::config::{CheckConfig, OpKind};
use super::informer::{cached_node, cached_pod, relist, relist_difference};
use super::outcome::Outcome;
use super::state::{ApiPod, ApiServer, CachedPod, Delta, Pending, SysState};
use smallvec::SmallVec;
use taintcheck_core::api::{Deletion, Pod, PodKey, TaintEffect};
use taintcheck_core::api_server::{self, StoredPod, Write};
use taintcheck_core::matching;
use taintcheck_core::shared::Shared;
use taintcheck_core::time::Time;

/// A run's environment: the repertoire its configuration allows.
pub(super) struct Environment<'a> {
    pub(super) config: &'a CheckConfig,
    /// The profile's `comparison_operators`, for the API's exposure history (JUST-1).
    pub(super) comparison_operators: bool,
}

impl Environment<'_> {
    /// Lists the operations enabled in `s` into `out`: none once the budget is spent, faults at
    /// any instant, cluster changes on the grid only.
    pub(super) fn enabled(&self, s: &SysState, out: &mut Vec<Action>) {
        let cfg = self.config;
        let mut op = |o: EnvOp| out.push(Action::Env(o));
        if s.env.budget == 0 {
            return;
        }
        // A fault is not a cluster change: it may strike any request, on the grid or not.
        let fault = cfg.allows(OpKind::FailNextCall) && !s.env.fail_next;
        // A watch expires at any instant too; one with nothing undelivered relists to nothing
        // new, so only a watch with events in flight (and past its initial list) may break.
        // On the stack: this runs for every state with budget left.
        let drops: SmallVec<[Watched; 2]> = [
            (Watched::Nodes, s.nodes.pending.len(), s.nodes.unsynced),
            (Watched::Pods, s.pods.pending.len(), s.pods.unsynced),
        ]
        .into_iter()
        .filter(|&(_, pending, unsynced)| {
            cfg.allows(OpKind::DropWatch) && pending > 0 && unsynced == 0
        })
        .map(|(w, _, _)| w)
        .collect();
        if !self.on_grid(s) {
            if fault {
                op(EnvOp::FailNextCall);
            }
            for w in drops {
                op(EnvOp::DropWatch(w));
            }
            return;
        }
        for (name, n) in &s.api.nodes {
            if cfg.allows(OpKind::AddTaint) {
                for (i, t) in cfg.taints.iter().enumerate() {
                    if !n.node.taints.iter().any(|x| x.same_identity(t)) {
                        op(EnvOp::AddTaint {
                            node: name.clone(),
                            taint: i,
                        });
                    }
                }
            }
            if cfg.allows(OpKind::RemoveTaint) {
                for t in n.node.no_execute_taints() {
                    op(EnvOp::RemoveTaint {
                        node: name.clone(),
                        key: t.key.clone(),
                    });
                }
            }
        }
        for spec in &cfg.pods {
            let key = spec.key();
            let live = s.api.pods.get(&key);
            if let Some(p) = live {
                if cfg.allows(OpKind::AppendToleration) {
                    for i in 0..cfg.append_tolerations.len() {
                        op(EnvOp::AppendToleration {
                            pod: key.clone(),
                            choice: i,
                        });
                    }
                }
                if cfg.allows(OpKind::SetSeconds) {
                    for (j, tol) in p.pod.tolerations.iter().enumerate() {
                        if tol.effect != Some(TaintEffect::NoExecute) {
                            continue;
                        }
                        for &seconds in &cfg.seconds_choices {
                            if seconds != tol.seconds {
                                op(EnvOp::SetSeconds {
                                    pod: key.clone(),
                                    toleration: j,
                                    seconds,
                                });
                            }
                        }
                    }
                }
                let terminating = p.deletion.is_some();
                if cfg.allows(OpKind::DeletePod) && !terminating {
                    op(EnvOp::DeletePod { pod: key.clone() });
                }
                if cfg.allows(OpKind::KubeletConfirms) && terminating {
                    let node = p.pod.node_name.as_ref().and_then(|n| s.api.nodes.get(n));
                    if api_server::kubelet_can_confirm(node.map(|n| &n.node)) {
                        op(EnvOp::KubeletConfirms { pod: key.clone() });
                    }
                }
                if cfg.allows(OpKind::ForceDelete) && terminating {
                    op(EnvOp::ForceDelete { pod: key.clone() });
                }
                if cfg.allows(OpKind::BindPod) && p.pod.node_name.is_none() {
                    for name in s.api.nodes.keys() {
                        op(EnvOp::BindPod {
                            pod: key.clone(),
                            node: name.clone(),
                        });
                    }
                }
            }
            if cfg.allows(OpKind::RecreatePod) {
                for name in s.api.nodes.keys() {
                    op(EnvOp::RecreatePod {
                        pod: key.clone(),
                        node: Some(name.clone()),
                    });
                }
            }
        }
        if cfg.allows(OpKind::DeleteNode) {
            for name in s.api.nodes.keys() {
                op(EnvOp::DeleteNode { node: name.clone() });
            }
        }
        if cfg.allows(OpKind::Restart) {
            op(EnvOp::Restart);
        }
        if fault {
            op(EnvOp::FailNextCall);
        }
        for w in drops {
            op(EnvOp::DropWatch(w));
        }
    }

    fn on_grid(&self, s: &SysState) -> bool {
        s.now.0 % self.config.step_ms == 0 && s.now.0 <= self.config.horizon_ms
    }

    /// Applies an operation: to the API server, queueing the watch events it causes, or to the
    /// controller (restart, fault). Spends one unit of budget.
    pub(super) fn apply(&self, s: &mut SysState, op: &EnvOp, out: &mut Outcome) {
        s.env.budget -= 1;
        let now = s.now;
        if matches!(
            op,
            EnvOp::Restart | EnvOp::FailNextCall | EnvOp::DropWatch(_)
        ) {
            apply_to_controller(s, op, out);
            return;
        }
        let api = s.api.make_mut();
        match op {
            EnvOp::AddTaint { node, taint } => {
                let n = api
                    .nodes
                    .get_mut(node)
                    .expect("enabled on live nodes")
                    .make_mut();
                n.node.taints.push(self.config.taints[*taint].clone());
                n.taint_since.push(now);
                s.nodes.pending.push_back(Delta::Upsert(cached_node(n)));
            }
            EnvOp::RemoveTaint { node, key } => {
                let n = api
                    .nodes
                    .get_mut(node)
                    .expect("enabled on live nodes")
                    .make_mut();
                let i = n
                    .node
                    .taints
                    .iter()
                    .position(|t| t.key == *key && matching::is_no_execute(t))
                    .expect("enabled on present taints");
                n.node.taints.remove(i);
                n.taint_since.remove(i);
                s.nodes.pending.push_back(Delta::Upsert(cached_node(n)));
            }
            EnvOp::AppendToleration { pod, choice } => {
                let tol = self.config.append_tolerations[*choice].clone();
                update_pod(api, &mut s.pods.pending, pod, now, |p| {
                    p.tolerations.push(tol)
                });
            }
            EnvOp::SetSeconds {
                pod,
                toleration,
                seconds,
            } => {
                update_pod(api, &mut s.pods.pending, pod, now, |p| {
                    p.tolerations[*toleration].seconds = *seconds
                });
            }
            EnvOp::DeletePod { pod } => self.delete_pod(api, &mut s.pods.pending, pod, now),
            EnvOp::KubeletConfirms { pod } | EnvOp::ForceDelete { pod } => {
                api.pods.remove(pod);
                s.pods.pending.push_back(Delta::Delete(pod.clone()));
            }
            EnvOp::RecreatePod { pod, node } => {
                if api.pods.remove(pod).is_some() {
                    s.pods.pending.push_back(Delta::Delete(pod.clone()));
                }
                let spec = self
                    .config
                    .pod_spec(pod)
                    .expect("pods come from the config");
                let uid = api.fresh_uid(&spec.name);
                let p = ApiPod::new(
                    Pod {
                        key: pod.clone(),
                        uid,
                        node_name: node.clone(),
                        tolerations: spec.tolerations.clone(),
                    },
                    now,
                );
                s.pods.pending.push_back(Delta::Upsert(cached_pod(&p)));
                api.pods.insert(pod.clone(), Shared::new(p));
            }
            EnvOp::BindPod { pod, node } => {
                let p = api
                    .pods
                    .get_mut(pod)
                    .expect("enabled on live pods")
                    .make_mut();
                p.pod.node_name = Some(node.clone());
                p.bound_since = Some(now);
                p.bump();
                s.pods.pending.push_back(Delta::Upsert(cached_pod(p)));
            }
            EnvOp::DeleteNode { node } => {
                api.nodes.remove(node);
                s.nodes.pending.push_back(Delta::Delete(node.clone()));
            }
            EnvOp::Restart | EnvOp::FailNextCall | EnvOp::DropWatch(_) => {
                unreachable!("handled above")
            }
        }
        api.note_exposure(self.comparison_operators);
    }

    /// A user's DELETE of a live pod, decided as the API server decides any DELETE
    /// ([`api_server::delete`], API-2): removed at once, or left Terminating. Setting the
    /// deletion timestamp queues no watch event: `PodUpdated` drops the update (CORE-A1), as
    /// the model does for the `DisruptionTarget` patch (MODEL-A4).
    fn delete_pod(
        &self,
        api: &mut ApiServer,
        pending: &mut Pending<Delta<PodKey, Shared<CachedPod>>>,
        key: &PodKey,
        now: Time,
    ) {
        let p = api.pods.get(key).expect("enabled on live pods");
        let stored = StoredPod {
            pod: &p.pod,
            version: p.version,
            disruption_target: p.disruption_target,
            deletion: p.deletion,
            termination_grace: self.config.termination_grace(),
        };
        match api_server::delete(&stored) {
            Write::StartGracefulDeletion { grace } => {
                let p = api.pods.get_mut(key).expect("read above").make_mut();
                p.deletion = Some(Deletion::starting(now, grace));
                p.bump();
            }
            Write::Delete => {
                api.pods.remove(key);
                pending.push_back(Delta::Delete(key.clone()));
            }
            Write::Nothing | Write::MarkDisruptionTarget => {}
        }
    }
}

/// The operations that leave the API server's objects alone (no copy of them is made).
fn apply_to_controller(s: &mut SysState, op: &EnvOp, out: &mut Outcome) {
    match op {
        EnvOp::Restart => {
            s.ctrl.make_mut().restarted();
            s.env.restarted_at = Some(s.now);
            s.history.cancelled = Shared::default();
            s.history.failed.clear();
            relist(s);
            out.notes
                .add(|| "controller restarts; informers re-list".to_string());
        }
        EnvOp::FailNextCall => s.env.fail_next = true,
        EnvOp::DropWatch(w) => {
            relist_difference(s, *w);
            out.notes
                .add(|| format!("the {w:?} watch expires; the informer relists"));
        }
        _ => unreachable!("only called for Restart, FailNextCall and DropWatch"),
    }
}

/// A write to a live pod's spec: `f` changes it, the object records the change, and its watch
/// event is queued.
fn update_pod(
    api: &mut ApiServer,
    pending: &mut Pending<Delta<PodKey, Shared<CachedPod>>>,
    key: &PodKey,
    now: Time,
    f: impl FnOnce(&mut Pod),
) {
    let p = api
        .pods
        .get_mut(key)
        .expect("enabled on live pods")
        .make_mut();
    f(&mut p.pod);
    p.changed_at = now;
    p.bump();
    pending.push_back(Delta::Upsert(cached_pod(p)));
}
