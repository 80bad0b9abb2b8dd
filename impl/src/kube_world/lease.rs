//! Leader election on a `coordination.k8s.io/v1` Lease, as kube-controller-manager elects
//! itself: one instance leads and runs the controller, the others wait for the lease. The
//! lease is kept by kube-lease-manager (server-side apply, so two instances cannot both take
//! it). Spec: RT-WORLD-8.

use kube::Client;
use kube_lease_manager::{LeaseManager, LeaseManagerBuilder};
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// Which lease, held by whom, for how long.
#[derive(Clone, Debug)]
pub struct LeaseOptions {
    pub namespace: String,
    pub name: String,
    /// This instance's holder identity (kube-controller-manager: `{hostname}_{uuid}`).
    pub identity: String,
    /// How long a lease holds without renewal: a standby takes it over this long after the
    /// leader stopped renewing (kube-controller-manager's `--leader-elect-lease-duration`).
    pub duration: Duration,
    /// The leader renews this long after its last renewal at the latest
    /// (`--leader-elect-renew-deadline`); shorter than `duration`.
    pub renew_deadline: Duration,
}

impl LeaseOptions {
    /// Why the options cannot be used, if they cannot: whole seconds, `0 < renew_deadline <
    /// duration`, as the lease's fields count seconds.
    pub fn check(&self) -> Result<(), String> {
        let (d, r) = (self.duration, self.renew_deadline);
        if d.subsec_nanos() != 0 || r.subsec_nanos() != 0 {
            return Err("must be whole seconds".into());
        }
        if r.is_zero() || r >= d {
            return Err(format!(
                "the renew deadline ({} s) must be positive and shorter than the lease duration ({} s)",
                r.as_secs(),
                d.as_secs()
            ));
        }
        Ok(())
    }
}

/// The lease, held.
pub struct Leadership {
    held: watch::Receiver<bool>,
    keeper: JoinHandle<kube_lease_manager::Result<LeaseManager>>,
}

/// Why the lease was not taken.
#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    #[error("lease {namespace}/{name}: {why}")]
    Refused {
        namespace: String,
        name: String,
        why: String,
    },
}

/// Waits until this instance holds the lease, or `stopped` turns true (then `None`).
pub(super) async fn acquire(
    client: Client,
    options: &LeaseOptions,
    mut stopped: watch::Receiver<bool>,
) -> Result<Option<Leadership>, LeaseError> {
    let refused = |why: String| LeaseError::Refused {
        namespace: options.namespace.clone(),
        name: options.name.clone(),
        why,
    };
    let grace = options.duration - options.renew_deadline;
    let manager = LeaseManagerBuilder::new(client, &options.name)
        .with_namespace(&options.namespace)
        .with_identity(&options.identity)
        .with_field_manager(format!("taintcheck-{}", options.identity))
        .with_duration(options.duration.as_secs())
        .with_grace(grace.as_secs())
        .build()
        .await
        .map_err(|e| refused(e.to_string()))?;
    let (mut held, keeper) = manager.watch().await;
    let taken = tokio::select! {
        taken = held.wait_for(|h| *h) => Some(taken.is_ok()),
        _ = stopped.wait_for(|s| *s) => None,
    };
    match taken {
        Some(true) => Ok(Some(Leadership { held, keeper })),
        // The keeper ended: it only does on an error it cannot retry.
        Some(false) => Err(refused(match keeper.await {
            Ok(Err(e)) => e.to_string(),
            _ => "the lease keeper ended".into(),
        })),
        None => {
            drop(held);
            let _ = keeper.await;
            Ok(None)
        }
    }
}

impl Leadership {
    /// Resolves when another instance holds the lease (or it can no longer be kept).
    pub async fn lost(&mut self) {
        let _ = self.held.wait_for(|h| !*h).await;
    }

    /// Gives the lease up so that a standby takes over at once, waiting up to `timeout`.
    pub(super) async fn release(self, timeout: Duration) {
        drop(self.held);
        let _ = tokio::time::timeout(timeout, self.keeper).await;
    }
}
