//! Reading a scenario's timed operations (SCN-4).

use super::read::Reader;
use super::{ObjectKind, Op, TimedOp};
use crate::taint_syntax::parse_spec;
use crate::trace::{RequestVerb, ResponseResult};
use crate::yaml::{Field, Read};
use taintcheck_core::api::{NodeName, Uid};
use taintcheck_core::time::Time;

impl Reader {
    pub(super) fn timed_op(&mut self, f: &Field) -> Option<TimedOp> {
        const OPS: &[&str] = &[
            "taint",
            "createNode",
            "deleteNode",
            "createPod",
            "deletePod",
            "forceDelete",
            "recreatePod",
            "bindPod",
            "addToleration",
            "setTolerationSeconds",
            "restartController",
            "failRequests",
            "apiLatency",
            "informerLag",
            "dropWatch",
        ];
        let mut keys = vec!["at"];
        keys.extend_from_slice(OPS);
        keys.extend_from_slice(&[
            "node",
            "uid",
            "tolerations",
            "toleration",
            "index",
            "seconds",
            "pod",
            "times",
            "result",
            "for",
        ]);
        if !self.known_keys(f, &keys) {
            return None;
        }
        let at = f.get("at").map(|c| self.duration(&c));
        let at = Time::ZERO.plus(self.required(f, "at", at)?);
        let present: Vec<&str> = OPS.iter().copied().filter(|k| f.has(k)).collect();
        let [kind] = present.as_slice() else {
            let supported: Vec<String> = OPS.iter().map(|k| format!("{k:?}")).collect();
            self.error(
                f,
                &format!(
                    "expected exactly one operation: supported operations: {}",
                    supported.join(", ")
                ),
            );
            return None;
        };
        let op = self.op(f, kind)?;
        Some(TimedOp {
            at,
            line: f.line(),
            op,
        })
    }

    fn op(&mut self, f: &Field, kind: &str) -> Option<Op> {
        let node_arg = |r: &mut Self| {
            let n = f.get("node").map(|c| r.string(&c));
            r.required(f, "node", n).map(|n| NodeName::from(n.as_str()))
        };
        Some(match kind {
            "taint" => f.get("taint").and_then(|c| self.taint_op(&c))?,
            "createNode" => Op::CreateNode(f.get(kind).and_then(|c| self.node(&c))?),
            "deleteNode" => {
                Op::DeleteNode(f.get(kind).and_then(|c| self.string(&c))?.as_str().into())
            }
            "createPod" => Op::CreatePod(f.get(kind).and_then(|c| self.pod(&c))?),
            "deletePod" => Op::DeletePod(f.get(kind).and_then(|c| self.pod_key(&c))?),
            "forceDelete" => Op::ForceDeletePod(f.get(kind).and_then(|c| self.pod_key(&c))?),
            "recreatePod" => {
                let key = f.get(kind).and_then(|c| self.pod_key(&c))?;
                let uid = f.get("uid").and_then(|c| self.string(&c));
                let uid = self.required(f, "uid", uid.map(Some))?;
                let node = f
                    .get("node")
                    .and_then(|c| self.string(&c))
                    .map(|n| n.as_str().into());
                let tolerations = f.get("tolerations").map(|c| self.tolerations(&c));
                Op::RecreatePod {
                    key,
                    uid: Uid(uid.as_str().into()),
                    node,
                    tolerations,
                }
            }
            "bindPod" => Op::BindPod {
                key: f.get(kind).and_then(|c| self.pod_key(&c))?,
                node: node_arg(self)?,
            },
            "addToleration" => {
                let key = f.get(kind).and_then(|c| self.pod_key(&c))?;
                let t = f.get("toleration").map(|c| self.toleration(&c));
                Op::AddToleration {
                    key,
                    toleration: self.required(f, "toleration", t)?,
                }
            }
            "setTolerationSeconds" => {
                let key = f.get(kind).and_then(|c| self.pod_key(&c))?;
                let index = f.get("index").map(|c| self.count(&c));
                let index = self.required(f, "index", index)?;
                let seconds = f.get("seconds").map(|c| {
                    if c.is_null() {
                        Some(None)
                    } else {
                        self.integer(&c).map(Some)
                    }
                });
                Op::SetTolerationSeconds {
                    key,
                    index,
                    seconds: self.required(f, "seconds", seconds)?,
                }
            }
            "restartController" => Op::RestartController,
            "failRequests" => self.fail_requests(f)?,
            "apiLatency" => Op::SetApiLatency(f.get(kind).and_then(|c| self.duration(&c))?),
            "informerLag" => f.get(kind).and_then(|c| self.informer_lag(&c))?,
            "dropWatch" => {
                let kind = f.get(kind).and_then(|c| match c.text().as_deref() {
                    Some("nodes") => Some(ObjectKind::Nodes),
                    Some("pods") => Some(ObjectKind::Pods),
                    _ => {
                        self.invalid(&c, "nodes or pods");
                        None
                    }
                })?;
                let duration = f.get("for").map(|c| self.duration(&c));
                Op::DropWatch {
                    kind,
                    duration: self.required(f, "for", duration)?,
                }
            }
            _ => unreachable!("timed_op only passes names from OPS"),
        })
    }

    /// `taint: NODE key=value:Effect` adds; `taint: NODE key:Effect-` or `NODE key-` removes.
    fn taint_op(&mut self, f: &Field) -> Option<Op> {
        let text = self.string(f)?;
        let Some((node, spec)) = text.trim().split_once(' ') else {
            self.invalid(f, "NODE followed by a taint in kubectl syntax");
            return None;
        };
        let node: NodeName = node.into();
        match parse_spec(spec.trim()) {
            Ok(spec) => Some(Op::Taint { node, spec }),
            Err(e) => {
                self.error(f, &format!("Invalid value: {spec:?}: {e}"));
                None
            }
        }
    }

    /// `informerLag: {nodes: D, pods: D}`: either may be left out (unchanged).
    fn informer_lag(&mut self, f: &Field) -> Option<Op> {
        if !self.known_keys(f, &["nodes", "pods"]) {
            return None;
        }
        Some(Op::SetInformerLag {
            nodes: f.get("nodes").and_then(|c| self.duration(&c)),
            pods: f.get("pods").and_then(|c| self.duration(&c)),
        })
    }

    fn fail_requests(&mut self, f: &Field) -> Option<Op> {
        let verb = f
            .get("failRequests")
            .and_then(|c| match c.text().as_deref() {
                Some("get") => Some(RequestVerb::Get),
                Some("patch") => Some(RequestVerb::Patch),
                Some("delete") => Some(RequestVerb::Delete),
                _ => {
                    self.invalid(&c, "get, patch or delete");
                    None
                }
            })?;
        let pod = f.get("pod").and_then(|c| self.pod_key(&c));
        let times = f.get("times").map(|c| self.count(&c));
        let times = self.required(f, "times", times)?;
        let result = f
            .get("result")
            .and_then(|c| match c.text().as_deref() {
                Some("failed") => Some(ResponseResult::Failed),
                Some("notFound") => Some(ResponseResult::NotFound),
                _ => {
                    self.invalid(&c, "failed or notFound");
                    None
                }
            })
            .unwrap_or(ResponseResult::Failed);
        Some(Op::FailRequests {
            verb,
            pod,
            times: u32::try_from(times).unwrap_or(u32::MAX),
            result,
        })
    }
}
