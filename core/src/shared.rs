//! Components shared between search states, each with its hash computed once per version.
//!
//! A model-checking step or an oracle move changes one part of a state (the controller, the API
//! server, an informer cache) and leaves the others as they were. Shared, the others cost a
//! reference count instead of a copy; with their hash kept beside them, a fingerprint of the new
//! state hashes only the part that changed. The kept hash is a plain atomic word, not a
//! `OnceLock`: computing it twice from two threads is harmless (both store the same word), and
//! a lock's state machine on every fingerprint showed up in the checker's profile.
//!
//! A part that nearly every step changes is better stored in place: [`Inline`] offers the same
//! interface without the sharing.

use std::fmt;
use std::hash::{BuildHasher, Hash, Hasher};
use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A value shared copy-on-write, with its 64-bit hash computed on first use after each change.
///
/// The only way to change the value is [`Shared::make_mut`], which forgets the hash, so a kept
/// hash always belongs to the value beside it. `Hash` writes that one word; equal values have
/// equal words, so `Hash` agrees with `Eq`.
pub struct Shared<T> {
    inner: Arc<Versioned<T>>,
}

struct Versioned<T> {
    value: T,
    /// The value's hash, or [`UNKNOWN`] until computed (a value whose hash is that word
    /// computes it on every use: same answer, rarely).
    hash: AtomicU64,
}

/// The kept hash of a version not hashed yet.
const UNKNOWN: u64 = 0;

/// A copy is a new version: its hash is computed again once it is changed and asked for.
impl<T: Clone> Clone for Versioned<T> {
    fn clone(&self) -> Self {
        Versioned {
            value: self.value.clone(),
            hash: AtomicU64::new(UNKNOWN),
        }
    }
}

/// Keys fixed so that hashes (and the fingerprints built from them, which the Explorer's paths
/// name) are the same in every process; aHash with fixed keys, as stateright fingerprints.
fn hasher() -> impl Hasher {
    ahash::RandomState::with_seeds(
        0x243f_6a88_85a3_08d3,
        0x1319_8a2e_0370_7344,
        0xa409_3822_299f_31d0,
        0x082e_fa98_ec4e_6c89,
    )
    .build_hasher()
}

impl<T> Shared<T> {
    /// Shares `value`; its hash is computed on first use.
    pub fn new(value: T) -> Shared<T> {
        Shared {
            inner: Arc::new(Versioned {
                value,
                hash: AtomicU64::new(UNKNOWN),
            }),
        }
    }

    /// Whether both are the same version (then they are equal without looking).
    pub fn ptr_eq(a: &Shared<T>, b: &Shared<T>) -> bool {
        Arc::ptr_eq(&a.inner, &b.inner)
    }
}

impl<T: Clone> Shared<T> {
    /// The value, to change: copied first if another state shares it.
    pub fn make_mut(&mut self) -> &mut T {
        // No `Weak` to `inner` exists (it is private), so one strong count means no one else
        // holds the value.
        if Arc::strong_count(&self.inner) != 1 {
            self.unshare();
        }
        let v = Arc::get_mut(&mut self.inner).expect("an unshared value");
        *v.hash.get_mut() = UNKNOWN;
        &mut v.value
    }

    /// This state's own copy of a value others share. Out of line, and without
    /// `Arc::make_mut`'s path for weak references: the search calls `make_mut` on every value
    /// type in its hot loop, and the smaller each copy of it, the less instruction cache it
    /// takes.
    #[inline(never)]
    fn unshare(&mut self) {
        self.inner = Arc::new(Versioned::clone(&self.inner));
    }
}

impl<T: Hash> Shared<T> {
    /// The value's hash, computed once per version.
    #[inline]
    pub fn hash64(&self) -> u64 {
        match self.inner.hash.load(Ordering::Relaxed) {
            UNKNOWN => self.compute_hash(),
            known => known,
        }
    }

    fn compute_hash(&self) -> u64 {
        let mut h = hasher();
        self.inner.value.hash(&mut h);
        let hash = h.finish();
        self.inner.hash.store(hash, Ordering::Relaxed);
        hash
    }
}

impl<T> Deref for Shared<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.inner.value
    }
}

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared {
            inner: self.inner.clone(),
        }
    }
}

impl<T: Default> Default for Shared<T> {
    fn default() -> Self {
        Shared::new(T::default())
    }
}

impl<T: Hash> Hash for Shared<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash64());
    }
}

impl<T: PartialEq> PartialEq for Shared<T> {
    fn eq(&self, other: &Self) -> bool {
        Shared::ptr_eq(self, other) || **self == **other
    }
}

impl<T: Eq> Eq for Shared<T> {}

impl<T: fmt::Debug> fmt::Debug for Shared<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.value.fmt(f)
    }
}

/// A value stored in place, changed through the same [`Inline::make_mut`] as a [`Shared`] one:
/// for a part of a state that nearly every step changes (the model's controller), where sharing
/// would copy it on almost every successor anyway, and add an allocation, a free and a hash of
/// its own to each. The caller chooses the storage in the state's type; code that reads or
/// changes the part is written the same way for both.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Inline<T>(T);

impl<T> Inline<T> {
    /// Stores `value`.
    pub fn new(value: T) -> Inline<T> {
        Inline(value)
    }

    /// The value, to change.
    #[inline]
    pub fn make_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

impl<T> Deref for Inline<T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    fn own_hash<T: Hash>(v: &T) -> u64 {
        let mut h = hasher();
        v.hash(&mut h);
        h.finish()
    }

    proptest! {
        /// After any sequence of changes, to either of two copies, the kept hash is the hash
        /// of the value beside it, and equality is the values' equality.
        #[test]
        fn the_kept_hash_follows_every_change(
            ops in proptest::collection::vec((any::<bool>(), 0u8..6, any::<u8>()), 0..40)
        ) {
            let mut a: Shared<BTreeMap<u8, u8>> = Shared::default();
            let mut b = a.clone();
            for (on_a, k, v) in ops {
                let s = if on_a { &mut a } else { &mut b };
                let _ = s.hash64();
                let m = s.make_mut();
                if v % 3 == 0 { m.remove(&k); } else { m.insert(k, v); }
                prop_assert_eq!(a.hash64(), own_hash(&*a));
                prop_assert_eq!(b.hash64(), own_hash(&*b));
                prop_assert_eq!(a == b, *a == *b);
            }
        }
    }

    /// A value stored in place hashes and compares as the value itself, and changes in place.
    #[test]
    fn an_inline_value_is_the_value() {
        let mut a = Inline::new(vec![1]);
        let b = a.clone();
        assert_eq!(own_hash(&a), own_hash(&vec![1]));
        a.make_mut().push(2);
        assert_eq!((&*a, &*b), (&vec![1, 2], &vec![1]));
        assert_ne!(a, b);
        assert_eq!(own_hash(&a), own_hash(&vec![1, 2]));
    }

    #[test]
    fn a_change_copies_only_a_shared_value() {
        let mut a = Shared::new(vec![1]);
        let b = a.clone();
        assert!(Shared::ptr_eq(&a, &b));
        a.make_mut().push(2);
        assert!(!Shared::ptr_eq(&a, &b));
        assert_eq!((&*a, &*b), (&vec![1, 2], &vec![1]));
        let before = Arc::as_ptr(&a.inner);
        a.make_mut().push(3);
        assert_eq!(
            Arc::as_ptr(&a.inner),
            before,
            "a sole owner changes in place"
        );
    }
}
