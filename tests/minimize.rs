//! `taintcheck minimize` (spec CHECK-4) on every race of specs/verdicts.md, under `latest` (T1
//! under `v1.18`, the one profile it shows on): the smallest configuration found, asserted
//! dimension by dimension, is still violated and is minimal per dimension (every
//! single-dimension shrink of it makes the property hold).

use taintcheck_core::profile::Profile;
use taintcheck_model::check::config::CheckConfig;
use taintcheck_model::check::issue;
use taintcheck_model::check::minimize::{minimize, smaller, Size, DIMENSIONS};
use taintcheck_model::check::shortest;
use taintcheck_model::check::TaintSys;

fn minimal(config: &str, property: &str, expected: &str, steps: usize) {
    minimal_under(Profile::latest(), config, property, expected, steps);
}

fn minimal_under(profile: Profile, config: &str, property: &str, expected: &str, steps: usize) {
    let info = issue::property(property).expect("an always property");
    let start = CheckConfig::builtin(config).expect("built-in config");
    let min = minimize(profile, start, info).expect("violated on the built-in configuration");
    assert_eq!(
        Size::of(&min.config).to_string(),
        expected,
        "{config} {property}"
    );
    assert_eq!(min.trace.steps.len(), steps, "{}", min.trace.text());
    for d in DIMENSIONS {
        for c in smaller(&min.config, d) {
            let model = TaintSys::new(profile, c);
            assert!(
                shortest::counterexamples(&model, &[info.name]).is_empty(),
                "{config} {property}: shrinking {d:?} still violates"
            );
        }
    }
}

/// N1's family: the timer has fired and the work is running when the cache observes that the
/// pod tolerates the taint forever; the DELETE goes ahead. One operation of one kind suffices.
#[test]
fn n1_needs_one_pod_and_one_change_while_the_work_runs() {
    minimal(
        "timer-vs-cancel",
        "EVICT-1",
        "budget 1, operations [set_seconds], 1 node(s), 1 pod(s), 1 worker(s), 1 taint(s) to add, \
         1 seconds choice(s), horizon 1000 ms, channel capacities 1/1",
        10,
    );
}

/// N5/N6: the successor recreated under the same name (here on the same node) is deleted by the
/// predecessor's DELETE by name; no second node is needed.
#[test]
fn n5_needs_one_recreation() {
    minimal(
        "same-name-successor",
        "UID-1",
        "budget 1, operations [recreate_pod], 1 node(s), 1 pod(s), 1 worker(s), 1 taint(s) to add, \
         0 seconds choice(s), horizon 2000 ms, channel capacities 1/1",
        11,
    );
}

/// T4: one restart, and a horizon past the restarted countdown.
#[test]
fn t4_needs_a_restart() {
    minimal(
        "restart",
        "LIVE-2",
        "budget 1, operations [restart], 1 node(s), 1 pod(s), 1 worker(s), 0 taint(s) to add, \
         0 seconds choice(s), horizon 3000 ms, channel capacities 1/1",
        12,
    );
}

/// N2: the "Cancelling deletion" event is emitted while the running work's DELETE goes ahead; one
/// toleration change suffices.
#[test]
fn n2_cancel_event_while_the_deletion_goes_ahead() {
    minimal_under(
        Profile::latest(),
        "timer-vs-cancel",
        "CANCEL-1",
        "budget 1, operations [set_seconds], 1 node(s), 1 pod(s), \
         1 worker(s), 1 taint(s) to add, 1 seconds choice(s), horizon 1000 ms, channel capacities 1/1",
        13,
    );
}

/// N6: the successor on the same node is deleted at its predecessor's fire time.
#[test]
fn n6_successor_inherits_the_fire_time() {
    minimal_under(
        Profile::latest(),
        "same-name-successor",
        "EVICT-2",
        "budget 1, operations [recreate_pod], 1 node(s), 1 pod(s), \
         1 worker(s), 1 taint(s) to add, 0 seconds choice(s), horizon 2000 ms, channel capacities 1/1",
        12,
    );
}

/// #125332 / I2: the predecessor's finishing entry swallows the successor's decision.
#[test]
fn i2_successor_never_evicted() {
    minimal_under(
        Profile::latest(),
        "same-name-successor",
        "LIVE-1",
        "budget 1, operations [recreate_pod], 1 node(s), 1 pod(s), \
         1 worker(s), 1 taint(s) to add, 0 seconds choice(s), horizon 5000 ms, channel capacities 1/1",
        19,
    );
}

/// T2 (#108982): a lengthened toleration still evicts at the old instant; two seconds choices.
#[test]
fn t2_lengthened_toleration_still_evicts_early() {
    minimal_under(
        Profile::latest(),
        "toleration-change",
        "EVICT-2",
        "budget 1, operations [set_seconds], 1 node(s), 1 pod(s), \
         1 worker(s), 1 taint(s) to add, 2 seconds choice(s), horizon 2000 ms, channel capacities 1/1",
        11,
    );
}

/// T3: a change of tolerationSeconds leaves the pod without a timer that honours it.
#[test]
fn t3_shortened_toleration_is_not_evicted_in_time() {
    minimal_under(
        Profile::latest(),
        "toleration-change",
        "LIVE-1",
        "budget 1, operations [set_seconds], 1 node(s), 1 pod(s), \
         1 worker(s), 1 taint(s) to add, 1 seconds choice(s), horizon 2000 ms, channel capacities 1/1",
        6,
    );
}

/// T1 / #90794 (v1.18 only): a toleration made forever does not cancel the armed timer.
#[test]
fn t1_forever_toleration_does_not_cancel() {
    minimal_under(
        Profile::by_name("v1.18").expect("known profile"),
        "forever-toleration",
        "EVICT-1",
        "budget 1, operations [set_seconds], 1 node(s), 1 pod(s), \
         1 worker(s), 0 taint(s) to add, 1 seconds choice(s), horizon 3000 ms, channel capacities 1/1",
        9,
    );
}

/// R1 / #119862: the worker reads a stale node cache; a bind and a taint removal suffice.
#[test]
fn r1_stale_cache_deletes_without_justification() {
    minimal_under(
        Profile::latest(),
        "stale-cache",
        "JUST-1",
        "budget 2, operations [remove_taint, bind_pod], 1 node(s), 1 pod(s), \
         1 worker(s), 1 taint(s) to add, 0 seconds choice(s), horizon 1000 ms, channel capacities 1/1",
        13,
    );
}

/// R1 / #119862 through EVICT-1: the same two operations.
#[test]
fn r1_stale_cache_deletes_after_the_removal() {
    minimal_under(
        Profile::latest(),
        "stale-cache",
        "EVICT-1",
        "budget 2, operations [remove_taint, bind_pod], 1 node(s), 1 pod(s), \
         1 worker(s), 1 taint(s) to add, 0 seconds choice(s), horizon 1000 ms, channel capacities 1/1",
        13,
    );
}

/// R1 on `live-read` under latest (no live read): the same two operations.
#[test]
fn r1_live_read_configuration() {
    minimal_under(
        Profile::latest(),
        "live-read",
        "JUST-1",
        "budget 2, operations [remove_taint, bind_pod], 1 node(s), 1 pod(s), \
         1 worker(s), 1 taint(s) to add, 1 seconds choice(s), horizon 1000 ms, channel capacities 1/1",
        13,
    );
}

/// S2 / #140639: five failed DELETEs abandon the eviction (budget 6: one taint, five faults).
#[test]
fn s2_deletion_abandoned_after_five_attempts() {
    minimal_under(
        Profile::latest(),
        "failing-delete",
        "LIVE-1",
        "budget 6, operations [add_taint, fail_next_call], 1 node(s), 1 pod(s), \
         1 worker(s), 1 taint(s) to add, 0 seconds choice(s), horizon 1000 ms, channel capacities 1/1",
        35,
    );
}

/// N4: a completing older work removes the newer entry, orphaning its armed timer.
#[test]
fn n4_completing_work_orphans_a_timer() {
    minimal_under(
        Profile::latest(),
        "orphaned-timer",
        "TIMER-1",
        "budget 3, operations [add_taint, remove_taint], 1 node(s), 1 pod(s), \
         1 worker(s), 2 taint(s) to add, 0 seconds choice(s), horizon 1000 ms, channel capacities 1/1",
        27,
    );
}

/// N5 with a stale listing: at its smallest the same one recreation as N5.
#[test]
fn successor_through_a_stale_listing_is_deleted() {
    minimal_under(
        Profile::latest(),
        "successor-stale-listing",
        "UID-1",
        "budget 1, operations [recreate_pod], 1 node(s), 1 pod(s), \
         1 worker(s), 1 taint(s) to add, 0 seconds choice(s), horizon 1000 ms, channel capacities 1/1",
        10,
    );
}

/// I2 with a stale listing: one recreation, a longer horizon.
#[test]
fn successor_through_a_stale_listing_is_never_evicted() {
    minimal_under(
        Profile::latest(),
        "successor-stale-listing",
        "LIVE-1",
        "budget 1, operations [recreate_pod], 1 node(s), 1 pod(s), \
         1 worker(s), 1 taint(s) to add, 0 seconds choice(s), horizon 3000 ms, channel capacities 1/1",
        18,
    );
}
