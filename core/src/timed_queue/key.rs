//! The timed queue's key and its borrowed form, ordered alike so that the entries' map is
//! searched with either without cloning names. Spec: CORE-S2.

use crate::api::{str_cmp, PodKey, Uid};
use crate::profile::WorkKeyPolicy;
use std::borrow::Borrow;
use std::cmp::Ordering;

/// The timed queue's key: upstream `KeyFromWorkArgs` (`namespace/name`), plus the UID under
/// [`WorkKeyPolicy::Uid`]. Ordered by name, then namespace, then UID (names tell pods apart
/// sooner than namespaces do, which keeps lookups cheap).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct WorkKey {
    /// `namespace/name`, as `KeyFromWorkArgs` writes it.
    pub pod: PodKey,
    /// `Some` only under [`WorkKeyPolicy::Uid`].
    pub uid: Option<Uid>,
}

impl WorkKey {
    /// The key `policy` uses for the pod `pod` with UID `uid`.
    pub fn new(policy: WorkKeyPolicy, pod: &PodKey, uid: &Uid) -> WorkKey {
        KeyView::new(policy, pod, uid).to_key()
    }
}

/// A borrowed [`WorkKey`], so the hot path looks entries up without cloning names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyView<'a> {
    /// `namespace/name`.
    pub pod: &'a PodKey,
    /// `Some` only under [`WorkKeyPolicy::Uid`].
    pub uid: Option<&'a Uid>,
}

impl<'a> KeyView<'a> {
    /// The key `policy` uses for the pod `pod` with UID `uid`.
    pub fn new(policy: WorkKeyPolicy, pod: &'a PodKey, uid: &'a Uid) -> KeyView<'a> {
        KeyView {
            pod,
            uid: match policy {
                WorkKeyPolicy::Name => None,
                WorkKeyPolicy::Uid => Some(uid),
            },
        }
    }

    /// The owned key.
    pub fn to_key(self) -> WorkKey {
        WorkKey {
            pod: self.pod.clone(),
            uid: self.uid.cloned(),
        }
    }

    /// The key order (see [`WorkKey`]), which both [`WorkKey`] and `dyn AsKey` use.
    fn order(&self, other: &KeyView<'_>) -> Ordering {
        str_cmp(&self.pod.name, &other.pod.name)
            .then_with(|| str_cmp(&self.pod.namespace, &other.pod.namespace))
            .then_with(|| match (self.uid, other.uid) {
                (Some(a), Some(b)) => str_cmp(&a.0, &b.0),
                (a, b) => a.is_some().cmp(&b.is_some()),
            })
    }
}

/// Anything that reads as a work key: [`WorkKey`] and [`KeyView`]. The map is searched through
/// `dyn AsKey`, so both look up the same entries.
pub trait AsKey {
    /// The key, borrowed.
    fn view(&self) -> KeyView<'_>;
}

impl AsKey for WorkKey {
    fn view(&self) -> KeyView<'_> {
        KeyView {
            pod: &self.pod,
            uid: self.uid.as_ref(),
        }
    }
}

impl AsKey for KeyView<'_> {
    fn view(&self) -> KeyView<'_> {
        *self
    }
}

impl<'a> Borrow<dyn AsKey + 'a> for WorkKey {
    fn borrow(&self) -> &(dyn AsKey + 'a) {
        self
    }
}

impl PartialEq for dyn AsKey + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.view() == other.view()
    }
}

impl Eq for dyn AsKey + '_ {}

impl PartialOrd for dyn AsKey + '_ {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for dyn AsKey + '_ {
    fn cmp(&self, other: &Self) -> Ordering {
        self.view().order(&other.view())
    }
}

impl Ord for WorkKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.view().order(&other.view())
    }
}

impl PartialOrd for WorkKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
