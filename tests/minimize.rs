//! `taintcheck minimize` (spec CHECK-4) on the known races N1, N5 and T4 under `latest`: the
//! smallest configuration found, asserted dimension by dimension, is still violated and is
//! minimal per dimension (every single-dimension shrink of it makes the property hold).

use taintcheck_model::check::config::CheckConfig;
use taintcheck_model::check::issue;
use taintcheck_model::check::minimize::{minimize, smaller, Size, DIMENSIONS};
use taintcheck_model::check::shortest;
use taintcheck_model::check::TaintSys;
use taintcheck_model::profile::Profile;

fn minimal(config: &str, property: &str, expected: &str, steps: usize) {
    let profile = Profile::latest();
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
