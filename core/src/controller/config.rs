//! The controller's configuration: the profile and upstream's sizes.

use crate::profile::Profile;
use crate::throttle::RateLimit;
use std::sync::{Mutex, PoisonError};

/// Controller configuration: the profile and upstream's sizes (semantics §3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Config {
    /// The upstream version or design whose behaviour the controller follows.
    pub profile: Profile,
    /// `UpdateWorkerSize`, 8 upstream.
    pub workers: usize,
    /// `NodeUpdateChannelSize`, 10 upstream.
    pub node_channel_capacity: usize,
    /// `podUpdateChannelSize`, 1 upstream.
    pub pod_channel_capacity: usize,
    /// The orders in which `handleNodeUpdate` may process a node's listed pods.
    pub listing: Listing,
    /// The client's rate limit (`--kube-api-qps`, `--kube-api-burst`); `None`: requests are
    /// never throttled. Spec: CORE-THROTTLE.
    pub rate_limit: Option<RateLimit>,
}

/// The order of a node's pods as `handleNodeUpdate` gets them. Upstream lists them from the pod
/// indexer (`ByIndex` on the node name, 1.18 and newest alike), which iterates a Go map: a
/// different order on every call, so every order is a behaviour. Spec: CORE-A6.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Listing {
    /// Name order only: one of upstream's orders, and the only one a deterministic caller
    /// (runtime, oracle, driver) needs.
    #[default]
    ByName,
    /// Any order: one worker step per remaining listed pod (the model, so that no interleaving
    /// hangs on the order, and so that identically configured pods are interchangeable).
    Any,
}

impl Config {
    /// Upstream's sizes with `profile`.
    pub fn new(profile: Profile) -> Config {
        Config {
            profile,
            workers: 8,
            node_channel_capacity: 10,
            pod_channel_capacity: 1,
            listing: Listing::ByName,
            rate_limit: None,
        }
    }

    /// The one copy of this configuration that every controller built with it points to: a
    /// controller is copied for nearly every model successor and oracle branch, and a pointer
    /// copies in one word where the configuration takes a hundred bytes. A process uses a
    /// handful of configurations (one per run), so the copies kept for its lifetime are few.
    pub(super) fn interned(self) -> &'static Config {
        static INTERNED: Mutex<Vec<&'static Config>> = Mutex::new(Vec::new());
        let mut interned = INTERNED.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(config) = interned.iter().find(|c| ***c == self) {
            return config;
        }
        let config: &'static Config = Box::leak(Box::new(self));
        interned.push(config);
        config
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Equal configurations share one copy, and distinct ones keep their own values.
    #[test]
    fn equal_configurations_share_one_copy() {
        let latest = Config::new(Profile::latest());
        let fewer = Config {
            workers: 2,
            ..latest
        };
        assert!(std::ptr::eq(latest.interned(), latest.interned()));
        assert_eq!(*latest.interned(), latest);
        assert_eq!(*fewer.interned(), fewer);
        assert!(!std::ptr::eq(latest.interned(), fewer.interned()));
    }
}
