//! Playing a scenario on a real API server, in real time: its starting cluster, then each
//! operation (SCN-4) at its instant from the start, through kube-rs. Operations do what kubectl,
//! a StatefulSet or the scheduler would do; nothing here decides anything about taints
//! (kubectl's taint arithmetic is the model's `taint_syntax::reorganize`). An operation the API
//! server refuses is noted and the run goes on, as in the runtime.
//!
//! What a real API server cannot be made to do without a proxy (failing requests, API latency,
//! informer lag, broken watches) and what one shared server cannot vary per scenario
//! (admission settings) are refused up front by [`unsupported`].

use crate::names::Names;
use crate::proxy::Proxy;
use crate::{objects, Error};
use k8s_openapi::api::core::v1 as k8s;
use kube::api::{DeleteParams, PostParams};
use kube::{Api, Client};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;
use taintcheck_core::admission::daemonset_tolerations;
use taintcheck_core::api::{PodKey, Toleration, Uid};
use taintcheck_formats::scenario::{Admission, Op, PodSpec, RuntimeKnobs, Scenario};
use taintcheck_formats::taint_syntax::reorganize;
use tokio::time::Instant;

/// What in `scenario` a real API server cannot play, one entry per item with its line where
/// there is one; empty when it can be played. `proxied`: the controller goes through the proxy,
/// which fails requests as `failRequests` asks (PROXY-10).
pub fn unsupported(scenario: &Scenario, proxied: bool) -> Vec<String> {
    let mut out = Vec::new();
    if scenario.admission != Admission::default() {
        out.push(
            "admission: the shared API server runs DefaultTolerationSeconds with 300 s for \
             every scenario"
                .to_string(),
        );
    }
    let defaults = RuntimeKnobs::default();
    let r = &scenario.runtime;
    if r.workers != defaults.workers {
        out.push("runtime.workers: upstream's controller has 8 workers".to_string());
    }
    if r.node_informer_lag != defaults.node_informer_lag
        || r.pod_informer_lag != defaults.pod_informer_lag
        || r.api_latency != defaults.api_latency
    {
        out.push(
            "runtime: informer lags and API latency cannot be imposed on a real API server"
                .to_string(),
        );
    }
    if r.deletion_grace.is_some() {
        out.push("runtime.deletionGrace: no kubelet confirms a graceful deletion here".to_string());
    }
    for op in &scenario.ops {
        let what = match op.op {
            Op::FailRequests { .. } if !proxied => {
                "failRequests: the API server cannot be made to fail a request (the proxy \
                 can: `--proxy`)"
            }
            Op::SetApiLatency(_) => "apiLatency: the API server's latency cannot be imposed",
            Op::SetInformerLag { .. } => {
                "informerLag: the controller's informers cannot be delayed"
            }
            Op::DropWatch { .. } => "dropWatch: the controller's watches cannot be broken",
            _ => continue,
        };
        out.push(format!("line {}: {what}", op.line));
    }
    out
}

/// An operation as it was played: when it was due and when the API server answered.
#[derive(Clone, Debug)]
pub struct Played {
    /// The operation's line in the scenario file.
    pub line: usize,
    /// Its instant in the scenario.
    pub due: Duration,
    /// How much later than `due` its last request was answered.
    pub late: Duration,
    /// Why the API server refused it, if it did.
    pub refused: Option<String>,
}

/// Plays scenarios on one API server with one client.
pub struct Player {
    client: Client,
    /// Each scenario pod's tolerations as submitted (what `recreatePod` reuses) and whether a
    /// DaemonSet made it.
    submitted: BTreeMap<PodKey, (Vec<Toleration>, bool)>,
}

impl Player {
    /// A player speaking through `client` (the admin's: its requests are not the controller's).
    pub fn new(client: Client) -> Player {
        Player {
            client,
            submitted: BTreeMap::new(),
        }
    }

    /// Creates the scenario's namespaces (each with its `default` ServiceAccount, which
    /// ServiceAccount admission needs; no controller-manager makes it here), its nodes and its
    /// pods.
    pub async fn setup(&mut self, scenario: &Scenario, names: &mut Names) -> Result<(), Error> {
        let mut namespaces = BTreeSet::new();
        for p in &scenario.pods {
            namespaces.insert(p.pod.key.namespace.to_string());
        }
        for op in &scenario.ops {
            match &op.op {
                Op::CreatePod(p) => {
                    namespaces.insert(p.pod.key.namespace.to_string());
                }
                Op::RecreatePod { key, .. } => {
                    namespaces.insert(key.namespace.to_string());
                }
                _ => {}
            }
        }
        if namespaces.is_empty() {
            namespaces.insert("default".to_string());
        }
        for ns in namespaces {
            let real = names.namespace(&ns);
            self.create_namespace(&real).await?;
        }
        for node in &scenario.nodes {
            let object = objects::node(&names.node(&node.name), names.run(), &node.taints);
            Api::<k8s::Node>::all(self.client.clone())
                .create(&PostParams::default(), &object)
                .await
                .map_err(|e| Error::new(format!("creating node {}: {e}", node.name)))?;
        }
        for p in &scenario.pods {
            self.create_pod(p, &p.pod.uid, names)
                .await
                .map_err(|e| Error::new(format!("creating pod {}: {e}", p.pod.key)))?;
        }
        Ok(())
    }

    async fn create_namespace(&self, name: &str) -> Result<(), Error> {
        let ns = k8s::Namespace {
            metadata: meta(name, None),
            ..k8s::Namespace::default()
        };
        Api::<k8s::Namespace>::all(self.client.clone())
            .create(&PostParams::default(), &ns)
            .await
            .map_err(|e| Error::new(format!("creating namespace {name}: {e}")))?;
        let sa = k8s::ServiceAccount {
            metadata: meta("default", Some(name)),
            ..k8s::ServiceAccount::default()
        };
        match Api::<k8s::ServiceAccount>::namespaced(self.client.clone(), name)
            .create(&PostParams::default(), &sa)
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if code(&e) == Some(409) => Ok(()),
            Err(e) => Err(Error::new(format!(
                "creating the default ServiceAccount of {name}: {e}"
            ))),
        }
    }

    /// Plays the operations, each at `start` plus its instant, and, through a steering
    /// `proxy`, not before what its schedule has them wait for (PROXY-8, `operations`).
    /// `restart` restarts the controller (`restartController`).
    pub async fn play(
        &mut self,
        scenario: &Scenario,
        names: &mut Names,
        start: Instant,
        proxy: Option<&Proxy>,
        restart: &mut (dyn FnMut() -> Result<(), Error> + Send),
        fail: &mut (dyn FnMut(&Op, &mut Names) -> Result<(), String> + Send),
    ) -> Result<Vec<Played>, Error> {
        let mut played = Vec::new();
        for op in &scenario.ops {
            let at = u64::try_from(op.at.millis()).unwrap_or(0);
            let due = Duration::from_millis(at);
            tokio::time::sleep_until(start + due).await;
            if let Some(proxy) = proxy {
                proxy.before_operations(at).await;
            }
            let refused = match &op.op {
                Op::RestartController => {
                    restart()?;
                    None
                }
                Op::FailRequests { .. } => fail(&op.op, names).err(),
                other => self.op(other, names).await.err(),
            };
            played.push(Played {
                line: op.line,
                due,
                late: start.elapsed().saturating_sub(due),
                refused,
            });
        }
        Ok(played)
    }

    /// One operation; `Err` is the API server's refusal, in words.
    async fn op(&mut self, op: &Op, names: &mut Names) -> Result<(), String> {
        let nodes = Api::<k8s::Node>::all(self.client.clone());
        match op {
            Op::Taint { node, spec } => {
                let real = names.node(node);
                retry_conflicts(|| async {
                    let mut object = nodes.get(&real).await?;
                    let spec_taints = object
                        .spec
                        .get_or_insert_with(Default::default)
                        .taints
                        .take()
                        .unwrap_or_default();
                    let old: Vec<_> = spec_taints.iter().map(objects::from_api_taint).collect();
                    let (_, new, errors) = reorganize(&old, std::slice::from_ref(spec), true);
                    if let Some(e) = errors.first() {
                        return Err(Refused::Other(e.clone()));
                    }
                    // Taints kept keep their timeAdded; new ones get now.
                    let taints: Vec<k8s::Taint> = new
                        .iter()
                        .map(|t| {
                            spec_taints
                                .iter()
                                .find(|a| objects::from_api_taint(a) == *t)
                                .cloned()
                                .unwrap_or_else(|| objects::taint(t))
                        })
                        .collect();
                    object.spec.get_or_insert_with(Default::default).taints =
                        (!taints.is_empty()).then_some(taints);
                    nodes
                        .replace(&real, &PostParams::default(), &object)
                        .await?;
                    Ok(())
                })
                .await
            }
            Op::CreateNode(node) => {
                let object = objects::node(&names.node(&node.name), names.run(), &node.taints);
                nodes
                    .create(&PostParams::default(), &object)
                    .await
                    .map(drop)
                    .map_err(|e| e.to_string())
            }
            Op::DeleteNode(node) => nodes
                .delete(&names.node(node), &DeleteParams::default())
                .await
                .map(drop)
                .map_err(|e| e.to_string()),
            Op::CreatePod(p) => self
                .create_pod(p, &p.pod.uid, names)
                .await
                .map_err(|e| e.to_string()),
            Op::DeletePod(key) => self.delete_pod(key, names, DeleteParams::default()).await,
            Op::ForceDeletePod(key) => {
                let force = DeleteParams {
                    grace_period_seconds: Some(0),
                    ..DeleteParams::default()
                };
                self.delete_pod(key, names, force).await
            }
            Op::RecreatePod {
                key,
                uid,
                node,
                tolerations,
            } => {
                let force = DeleteParams {
                    grace_period_seconds: Some(0),
                    ..DeleteParams::default()
                };
                let (old, daemon_set) = self.submitted.get(key).cloned().unwrap_or_default();
                self.delete_pod(key, names, force).await?;
                let mut pod = taintcheck_core::api::Pod {
                    key: key.clone(),
                    uid: uid.clone(),
                    node_name: node.clone(),
                    tolerations: tolerations.clone().unwrap_or(old),
                };
                pod.node_name = node.clone();
                let spec = PodSpec { pod, daemon_set };
                self.create_pod(&spec, uid, names)
                    .await
                    .map_err(|e| e.to_string())
            }
            Op::BindPod { key, node } => {
                let real = names.pod(key);
                let binding = serde_json::json!({
                    "apiVersion": "v1",
                    "kind": "Binding",
                    "metadata": {"name": &*real.name, "namespace": &*real.namespace},
                    "target": {"apiVersion": "v1", "kind": "Node", "name": names.node(node)},
                });
                Api::<k8s::Pod>::namespaced(self.client.clone(), &real.namespace)
                    .create_subresource::<_, serde_json::Value>(
                        "binding",
                        &real.name,
                        &PostParams::default(),
                        &binding,
                    )
                    .await
                    .map(drop)
                    .map_err(|e| e.to_string())
            }
            Op::AddToleration { key, toleration } => {
                let added = objects::toleration(toleration);
                self.update_pod(key, names, move |list| {
                    list.push(added.clone());
                    Ok(())
                })
                .await
            }
            Op::SetTolerationSeconds {
                key,
                index,
                seconds,
            } => {
                let (index, seconds) = (*index, *seconds);
                self.update_pod(key, names, move |list| match list.get_mut(index) {
                    Some(t) => {
                        t.toleration_seconds = seconds;
                        Ok(())
                    }
                    None => Err(format!(
                        "the pod has {} tolerations, no index {index}",
                        list.len()
                    )),
                })
                .await
            }
            Op::RestartController
            | Op::FailRequests { .. }
            | Op::SetApiLatency(_)
            | Op::SetInformerLag { .. }
            | Op::DropWatch { .. } => Err("not playable on a real API server".to_string()),
        }
    }

    async fn create_pod(
        &mut self,
        p: &PodSpec,
        uid: &Uid,
        names: &mut Names,
    ) -> Result<(), kube::Error> {
        let real = names.pod(&p.pod.key);
        let mut tolerations = p.pod.tolerations.clone();
        if p.daemon_set {
            // What the DaemonSet controller adds to the pods it creates (ADM-3).
            daemonset_tolerations(&mut tolerations, false);
        }
        let node = p.pod.node_name.as_ref().map(|n| names.node(n));
        let object = objects::pod(
            &real.namespace,
            &real.name,
            node.as_deref(),
            &tolerations,
            0,
        );
        let created = Api::<k8s::Pod>::namespaced(self.client.clone(), &real.namespace)
            .create(&PostParams::default(), &object)
            .await?;
        if let Some(real_uid) = created.metadata.uid.as_deref() {
            names.created(real_uid, uid);
        }
        self.submitted
            .insert(p.pod.key.clone(), (p.pod.tolerations.clone(), p.daemon_set));
        Ok(())
    }

    async fn delete_pod(
        &self,
        key: &PodKey,
        names: &mut Names,
        params: DeleteParams,
    ) -> Result<(), String> {
        let real = names.pod(key);
        Api::<k8s::Pod>::namespaced(self.client.clone(), &real.namespace)
            .delete(&real.name, &params)
            .await
            .map(drop)
            .map_err(|e| e.to_string())
    }

    /// GET the pod, change its tolerations, PUT it back (again on a conflict).
    async fn update_pod(
        &self,
        key: &PodKey,
        names: &mut Names,
        change: impl Fn(&mut Vec<k8s::Toleration>) -> Result<(), String>,
    ) -> Result<(), String> {
        let real = names.pod(key);
        let pods = Api::<k8s::Pod>::namespaced(self.client.clone(), &real.namespace);
        retry_conflicts(|| async {
            let mut pod = pods.get(&real.name).await?;
            let spec = pod.spec.get_or_insert_with(Default::default);
            let mut list = spec.tolerations.take().unwrap_or_default();
            change(&mut list).map_err(Refused::Other)?;
            spec.tolerations = Some(list);
            pods.replace(&real.name, &PostParams::default(), &pod)
                .await?;
            Ok(())
        })
        .await
    }

    /// Removes what a run left: its pods (at once) and nodes. The namespaces stay, empty:
    /// without the namespace controller, a deleted namespace would never go.
    pub async fn clean(&self, names: &Names) -> Result<(), Error> {
        for ns in names.namespaces() {
            let pods = Api::<k8s::Pod>::namespaced(self.client.clone(), ns);
            let force = DeleteParams {
                grace_period_seconds: Some(0),
                ..DeleteParams::default()
            };
            pods.delete_collection(&force, &Default::default())
                .await
                .map_err(|e| Error::new(format!("removing the pods of {ns}: {e}")))?;
        }
        let nodes = Api::<k8s::Node>::all(self.client.clone());
        let labels = kube::api::ListParams::default().labels(&format!(
            "{}={}",
            crate::names::RUN_LABEL,
            names.run()
        ));
        nodes
            .delete_collection(&DeleteParams::default(), &labels)
            .await
            .map_err(|e| Error::new(format!("removing the nodes of {}: {e}", names.run())))?;
        Ok(())
    }
}

pub(crate) fn meta(
    name: &str,
    namespace: Option<&str>,
) -> k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
    k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
        name: Some(name.to_string()),
        namespace: namespace.map(str::to_string),
        ..Default::default()
    }
}

/// Why a read-modify-write failed.
enum Refused {
    Api(kube::Error),
    Other(String),
}

impl From<kube::Error> for Refused {
    fn from(e: kube::Error) -> Refused {
        Refused::Api(e)
    }
}

/// Runs a read-modify-write until it does not meet a conflict (409), at most 5 times.
async fn retry_conflicts<F, Fut>(f: F) -> Result<(), String>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<(), Refused>>,
{
    for _ in 0..5 {
        match f().await {
            Ok(()) => return Ok(()),
            Err(Refused::Api(e)) if code(&e) == Some(409) => continue,
            Err(Refused::Api(e)) => return Err(e.to_string()),
            Err(Refused::Other(e)) => return Err(e),
        }
    }
    Err("conflicting writes: gave up after 5 attempts".to_string())
}

/// The HTTP status of an API error.
pub(crate) fn code(e: &kube::Error) -> Option<u16> {
    match e {
        kube::Error::Api(status) => Some(status.code),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::unsupported;
    use taintcheck_formats::random::scenario;
    use taintcheck_formats::scenario::parse_scenario;

    /// A real API server can play every random scenario (HARNESS-11), without the proxy.
    #[test]
    fn random_scenarios_are_playable() {
        for seed in [1, 2, 0xFFFF_FFFF_FFFF_FFFF] {
            for index in 0..300 {
                let g = scenario(seed, index);
                let s = parse_scenario(&format!("{}.yaml", g.name), &g.yaml)
                    .unwrap_or_else(|e| panic!("{}\n{e}", g.yaml));
                let refused = unsupported(&s, false);
                assert!(refused.is_empty(), "{}\n{refused:?}", g.yaml);
            }
        }
    }
}
