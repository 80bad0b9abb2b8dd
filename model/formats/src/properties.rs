//! The properties a configuration or a scenario may name: the built-ins' names and spec ids
//! ([`PROPERTIES`]), the vocabulary of user-defined claims ([`vocabulary`]) and its reader
//! ([`read`]). What each property means in a state is the model's (`taintcheck-model`,
//! `check::properties`); the oracle's `expect` reads the same claims. Spec: PROP-1..PROP-4
//! (specs/spec.md, "User-defined properties").

pub mod read;
pub mod vocabulary;

/// The most user-defined properties one model holds (declared and Rust together).
pub const MAX_CUSTOM: usize = 16;

/// A property's stable name (as printed and asserted), its spec id, and its kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PropertyInfo {
    /// The name `check` prints and the tests assert.
    pub name: &'static str,
    /// Its spec id (specs/spec.md).
    pub id: &'static str,
    /// `always` (safety, bounded liveness) rather than `sometimes` (non-vacuity).
    pub always: bool,
}

/// Every property in the order `check` prints them.
pub const PROPERTIES: &[PropertyInfo] = &[
    info(
        "EVICT-1 no eviction after observed taint removal",
        "EVICT-1",
        true,
    ),
    info("EVICT-2 no premature eviction", "EVICT-2", true),
    info("LIVE-1 bounded eviction", "LIVE-1", true),
    info("LIVE-2 bounded eviction across restarts", "LIVE-2", true),
    info("UID-1 uid safety", "UID-1", true),
    info("JUST-1 justified by the api since bind", "JUST-1", true),
    info("CANCEL-1 honest cancel", "CANCEL-1", true),
    info("CANCEL-2 no write after a cancel", "CANCEL-2", true),
    info(
        "QUEUE-1 queue exclusivity and shard affinity",
        "QUEUE-1",
        true,
    ),
    info("CORE-PRE core precondition", "CORE-PRE", true),
    info("CONV-1 convergence", "CONV-1", true),
    info("TIMER-1 no orphaned timer", "TIMER-1", true),
    info("an immediate eviction", "SOME-1", false),
    info("a tolerationSeconds eviction", "SOME-2", false),
    info("a cancelled timer", "SOME-3", false),
    info("a failed then retried deletion", "SOME-4", false),
    info("an eviction after a restart", "SOME-5", false),
];

const fn info(name: &'static str, id: &'static str, always: bool) -> PropertyInfo {
    PropertyInfo { name, id, always }
}

/// Why `name` cannot name a user property, if it cannot: it must be 1 to 63 letters, digits,
/// `-`, `_` or `.`, starting with a letter or digit, and must not be a built-in's id or name.
pub fn name_problem(name: &str) -> Option<String> {
    let ok_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if name.is_empty()
        || name.len() > 63
        || !name.chars().all(ok_char)
        || !name.starts_with(|c: char| c.is_ascii_alphanumeric())
    {
        return Some(
            "expected 1 to 63 letters, digits, '-', '_' or '.', starting with a letter or digit"
                .into(),
        );
    }
    PROPERTIES
        .iter()
        .any(|p| p.id == name || p.name == name)
        .then(|| "a built-in property has this name".into())
}
