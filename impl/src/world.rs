//! What a controller incarnation runs against: the API server its informers list and watch and
//! its requests and Events go to. The runtime's threads, informers and timers are the same in
//! every world; two implement this: the in-memory [`ApiServer`] (`run`, the tests) and a real
//! API server through kube-rs (`kube_world::KubeWorld`, feature `kube`: `taintcheck controller`).
//! Spec: RT-WORLD-1.

use crate::api::{Answer, ApiServer, Watcher};
use crate::timers::TimerService;
use taintcheck_core::api::{Node, Pod};
use taintcheck_core::time::Time;
use taintcheck_core::ApiRequest;
use taintcheck_model::check::replay::Turn;

/// Where an answer goes: the work that sent the request, from whichever thread the world
/// answers on.
pub type Answered = Box<dyn FnOnce(Answer) + Send>;

/// An Event as upstream's recorder writes it for a pod (`involvedObject` the pod by name).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodEvent {
    pub namespace: String,
    pub name: String,
    pub reason: String,
    pub message: String,
}

/// An API server as the controller sees it.
pub trait World: Send + Sync {
    /// Lists the nodes and watches them from the list's resourceVersion: later changes go to
    /// `watcher`, in order. Returns the list and an id for [`World::unwatch`].
    fn list_and_watch_nodes(&self, watcher: Watcher<Node>) -> (Vec<Node>, u64);
    /// [`World::list_and_watch_nodes`] for pods.
    fn list_and_watch_pods(&self, watcher: Watcher<Pod>) -> (Vec<Pod>, u64);
    fn unwatch(&self, id: u64);
    /// The nodes now (an informer's relist after a scenario broke its watch).
    fn nodes(&self) -> Vec<Node>;
    /// The pods now, by key.
    fn pods(&self) -> Vec<Pod>;
    /// Sends `request`, decided at `now`; its answer goes to `answered`.
    fn send(&self, request: ApiRequest, now: Time, timers: &TimerService, answered: Answered);
    /// Writes an Event (the trace records it either way).
    fn event(&self, event: PodEvent);
}

impl World for ApiServer {
    fn list_and_watch_nodes(&self, watcher: Watcher<Node>) -> (Vec<Node>, u64) {
        ApiServer::list_and_watch_nodes(self, watcher)
    }

    fn list_and_watch_pods(&self, watcher: Watcher<Pod>) -> (Vec<Pod>, u64) {
        ApiServer::list_and_watch_pods(self, watcher)
    }

    fn unwatch(&self, id: u64) {
        ApiServer::unwatch(self, id)
    }

    fn nodes(&self) -> Vec<Node> {
        ApiServer::nodes(self)
    }

    fn pods(&self) -> Vec<Pod> {
        ApiServer::pods(self)
    }

    /// Served after the configured latency, on the timer service (RT-CTL-4), as a turn a
    /// schedule can order.
    fn send(&self, request: ApiRequest, now: Time, timers: &TimerService, answered: Answered) {
        let api = self.clone();
        timers.arm_labelled(
            now.plus(self.latency()),
            Turn::Answer(request.id),
            Box::new(move || answered(api.serve(&request))),
        );
    }

    /// The in-memory API server keeps no Events: the trace is their record.
    fn event(&self, _event: PodEvent) {}
}
