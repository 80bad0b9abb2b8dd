//! Where each kind of model step happens upstream: the file and function of the Kubernetes
//! controller (or the component around it) that takes the step, per profile, with the
//! specs/upstream.md section that describes it. The report's timeline cites them so that a
//! maintainer can read each step next to the code. Spec: CHECK-5.

use super::action::Action;
use super::state::SysState;
use taintcheck_core::profile::{DeleteSequence, Profile};
use taintcheck_core::{Step, Worker};

/// The upstream code a step runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Source {
    /// The file, relative to `kubernetes/kubernetes`; `None` for steps outside the controller
    /// (the clock, the cluster's clients).
    pub file: Option<&'static str>,
    /// The function (or goroutine) taking the step.
    pub function: &'static str,
    /// The specs/upstream.md section describing it (`§n`), or the specs/spec.md id.
    pub spec: &'static str,
}

/// The controller's two files in a profile's sources (specs/upstream.md §0): the layout under
/// `nodelifecycle/scheduler` up to 1.28, or the `tainteviction` package (1.29+, `latest` and
/// `fixed`, whose design starts from it).
fn files(profile: &Profile) -> (&'static str, &'static str) {
    let layout_1_18 = profile.name == "v1.18"
        || taintcheck_core::releases::release_of(profile.name).is_some_and(|r| r.minor <= 28);
    if layout_1_18 {
        (
            "pkg/controller/nodelifecycle/scheduler/taint_manager.go",
            "pkg/controller/nodelifecycle/scheduler/timed_workers.go",
        )
    } else {
        (
            "pkg/controller/tainteviction/taint_eviction.go",
            "pkg/controller/tainteviction/timed_workers.go",
        )
    }
}

/// Where `action`, taken in `before`, happens under `profile`.
pub fn source(profile: &Profile, before: &SysState, action: &Action) -> Source {
    let (manager, timed) = files(profile);
    let src = |file, function, spec| Source {
        file: Some(file),
        function,
        spec,
    };
    let outside = |function, spec| Source {
        file: None,
        function,
        spec,
    };
    match action {
        Action::Tick(_) => outside("time passes", "MODEL-TIME"),
        Action::Env(_) => outside("a client of the API server (kubectl, the scheduler)", "§8"),
        Action::ApiRespond(_) => src(manager, "deletePodHandler (the API call returns)", "§6.2"),
        Action::InformerDeliverNode => src(manager, "NodeUpdated", "§2.3"),
        Action::InformerDeliverPod => src(manager, "PodUpdated", "§2.2"),
        Action::Controller(step) => match step {
            Step::DispatchNode | Step::DispatchPod => src(manager, "Run (dispatcher)", "§3"),
            Step::WorkerTakeNode(_) => src(manager, "worker → handleNodeUpdate", "§4.1"),
            Step::WorkerTakePod(_) => src(manager, "worker (pod item)", "§3"),
            Step::WorkerContinue { worker, .. } => {
                match before.ctrl.shards().get(*worker).map(|sh| &sh.worker) {
                    Some(Worker::Draining { .. }) => {
                        src(manager, "handlePodUpdate → processPodOnNode", "§4.2")
                    }
                    _ => src(manager, "handleNodeUpdate → processPodOnNode", "§4.1"),
                }
            }
            Step::FireTimer(_) => src(timed, "CreateWorker (timer callback)", "§5"),
            Step::StartWork(_) => src(manager, "deletePodHandler (the event)", "§6.1"),
            Step::ContinueWork(_) => match profile.delete_sequence {
                DeleteSequence::DeleteOnly => src(manager, "deletePodHandler (the DELETE)", "§6.1"),
                _ => src(
                    manager,
                    "addConditionAndDeletePod (its next request)",
                    "§6.1",
                ),
            },
            Step::CompleteWork(_) => src(timed, "CreateWorker (wrapped work function)", "§5"),
        },
    }
}
