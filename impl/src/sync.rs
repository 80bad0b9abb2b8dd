//! The synchronisation primitives the runtime is built from, in one place so that the shuttle
//! tests (`--features shuttle`) run the very same dispatcher, worker and timer code under a
//! controlled scheduler.

#[cfg(feature = "shuttle")]
pub use shuttle::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
#[cfg(feature = "shuttle")]
pub use shuttle::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock};
#[cfg(feature = "shuttle")]
pub use shuttle::thread;

#[cfg(not(feature = "shuttle"))]
pub use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
#[cfg(not(feature = "shuttle"))]
pub use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock};
#[cfg(not(feature = "shuttle"))]
pub use std::thread;

/// Locks `m`. A poisoned lock means another runtime thread panicked mid-update; the runtime's
/// state is then unusable, so the panic propagates.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock()
        .expect("a runtime thread panicked while holding this lock")
}

/// Waits on `cv`, with the same poisoning rule as [`lock`].
pub fn wait<'a, T>(cv: &Condvar, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
    cv.wait(guard)
        .expect("a runtime thread panicked while holding this lock")
}

/// Spawns a named runtime thread.
pub fn spawn<F>(name: String, f: F) -> thread::JoinHandle<()>
where
    F: FnOnce() + Send + 'static,
{
    thread::Builder::new()
        .name(name)
        .spawn(f)
        .expect("the runtime could not spawn a thread")
}
