//! Subsumption between the states of a frontier at one instant (spec ORACLE-SUB).
//!
//! Some instants a state holds only bound when something must happen, never when it may: the
//! instant an undelivered API change was made (delivered by it plus the latency bound), a
//! request or event was produced (shown within the step slack), a work's goroutine got a step
//! to take (taken within the slack), a backoff sleep ended (the retry within the bound and the
//! slack). Each lies at or before the present, so it only sets a deadline. Of two states that
//! are otherwise the same, the one whose every such instant is no earlier allows every
//! behaviour the other allows, and the other is dropped. `expect`'s deletion instants are
//! data, not deadlines: the state kept takes the dropped one's into its windows.

use super::state::State;
use smallvec::SmallVec;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use taintcheck_core::fx::{Fx, FxBuild};
use taintcheck_core::time::Time;

/// A state's deadline-only instants, in the order [`shape`] gives them.
pub type Deadlines = SmallVec<[Time; 6]>;

/// The states of `states` at `now` that no other one subsumes, in their order (the first of
/// equal ones). A dropped state's deletion instants widen the windows of the state kept.
pub fn prune(mut states: Vec<State>, now: Time) -> Vec<State> {
    for s in &mut states {
        s.note_ended_sleeps(now);
    }
    if states.len() < 2 {
        return states;
    }
    let mut kept: Vec<Option<(State, Deadlines)>> = Vec::with_capacity(states.len());
    let mut groups: HashMap<u64, Vec<usize>, FxBuild> = HashMap::default();
    'states: for mut s in states {
        let mut deadlines = Deadlines::new();
        let key = shape(&s, false, &mut deadlines);
        let group = groups.entry(key).or_default();
        let mut i = 0;
        while i < group.len() {
            let (other, theirs) = kept[group[i]].as_mut().expect("grouped states are kept");
            if covers(theirs, &deadlines) {
                widen(other, &s);
                continue 'states;
            }
            if covers(&deadlines, theirs) {
                let (other, _) = kept[group[i]].take().expect("grouped states are kept");
                widen(&mut s, &other);
                group.swap_remove(i);
                continue;
            }
            i += 1;
        }
        group.push(kept.len());
        kept.push(Some((s, deadlines)));
    }
    kept.into_iter().flatten().map(|(s, _)| s).collect()
}

/// Whether every deadline of `a` is no earlier than the same one of `b`.
pub fn covers(a: &[Time], b: &[Time]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(a, b)| a >= b)
}

/// `kept` stands for `dropped` too: its deletion windows take in the dropped one's.
fn widen(kept: &mut State, dropped: &State) {
    for (uid, (from, to)) in &dropped.deleted {
        if let Some((f, t)) = kept.deleted.get_mut(uid) {
            *f = (*f).min(*from);
            *t = (*t).max(*to);
        }
    }
}

/// A state's hash without its deadline-only instants, which go to `deadlines` in a fixed order;
/// `windows`: with its deletion windows (a search at one instant cannot widen the windows of a
/// state it has already expanded). Objects are hashed by address, as in [`State::fingerprint`].
pub fn shape(s: &State, windows: bool, deadlines: &mut Deadlines) -> u64 {
    let mut h = Fx::default();
    deadlines.clear();
    h.write_u64(s.ctrl.hash64());
    for (name, node) in &s.cache.nodes {
        name.hash(&mut h);
        h.write_usize(std::sync::Arc::as_ptr(node) as usize);
    }
    h.write_u8(0xfe);
    for (key, pod) in &s.cache.pods {
        key.hash(&mut h);
        h.write_usize(std::sync::Arc::as_ptr(pod) as usize);
    }
    h.write_u8(0xfd);
    for p in &s.nodes {
        p.key.hash(&mut h);
        h.write_usize(
            p.new
                .as_ref()
                .map_or(0, |n| std::sync::Arc::as_ptr(n) as usize),
        );
        deadlines.push(p.at);
    }
    h.write_u8(0xfc);
    for p in &s.pods {
        p.key.hash(&mut h);
        h.write_usize(
            p.new
                .as_ref()
                .map_or(0, |n| std::sync::Arc::as_ptr(n) as usize),
        );
        deadlines.push(p.at);
    }
    h.write_u8(0xfb);
    for (at, output) in &s.owed {
        output.hash(&mut h);
        deadlines.push(*at);
    }
    h.write_u8(0xfa);
    for (at, event) in &s.events {
        event.hash(&mut h);
        deadlines.push(*at);
    }
    h.write_u8(0xf9);
    for (work, since) in &s.running {
        work.hash(&mut h);
        deadlines.push(*since);
    }
    h.write_u8(0xf8);
    for (work, ended) in &s.slept {
        work.hash(&mut h);
        deadlines.push(*ended);
    }
    h.write_u8(0xf7);
    s.sent.hash(&mut h);
    if windows {
        s.deleted.hash(&mut h);
    } else {
        for uid in s.deleted.keys() {
            uid.hash(&mut h);
        }
    }
    s.faults.hash(&mut h);
    h.finish()
}

#[cfg(test)]
mod tests;
