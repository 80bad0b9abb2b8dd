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

#[test]
fn n1_needs_one_pod_and_one_untaint() {
    minimal("timer-vs-cancel", "EVICT-1", "N1", 0);
}

#[test]
fn n5_needs_two_nodes_and_a_recreation() {
    minimal("same-name-successor", "UID-1", "N5", 0);
}

#[test]
fn t4_needs_a_restart() {
    minimal("restart", "LIVE-2", "T4", 0);
}
