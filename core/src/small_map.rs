//! An ordered map for the few entries a search state holds: a sorted vector while it holds a
//! few, a B-tree when it holds many.
//!
//! A model or oracle state is copied for every successor, and its maps (a work queue's keys, an
//! informer cache of one node and one pod) hold a handful of entries: a sorted vector copies in
//! one allocation of its own size, where a B-tree allocates a node of eleven slots, and up to
//! [`INLINE`] entries live inside the map itself and copy with no allocation at all. The
//! runtime's storm puts tens of thousands of keys in one work queue, where a vector's inserts
//! would shift them all; past [`FEW`] entries the map is a B-tree.

use smallvec::SmallVec;
use std::borrow::Borrow;
use std::collections::{btree_map, BTreeMap};
use std::hash::{Hash, Hasher};
use std::ops::Bound;

/// Above this many entries the map is a B-tree; at half of it, a vector again.
pub const FEW: usize = 16;

/// Up to this many entries are stored inline.
pub const INLINE: usize = 2;

type Entries<K, V> = SmallVec<[(K, V); INLINE]>;

/// An ordered map from `K` to `V`: a sorted vector of up to [`FEW`] entries, a B-tree beyond.
#[derive(Clone, Debug)]
pub enum SmallMap<K, V> {
    /// Sorted by key, keys distinct, at most [`FEW`] entries.
    Few(Entries<K, V>),
    /// A B-tree, holding more than half of [`FEW`] entries.
    Many(BTreeMap<K, V>),
}

impl<K, V> Default for SmallMap<K, V> {
    #[inline]
    fn default() -> Self {
        SmallMap::Few(SmallVec::new())
    }
}

impl<K: Ord, V> SmallMap<K, V> {
    /// An empty map (no allocation).
    #[inline]
    pub const fn new() -> Self {
        SmallMap::Few(SmallVec::new_const())
    }

    #[inline]
    fn find<Q: Ord + ?Sized>(v: &[(K, V)], key: &Q) -> Result<usize, usize>
    where
        K: Borrow<Q>,
    {
        v.binary_search_by(|(k, _)| k.borrow().cmp(key))
    }

    /// The value under `key`, if any.
    #[inline]
    pub fn get<Q: Ord + ?Sized>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
    {
        match self {
            SmallMap::Few(v) => Self::find(v, key).ok().map(|i| &v[i].1),
            SmallMap::Many(m) => m.get(key),
        }
    }

    /// The value under `key`, if any, to change.
    #[inline]
    pub fn get_mut<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
    {
        match self {
            SmallMap::Few(v) => Self::find(v, key).ok().map(|i| &mut v[i].1),
            SmallMap::Many(m) => m.get_mut(key),
        }
    }

    /// Whether `key` has a value.
    #[inline]
    pub fn contains_key<Q: Ord + ?Sized>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.get(key).is_some()
    }

    /// Sets `key` to `value`; the value it had, if any.
    #[inline]
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        match self {
            SmallMap::Few(v) => match Self::find(v, &key) {
                Ok(i) => Some(std::mem::replace(&mut v[i].1, value)),
                Err(i) if v.len() < FEW => {
                    v.insert(i, (key, value));
                    None
                }
                Err(_) => {
                    let mut m: BTreeMap<K, V> = std::mem::take(v).into_iter().collect();
                    m.insert(key, value);
                    *self = SmallMap::Many(m);
                    None
                }
            },
            SmallMap::Many(m) => m.insert(key, value),
        }
    }

    /// Removes `key`; the value it had, if any.
    #[inline]
    pub fn remove<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
    {
        match self {
            SmallMap::Few(v) => Self::find(v, key).ok().map(|i| v.remove(i).1),
            SmallMap::Many(m) => {
                let removed = m.remove(key);
                if m.len() <= FEW / 2 {
                    *self = SmallMap::Few(std::mem::take(m).into_iter().collect());
                }
                removed
            }
        }
    }

    /// The number of entries.
    #[inline]
    pub fn len(&self) -> usize {
        match self {
            SmallMap::Few(v) => v.len(),
            SmallMap::Many(m) => m.len(),
        }
    }

    /// No entries.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entries in key order.
    #[inline]
    pub fn iter(&self) -> Iter<'_, K, V> {
        match self {
            SmallMap::Few(v) => Iter::Few(v.iter()),
            SmallMap::Many(m) => Iter::Many(m.iter()),
        }
    }

    /// The entries from `from` on, in key order.
    #[inline]
    pub fn range_from<Q: Ord + ?Sized>(&self, from: &Q) -> Iter<'_, K, V>
    where
        K: Borrow<Q>,
    {
        match self {
            SmallMap::Few(v) => {
                let i = v.partition_point(|(k, _)| k.borrow() < from);
                Iter::Few(v[i..].iter())
            }
            SmallMap::Many(m) => {
                Iter::Range(m.range::<Q, _>((Bound::Included(from), Bound::Unbounded)))
            }
        }
    }

    /// The values in key order, to change.
    #[inline]
    pub fn values_mut(&mut self) -> ValuesMut<'_, K, V> {
        match self {
            SmallMap::Few(v) => ValuesMut::Few(v.iter_mut()),
            SmallMap::Many(m) => ValuesMut::Many(m.values_mut()),
        }
    }

    /// Gives every entry the key `f` returns for it, in place: `f` must send distinct keys to
    /// distinct keys (a renaming). A vector map is re-sorted where it stands, copying nothing.
    pub fn rekey(&mut self, mut f: impl FnMut(&K, &mut V) -> K) {
        match self {
            SmallMap::Few(v) => {
                for (k, value) in v.iter_mut() {
                    *k = f(k, value);
                }
                v.sort_unstable_by(|a, b| a.0.cmp(&b.0));
                debug_assert!(v.windows(2).all(|w| w[0].0 < w[1].0), "keys stay distinct");
            }
            SmallMap::Many(m) => {
                *m = std::mem::take(m)
                    .into_iter()
                    .map(|(k, mut value)| (f(&k, &mut value), value))
                    .collect();
            }
        }
    }

    /// The keys in order.
    #[inline]
    pub fn keys(&self) -> impl Iterator<Item = &K> {
        self.iter().map(|(k, _)| k)
    }

    /// The values in key order.
    #[inline]
    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.iter().map(|(_, v)| v)
    }
}

/// Entries of a [`SmallMap`] in key order.
pub enum Iter<'a, K, V> {
    /// Over a vector map.
    Few(std::slice::Iter<'a, (K, V)>),
    /// Over a whole B-tree map.
    Many(btree_map::Iter<'a, K, V>),
    /// Over a B-tree map from a key on ([`SmallMap::range_from`]).
    Range(btree_map::Range<'a, K, V>),
}

impl<'a, K, V> Iterator for Iter<'a, K, V> {
    type Item = (&'a K, &'a V);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Iter::Few(i) => i.next().map(|(k, v)| (k, v)),
            Iter::Many(i) => i.next(),
            Iter::Range(i) => i.next(),
        }
    }
}

/// The values of a [`SmallMap`] in key order, to change.
pub enum ValuesMut<'a, K, V> {
    /// Over a vector map.
    Few(std::slice::IterMut<'a, (K, V)>),
    /// Over a B-tree map.
    Many(btree_map::ValuesMut<'a, K, V>),
}

impl<'a, K, V> Iterator for ValuesMut<'a, K, V> {
    type Item = &'a mut V;

    #[inline]
    fn next(&mut self) -> Option<&'a mut V> {
        match self {
            ValuesMut::Few(i) => i.next().map(|(_, v)| v),
            ValuesMut::Many(i) => i.next(),
        }
    }
}

/// The entries of a [`SmallMap`] in key order, owned.
pub enum IntoIter<K, V> {
    /// Over a vector map.
    Few(smallvec::IntoIter<[(K, V); INLINE]>),
    /// Over a B-tree map.
    Many(btree_map::IntoIter<K, V>),
}

impl<K, V> Iterator for IntoIter<K, V> {
    type Item = (K, V);

    #[inline]
    fn next(&mut self) -> Option<(K, V)> {
        match self {
            IntoIter::Few(i) => i.next(),
            IntoIter::Many(i) => i.next(),
        }
    }
}

impl<'a, K: Ord, V> IntoIterator for &'a SmallMap<K, V> {
    type Item = (&'a K, &'a V);
    type IntoIter = Iter<'a, K, V>;

    #[inline]
    fn into_iter(self) -> Iter<'a, K, V> {
        self.iter()
    }
}

impl<K, V> IntoIterator for SmallMap<K, V> {
    type Item = (K, V);
    type IntoIter = IntoIter<K, V>;

    #[inline]
    fn into_iter(self) -> IntoIter<K, V> {
        match self {
            SmallMap::Few(v) => IntoIter::Few(v.into_iter()),
            SmallMap::Many(m) => IntoIter::Many(m.into_iter()),
        }
    }
}

/// Later entries win, as in a `BTreeMap` collected from the same entries.
impl<K: Ord, V> FromIterator<(K, V)> for SmallMap<K, V> {
    #[inline]
    fn from_iter<I: IntoIterator<Item = (K, V)>>(entries: I) -> Self {
        let mut m = SmallMap::default();
        for (k, v) in entries {
            m.insert(k, v);
        }
        m
    }
}

/// The same entries are the same map, whichever form holds them.
impl<K: Ord, V: PartialEq> PartialEq for SmallMap<K, V> {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<K: Ord, V: Eq> Eq for SmallMap<K, V> {}

impl<K: Ord + Hash, V: Hash> Hash for SmallMap<K, V> {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_usize(self.len());
        for entry in self.iter() {
            entry.hash(state);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::hash::DefaultHasher;

    fn hash_of(m: &SmallMap<u8, u8>) -> u64 {
        let mut h = DefaultHasher::new();
        m.hash(&mut h);
        h.finish()
    }

    proptest! {
        /// Any sequence of inserts and removes, crossing between the two forms, answers as a
        /// `BTreeMap` does, and the result equals (and hashes as) the map built from its
        /// entries.
        #[test]
        fn behaves_as_a_btree_map(
            ops in proptest::collection::vec((any::<bool>(), 0u8..48, any::<u8>()), 0..200)
        ) {
            let mut m = SmallMap::default();
            let mut model = BTreeMap::new();
            for (insert, k, v) in ops {
                if insert {
                    prop_assert_eq!(m.insert(k, v), model.insert(k, v));
                } else {
                    prop_assert_eq!(m.remove(&k), model.remove(&k));
                }
                prop_assert_eq!(m.len(), model.len());
                prop_assert!(m.iter().eq(model.iter()));
                prop_assert!((0..48).all(|k| m.get(&k) == model.get(&k)));
                prop_assert!(m.range_from(&k).eq(model.range(k..)));
                if let SmallMap::Few(v) = &m {
                    prop_assert!(v.len() <= FEW);
                }
            }
            let rebuilt: SmallMap<u8, u8> = model.iter().map(|(k, v)| (*k, *v)).collect();
            prop_assert!(m == rebuilt);
            prop_assert_eq!(hash_of(&m), hash_of(&rebuilt));
            m.values_mut().for_each(|v| *v = v.wrapping_add(1));
            model.values_mut().for_each(|v| *v = v.wrapping_add(1));
            prop_assert!(m.into_iter().eq(model));
        }
    }

    #[test]
    fn grows_into_a_tree_and_shrinks_back() {
        let mut m: SmallMap<usize, ()> = (0..FEW).map(|k| (k, ())).collect();
        assert!(matches!(m, SmallMap::Few(_)));
        m.insert(FEW, ());
        assert!(matches!(m, SmallMap::Many(_)));
        for k in 0..=FEW / 2 {
            m.remove(&k);
        }
        assert!(matches!(m, SmallMap::Few(_)));
        assert_eq!(m.len(), FEW / 2);
        assert_eq!(m.get(&FEW), Some(&()));
    }
}
