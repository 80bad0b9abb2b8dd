//! What an informer whose watch expired delivers when it relists: the difference between its
//! cache and the list, nothing in between. Every informer in the repository (the model's and
//! the runtime's) relists through [`difference`], so they cannot disagree. Spec: INF-1
//! (specs/spec.md).
//!
//! Upstream: client-go v0.34 `tools/cache/reflector.go` `Reflector.ListAndWatch` relists after a
//! watch ends with `410 Gone`; `tools/cache/delta_fifo.go` `DeltaFIFO.Replace` queues each
//! listed object, then a `DeletedFinalStateUnknown` tombstone for each known object the list
//! lacks. Unchanged objects arrive as updates with `old == new`, which the taint manager's
//! handlers drop, so they are left out here.

use std::collections::BTreeMap;

/// One event of a relist.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Relisted<'a, K, C, L> {
    /// A listed object the cache lacks (an add) or shows otherwise (an update).
    Changed(&'a K, &'a L),
    /// A cached object the list lacks: a deletion (the tombstone's last known object).
    Gone(&'a K, &'a C),
}

/// The events a relist delivers: each listed object that `same` says the cache shows otherwise
/// (or not at all), in list order (etcd lists by key), then each cached object the list lacks,
/// in key order. A pod deleted and recreated under its name is one change; an object changed
/// and changed back is none.
pub fn difference<'a, K: Ord + 'a, C: 'a, L: 'a>(
    cached: impl IntoIterator<Item = (&'a K, &'a C)>,
    listed: impl IntoIterator<Item = (&'a K, &'a L)>,
    same: impl Fn(&C, &L) -> bool,
) -> Vec<Relisted<'a, K, C, L>> {
    let mut unlisted: BTreeMap<&K, &C> = cached.into_iter().collect();
    let mut out = Vec::new();
    for (key, object) in listed {
        if !unlisted.remove(key).is_some_and(|c| same(c, object)) {
            out.push(Relisted::Changed(key, object));
        }
    }
    out.extend(unlisted.into_iter().map(|(k, c)| Relisted::Gone(k, c)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A recreate under the same name is one change, an unchanged object nothing, a vanished
    /// one a deletion after the changes.
    #[test]
    fn only_the_difference_changes_first() {
        let cached = BTreeMap::from([("a", "a-1"), ("b", "b-1"), ("c", "c-1")]);
        let listed = BTreeMap::from([("b", "b-2"), ("c", "c-1"), ("d", "d-1")]);
        let events = difference(&cached, &listed, |c, l| c == l);
        assert_eq!(
            events,
            [
                Relisted::Changed(&"b", &"b-2"),
                Relisted::Changed(&"d", &"d-1"),
                Relisted::Gone(&"a", &"a-1"),
            ]
        );
    }
}
