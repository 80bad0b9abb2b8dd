//! taintcheck's side of a real Kubernetes API server (specs/upstream-harness.md): the control
//! plane and upstream's controllers as child processes ([`process`]), a scenario played on the
//! API server in real time through kube-rs ([`play`]), and pods, nodes and Events watched and
//! written as kubectl writes a watch ([`watch`]), for `taintcheck import`. It decides nothing
//! about taints: it plays and records; judging is the oracle's.

pub mod identity;
pub mod names;
pub mod objects;
pub mod play;
pub mod process;
pub mod proxy;
pub mod session;
pub mod watch;

use std::path::Path;

/// Instants as the recordings' reader takes them.
pub use k8s_openapi::jiff::Timestamp;

/// A harness failure, in words naming the file or object concerned.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Error(pub String);

impl Error {
    /// An error saying `message`.
    pub fn new(message: impl Into<String>) -> Error {
        Error(message.into())
    }
}

/// A kube-rs client for the cluster of `kubeconfig` (its current context), or of the default
/// kubeconfig (`$KUBECONFIG`, `~/.kube/config`, in-cluster) when none is given.
pub async fn client(kubeconfig: Option<&Path>) -> Result<kube::Client, Error> {
    let config = match kubeconfig {
        Some(path) => {
            let file = kube::config::Kubeconfig::read_from(path)
                .map_err(|e| Error::new(format!("{}: {e}", path.display())))?;
            kube::Config::from_custom_kubeconfig(file, &kube::config::KubeConfigOptions::default())
                .await
                .map_err(|e| Error::new(format!("{}: {e}", path.display())))?
        }
        None => kube::Config::infer()
            .await
            .map_err(|e| Error::new(format!("no kubeconfig: {e}")))?,
    };
    kube::Client::try_from(config).map_err(|e| Error::new(format!("a client: {e}")))
}
