//! A real API server as the controller's world, through kube-rs: the node and pod watches
//! mirrored for the informers ([`mirror`]), the core's requests as API calls ([`requests`]),
//! Events as upstream's recorder writes them ([`events`]), leader election on a Lease
//! ([`lease`]). Everything asynchronous runs on this world's own tokio runtime; the controller's
//! threads never block on the network. Spec: RT-WORLD-2, RT-WORLD-8.

mod events;
pub mod lease;
mod mirror;
mod requests;

use crate::api::Watcher;
use crate::timers::TimerService;
use crate::world::{Answered, PodEvent, World};
use k8s_openapi::api::core::v1 as k8s;
use kube::{Api, Client};
use lease::{Leadership, LeaseError, LeaseOptions};
use mirror::Mirror;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use taintcheck_core::api::{Node, NodeName, Pod, PodKey};
use taintcheck_core::time::Time;
use taintcheck_core::ApiRequest;
use taintcheck_formats::manifest::convert::{node_from_k8s, pod_from_k8s};
use tokio::sync::watch;

/// A client of a real API server, on the world's own runtime: it may lead ([`Self::lead`]),
/// then watches ([`Self::watch`]).
pub struct Connection {
    runtime: tokio::runtime::Runtime,
    client: Client,
}

/// A real API server.
pub struct KubeWorld {
    connection: Connection,
    nodes: Arc<Mirror<NodeName, Node>>,
    pods: Arc<Mirror<PodKey, Pod>>,
    next_watch: AtomicU64,
    /// Requests and Event writes not yet finished.
    in_flight: Arc<AtomicUsize>,
    /// The Events' source component and reporting controller.
    component: String,
    host: String,
}

/// Why the world could not start.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot start the client's runtime: {0}")]
    Runtime(std::io::Error),
    #[error("{0}")]
    Client(String),
    #[error("the {kind} were not listed: {why}")]
    NotListed { kind: &'static str, why: String },
    #[error(transparent)]
    Lease(#[from] LeaseError),
}

/// Why [`KubeWorld::wait`] returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    Stopped,
    LeaseLost,
}

impl Connection {
    /// The client `client` makes, on a runtime of its own.
    pub fn open<F>(client: impl FnOnce() -> F) -> Result<Connection, Error>
    where
        F: std::future::Future<Output = Result<Client, String>>,
    {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("kube-client")
            .enable_all()
            .build()
            .map_err(Error::Runtime)?;
        let client = runtime.block_on(client()).map_err(Error::Client)?;
        Ok(Connection { runtime, client })
    }

    /// Blocks until this instance holds the lease (`Some`), or `stopped` turns true (`None`).
    pub fn lead(
        &self,
        options: &LeaseOptions,
        stopped: watch::Receiver<bool>,
    ) -> Result<Option<Leadership>, Error> {
        Ok(self
            .runtime
            .block_on(lease::acquire(self.client.clone(), options, stopped))?)
    }

    /// Starts watching every node and every pod, and returns once both are listed (within
    /// `timeout`), so that the informers start from a complete list.
    pub fn watch(self, component: &str, timeout: Duration) -> Result<KubeWorld, Error> {
        let nodes = Mirror::new();
        let pods = Mirror::new();
        self.runtime.spawn(mirror::run(
            Api::<k8s::Node>::all(self.client.clone()),
            nodes.clone(),
            node_from_k8s,
            |n: &Node| n.name.clone(),
        ));
        self.runtime.spawn(mirror::run(
            Api::<k8s::Pod>::all(self.client.clone()),
            pods.clone(),
            pod_from_k8s,
            |p: &Pod| p.key.clone(),
        ));
        nodes
            .wait_synced(timeout)
            .map_err(|why| Error::NotListed { kind: "nodes", why })?;
        pods.wait_synced(timeout)
            .map_err(|why| Error::NotListed { kind: "pods", why })?;
        self.runtime.block_on(warm(&self.client));
        let client = self.client.clone();
        self.runtime.spawn(async move {
            loop {
                tokio::time::sleep(WARM_EVERY).await;
                warm(&client).await;
            }
        });
        Ok(KubeWorld {
            connection: self,
            nodes,
            pods,
            next_watch: AtomicU64::new(1),
            in_flight: Arc::new(AtomicUsize::new(0)),
            component: component.into(),
            host: hostname(),
        })
    }
}

impl KubeWorld {
    /// Blocks until `stopped` turns true or the lease, if held, is lost.
    pub fn wait(
        &self,
        mut stopped: watch::Receiver<bool>,
        leadership: Option<&mut Leadership>,
    ) -> Ended {
        self.connection.runtime.block_on(async {
            let lost = async {
                match leadership {
                    Some(l) => l.lost().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = stopped.wait_for(|s| *s) => Ended::Stopped,
                _ = lost => Ended::LeaseLost,
            }
        })
    }

    /// Gives the lease up (a standby takes over at once), waiting up to `timeout`.
    pub fn release(&self, leadership: Leadership, timeout: Duration) {
        self.connection
            .runtime
            .block_on(leadership.release(timeout));
    }

    /// Waits up to `timeout` for the requests and Event writes in flight (a graceful stop:
    /// an Event the controller decided is written before it exits).
    pub fn drain(&self, timeout: Duration) {
        let until = std::time::Instant::now() + timeout;
        while self.in_flight.load(Ordering::SeqCst) > 0 && std::time::Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Whether both watches are healthy: `Err` names the last error of one that is failing
    /// (it retries meanwhile).
    pub fn health(&self) -> Result<(), String> {
        match (self.nodes.error(), self.pods.error()) {
            (None, None) => Ok(()),
            (Some(e), _) | (_, Some(e)) => Err(e),
        }
    }

    /// Runs `task` on the client's runtime, counted in flight until it ends.
    fn spawn(&self, task: impl std::future::Future<Output = ()> + Send + 'static) {
        let in_flight = self.in_flight.clone();
        in_flight.fetch_add(1, Ordering::SeqCst);
        self.connection.runtime.spawn(async move {
            task.await;
            in_flight.fetch_sub(1, Ordering::SeqCst);
        });
    }
}

impl World for KubeWorld {
    fn list_and_watch_nodes(&self, watcher: Watcher<Node>) -> (Vec<Node>, u64) {
        let id = self.next_watch.fetch_add(1, Ordering::Relaxed);
        (self.nodes.subscribe(id, watcher), id)
    }

    fn list_and_watch_pods(&self, watcher: Watcher<Pod>) -> (Vec<Pod>, u64) {
        let id = self.next_watch.fetch_add(1, Ordering::Relaxed);
        (self.pods.subscribe(id, watcher), id)
    }

    fn unwatch(&self, id: u64) {
        self.nodes.unsubscribe(id);
        self.pods.unsubscribe(id);
    }

    fn nodes(&self) -> Vec<Node> {
        self.nodes.objects()
    }

    fn pods(&self) -> Vec<Pod> {
        self.pods.objects()
    }

    /// Sent at once from the client's runtime; the answer comes back on one of its threads.
    fn send(&self, request: ApiRequest, _now: Time, _timers: &TimerService, answered: Answered) {
        let client = self.connection.client.clone();
        self.spawn(async move {
            answered(requests::serve(&client, &request).await);
        });
    }

    fn event(&self, event: PodEvent) {
        let object = events::object(
            &event,
            &self.component,
            &self.host,
            k8s_openapi::jiff::Timestamp::now(),
        );
        self.spawn(events::write(self.connection.client.clone(), object));
    }
}

/// Idle connections kept open: a work's request and the Events it writes at once.
const WARM_CONNECTIONS: usize = 4;
/// Well inside hyper's 90 s idle timeout.
const WARM_EVERY: Duration = Duration::from_secs(30);

/// kube-rs speaks HTTP/1.1: a request that finds no idle connection opens one first (a TLS
/// handshake, tens of milliseconds on a busy machine), which Go's multiplexed HTTP/2 client
/// never pays. Opens or refreshes `WARM_CONNECTIONS` at once (`GET /version` each), which the
/// client's pool then keeps. Spec: RT-WORLD-2.
async fn warm(client: &Client) {
    let calls = (0..WARM_CONNECTIONS).map(|_| client.apiserver_version());
    let _ = futures::future::join_all(calls).await;
}

/// This machine's name (a pod's: its name), as Events and lease identities name it.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default()
}
