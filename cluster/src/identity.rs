//! The controller's own identity: a service account with a token, so the audit log tells its
//! requests from the player's (IMPORT-5 reads the controller's by user name). The account is the
//! one kube-controller-manager gives it with `--use-service-account-credentials`:
//! `node-controller` in every release (the separate controller of 1.29+ keeps the node
//! lifecycle controller's client; specs/upstream.md, "Audit identity").

use crate::Error;
use k8s_openapi::api::core::v1 as k8s;
use k8s_openapi::api::rbac::v1 as rbac;
use kube::api::PostParams;
use kube::config::Kubeconfig;
use kube::{Api, Client};
use std::path::Path;

/// The controller's service account (in `kube-system`), the same in every release.
pub const ACCOUNT: &str = "node-controller";

/// Makes `kube-system/ACCOUNT` with cluster-admin rights and writes a kubeconfig at `out` that
/// authenticates as it with a token, for the API server of `admin` (the control plane's own
/// kubeconfig).
pub async fn controller_kubeconfig(
    client: &Client,
    admin: &Path,
    account: &str,
    out: &Path,
) -> Result<(), Error> {
    let sa = k8s::ServiceAccount {
        metadata: crate::play::meta(account, Some("kube-system")),
        ..k8s::ServiceAccount::default()
    };
    let accounts = Api::<k8s::ServiceAccount>::namespaced(client.clone(), "kube-system");
    ignore_exists(accounts.create(&PostParams::default(), &sa).await)
        .map_err(|e| Error::new(format!("creating kube-system/{account}: {e}")))?;
    let binding = rbac::ClusterRoleBinding {
        metadata: crate::play::meta(&format!("taintcheck:{account}"), None),
        role_ref: rbac::RoleRef {
            api_group: Some("rbac.authorization.k8s.io".into()),
            kind: "ClusterRole".into(),
            name: "cluster-admin".into(),
        },
        subjects: Some(vec![rbac::Subject {
            kind: "ServiceAccount".into(),
            name: account.into(),
            namespace: Some("kube-system".into()),
            ..rbac::Subject::default()
        }]),
    };
    ignore_exists(
        Api::<rbac::ClusterRoleBinding>::all(client.clone())
            .create(&PostParams::default(), &binding)
            .await,
    )
    .map_err(|e| {
        Error::new(format!(
            "binding kube-system/{account} to cluster-admin: {e}"
        ))
    })?;
    token_kubeconfig(client, admin, account, out).await
}

/// Writes a kubeconfig at `out` that authenticates as the existing `kube-system/account` with
/// a token (TokenRequest, a day), for the API server of `admin`.
pub async fn token_kubeconfig(
    client: &Client,
    admin: &Path,
    account: &str,
    out: &Path,
) -> Result<(), Error> {
    let accounts = Api::<k8s::ServiceAccount>::namespaced(client.clone(), "kube-system");
    let request = serde_json::json!({
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "spec": {"expirationSeconds": 86400},
    });
    let answer: serde_json::Value = accounts
        .create_subresource::<_, serde_json::Value>(
            "token",
            account,
            &PostParams::default(),
            &request,
        )
        .await
        .map_err(|e| Error::new(format!("a token for kube-system/{account}: {e}")))?;
    let token = answer["status"]["token"]
        .as_str()
        .ok_or_else(|| Error::new(format!("a token for kube-system/{account}: none returned")))?;
    let config = Kubeconfig::read_from(admin)
        .map_err(|e| Error::new(format!("{}: {e}", admin.display())))?;
    let cluster = config
        .clusters
        .first()
        .and_then(|c| c.cluster.as_ref())
        .ok_or_else(|| Error::new(format!("{}: no cluster", admin.display())))?;
    let kubeconfig = serde_json::json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "taintcheck", "cluster": {
            "server": cluster.server,
            "certificate-authority-data": cluster.certificate_authority_data,
            "certificate-authority": cluster.certificate_authority,
        }}],
        "users": [{"name": account, "user": {"token": token}}],
        "contexts": [{"name": account, "context": {"cluster": "taintcheck", "user": account}}],
        "current-context": account,
    });
    std::fs::write(out, kubeconfig.to_string())
        .map_err(|e| Error::new(format!("{}: cannot write: {e}", out.display())))
}

fn ignore_exists<T>(r: Result<T, kube::Error>) -> Result<(), kube::Error> {
    match r {
        Ok(_) => Ok(()),
        Err(e) if crate::play::code(&e) == Some(409) => Ok(()),
        Err(e) => Err(e),
    }
}
