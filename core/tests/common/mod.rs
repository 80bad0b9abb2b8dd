//! Objects the core's integration tests share: one pod incarnation and one node, in the shapes
//! upstream's controller tests use (`web-0` in `ns`, `node1`, the NoExecute taint `t`).

// Each test binary compiles this module and uses only part of it.
#![allow(dead_code)]

use taintcheck_core::api::{Node, Pod, PodKey, Taint, TaintEffect, Toleration, Uid};

/// `ns/web-0`, incarnation `uid`, bound to `node`, tolerating the taint `t:NoExecute` for
/// `seconds` if given (no toleration otherwise).
pub fn web0(uid: &str, node: Option<&str>, seconds: Option<i64>) -> Pod {
    Pod {
        key: PodKey::new("ns", "web-0"),
        uid: Uid(uid.into()),
        node_name: node.map(Into::into),
        tolerations: seconds
            .map(|s| {
                vec![Toleration::exists(
                    "t",
                    Some(TaintEffect::NoExecute),
                    Some(s),
                )]
            })
            .unwrap_or_default(),
    }
}

/// `node1`, with the taint `t:NoExecute` if `tainted`.
pub fn node1(tainted: bool) -> Node {
    Node {
        name: "node1".into(),
        taints: if tainted {
            vec![Taint::new("t", "", TaintEffect::NoExecute)]
        } else {
            vec![]
        },
    }
}
