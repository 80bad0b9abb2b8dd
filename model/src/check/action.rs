//! The model's actions: the clock, informer deliveries, every step of the core, the API server's
//! answers, and the environment's operations. Names are role-prefixed (stateright's 2pc style).
//! Spec: MODEL-A1..MODEL-A5 and ENV-1..ENV-10 (specs/spec.md, "Actions").

use taintcheck_core::api::{Name, NodeName, PodKey};
use taintcheck_core::time::Time;
use taintcheck_core::{RequestId, Step};

/// One transition of the system.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// MODEL-A1: advance the clock to the next interesting instant (quiescent states only).
    Tick(Time),
    /// MODEL-A2: the node informer delivers its oldest watch event to its cache and handlers.
    InformerDeliverNode,
    /// MODEL-A2: the pod informer delivers its oldest watch event.
    InformerDeliverPod,
    /// MODEL-A3: one step of the controller core (dispatcher, worker, timer, work function).
    Controller(Step),
    /// MODEL-A4: the API server answers a pending request (and applies it).
    ApiRespond(RequestId),
    /// MODEL-A5: the environment changes the cluster (budgeted).
    Env(EnvOp),
}

/// The core lists its enabled steps straight into the model's actions.
impl From<Step> for Action {
    fn from(step: Step) -> Action {
        Action::Controller(step)
    }
}

/// An environment operation. Spec: ENV-1..ENV-13.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum EnvOp {
    /// ENV-1: add the config's `taints[taint]` to a node.
    AddTaint {
        /// The node.
        node: NodeName,
        /// Index into the config's `taints`.
        taint: usize,
    },
    /// ENV-2: remove the NoExecute taint with this key.
    RemoveTaint {
        /// The node.
        node: NodeName,
        /// The taint's key.
        key: Name,
    },
    /// ENV-3: append the config's `append_tolerations[choice]` (validation allows appends only).
    AppendToleration {
        /// The pod.
        pod: PodKey,
        /// Index into the config's `append_tolerations`.
        choice: usize,
    },
    /// ENV-4: change `tolerationSeconds` of an existing toleration (validation allows it).
    SetSeconds {
        /// The pod.
        pod: PodKey,
        /// Index into the pod's tolerations.
        toleration: usize,
        /// The new value (`None`: forever).
        seconds: Option<i64>,
    },
    /// ENV-5: delete a pod (by name).
    DeletePod {
        /// The pod.
        pod: PodKey,
    },
    /// ENV-6: delete a pod and create one with the same name and a new UID (a StatefulSet), bound
    /// to `node` (the same, another, or none: pending).
    RecreatePod {
        /// The pod's name.
        pod: PodKey,
        /// Where the new pod is bound (`None`: pending).
        node: Option<NodeName>,
    },
    /// ENV-7: the scheduler binds a pending pod.
    BindPod {
        /// The pending pod.
        pod: PodKey,
        /// Its node.
        node: NodeName,
    },
    /// ENV-8: delete a node (its pods stay bound to the name; PodGC is not modelled).
    DeleteNode {
        /// The node.
        node: NodeName,
    },
    /// ENV-9: the controller process restarts: its memory is lost, informers re-list.
    Restart,
    /// ENV-10: the next API request the server answers fails.
    FailNextCall,
    /// ENV-11: the kubelet of a Terminating pod's node confirms its termination; the object is
    /// removed (API-2).
    KubeletConfirms {
        /// The Terminating pod.
        pod: PodKey,
    },
    /// ENV-12: a force delete (grace 0), or PodGC, removes a Terminating pod whatever its node
    /// (API-2).
    ForceDelete {
        /// The Terminating pod.
        pod: PodKey,
    },
    /// ENV-13: an informer's watch expires (410 Gone) and it relists: its undelivered events
    /// are lost and replaced by the difference between its cache and the API (INF-1).
    DropWatch(Watched),
}

/// The informer a [`EnvOp::DropWatch`] breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Watched {
    /// The node informer.
    Nodes,
    /// The pod informer.
    Pods,
}
