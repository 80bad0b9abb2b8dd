//! What the handlers and the work steps read besides the timed queue they change, passed as one
//! value: the profile, the informer caches, the arrival record and the instant.

use super::arrivals::Arrivals;
use super::ClusterView;
use crate::profile::Profile;
use crate::time::Time;

/// The read-only inputs of one handler or work step.
pub struct Context<'a, V: ClusterView + ?Sized> {
    /// The behaviour switches of the Kubernetes version mirrored.
    pub profile: &'a Profile,
    /// The informer caches.
    pub view: &'a V,
    /// The fixed design's arrival record (CORE-S9); empty under the upstream profiles.
    pub arrivals: &'a Arrivals,
    /// The instant the step decides with.
    pub now: Time,
}

impl<V: ClusterView + ?Sized> Clone for Context<'_, V> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<V: ClusterView + ?Sized> Copy for Context<'_, V> {}
