//! The API server answers the controller's requests against its truth: the environment's
//! pending fault first, else the one answer function of the core ([`api_server::answer`],
//! API-1), then the write that answer calls for. Spec: MODEL-A4.

use super::environment::Environment;
use super::judge;
use super::outcome::Outcome;
use super::state::{ApiPod, Delta, SysState};
use taintcheck_core::api::{Deletion, PodKey, ResourceVersion};
use taintcheck_core::api_server::{self, StoredPod, Write};
use taintcheck_core::{ApiRequest, ApiResult};

/// Answers `req` (and applies its write) in `s`. `env`: the profile's `comparison_operators`
/// switch, for judging an applied DELETE, and the pods' termination grace (API-2).
pub(super) fn answer(
    s: &mut SysState,
    req: &ApiRequest,
    env: &Environment<'_>,
    out: &mut Outcome,
) -> ApiResult {
    let comparison_operators = env.comparison_operators;
    if s.env.fail_next {
        s.env.fail_next = false;
        s.history.failed.push(req.id.0);
        s.history.failed.sort_unstable();
        out.notes
            .add(|| format!("api server fails {:?} {}", req.verb, req.pod));
        return ApiResult::Failed;
    }
    let stored = s.api.pods.get(&req.pod).map(|p| StoredPod {
        pod: &p.pod,
        version: p.version,
        disruption_target: p.disruption_target,
        deletion: p.deletion,
        termination_grace: env.config.termination_grace(),
    });
    let next_version = stored.map_or(ResourceVersion(1), |p| ResourceVersion(p.version.0 + 1));
    let nodes = &s.api.nodes;
    let (result, write) = api_server::answer(
        req,
        stored,
        |name| nodes.get(name).map(|n| n.node.clone()),
        next_version,
    );
    match write {
        Write::Nothing => match &result {
            ApiResult::NotFound => out
                .notes
                .add(|| format!("api server: {} not found", req.pod)),
            ApiResult::PreconditionFailed => out
                .notes
                .add(|| format!("api server: {} precondition failed", req.pod)),
            ApiResult::Deleted => out
                .notes
                .add(|| format!("api server: {} already terminating", req.pod)),
            _ => {}
        },
        // A status-only change: the pod informer's event for it is dropped by the update
        // filter (CORE-A1), so the model delivers none (MODEL-A4).
        Write::MarkDisruptionTarget => {
            let p = written(s, &req.pod);
            p.disruption_target = true;
            p.bump();
            out.notes
                .add(|| format!("api server adds DisruptionTarget to {}", req.pod));
        }
        Write::Delete => {
            let p = s
                .api
                .make_mut()
                .pods
                .remove(&req.pod)
                .expect("answered from it");
            out.notes
                .add(|| format!("api server deletes {} (uid {})", req.pod, p.pod.uid));
            judge::delete_applied(s, &p, req, comparison_operators);
            s.pods.pending.push_back(Delta::Delete(req.pod.clone()));
        }
        // The pod becomes Terminating and stays: the eviction (API-2). Like the PATCH, the
        // update queues no watch event (`PodUpdated` ignores `deletionTimestamp`).
        Write::StartGracefulDeletion { grace } => {
            let now = s.now;
            let p = written(s, &req.pod);
            p.deletion = Some(Deletion::starting(now, grace));
            p.bump();
            let p = p.clone();
            out.notes
                .add(|| format!("api server: {} (uid {}) is terminating", req.pod, p.pod.uid));
            judge::delete_applied(s, &p, req, comparison_operators);
        }
    }
    result
}

/// The API's pod `key`, to write: the request was answered from it.
fn written<'a>(s: &'a mut SysState, key: &PodKey) -> &'a mut ApiPod {
    s.api
        .make_mut()
        .pods
        .get_mut(key)
        .expect("answered from it")
        .make_mut()
}
