//! The work key's comparisons agree with one another, whichever form (owned, borrowed, `dyn`)
//! they are made through: the map finds an entry by any of them, and `Ord`'s contract (which
//! sorted maps and `sort` rely on) requires `==` and `partial_cmp` to agree with `cmp`.

use super::*;
use proptest::prelude::*;

/// (namespace, name, UID) over few letters, so that equal parts are common.
fn parts() -> impl Strategy<Value = (String, String, Option<String>)> {
    ("[ab]{0,2}", "[ab]{0,2}", proptest::option::of("[ab]{0,2}"))
}

fn work_key((ns, name, uid): &(String, String, Option<String>)) -> WorkKey {
    WorkKey {
        pod: PodKey::new(ns, name),
        uid: uid.as_deref().map(|u| Uid(u.into())),
    }
}

proptest! {
    /// Keys are ordered by name, then namespace, then UID (none first), as strings.
    #[test]
    fn work_key_order_is_name_namespace_uid(a in parts(), b in parts()) {
        let (x, y) = (work_key(&a), work_key(&b));
        let by_strings = (&a.1, &a.0, &a.2).cmp(&(&b.1, &b.0, &b.2));
        prop_assert_eq!(x.cmp(&y), by_strings);
        prop_assert_eq!(x.partial_cmp(&y), Some(by_strings));
        prop_assert_eq!(x == y, by_strings.is_eq());
    }

    /// Through `dyn AsKey`, an owned key and a borrowed view compare as the owned keys do.
    #[test]
    fn dyn_key_comparisons_agree_with_work_key_order(a in parts(), b in parts()) {
        let (x, y) = (work_key(&a), work_key(&b));
        let order = x.cmp(&y);
        let view = y.view();
        let (dx, dy): (&dyn AsKey, &dyn AsKey) = (&x, &view);
        prop_assert_eq!(dx.cmp(dy), order);
        prop_assert_eq!(dx.partial_cmp(dy), Some(order));
        prop_assert_eq!(dx == dy, order.is_eq());
    }
}
