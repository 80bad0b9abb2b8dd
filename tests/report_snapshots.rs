//! `taintcheck report` on the known upstream races (specs/verdicts.md): N1 (EVICT-1 on
//! `timer-vs-cancel`), N5/N6 (UID-1 on `same-name-successor`) and T4 (LIVE-2 on `restart`), each
//! under `latest`. The reports are deterministic (shortest counterexamples, no timings), so each
//! is a reviewed snapshot. Spec: CHECK-5.

use taintcheck_core::profile::Profile;
use taintcheck_model::check::config::CheckConfig;
use taintcheck_model::check::issue;
use taintcheck_model::check::TaintSys;

fn report(profile: &str, config: &str, property: &str) -> String {
    let model = TaintSys::new(
        Profile::by_name(profile).expect("known profile"),
        CheckConfig::builtin(config).expect("built-in config"),
    );
    let selection = format!("--config {config} --profile {profile}");
    issue::write(&model, property, &selection).expect("the property is violated")
}

#[test]
fn n1_timer_fires_while_the_untaint_is_queued() {
    insta::assert_snapshot!(report("latest", "timer-vs-cancel", "EVICT-1"));
}

#[test]
fn n5_successor_deleted_by_its_predecessors_work() {
    insta::assert_snapshot!(report("latest", "same-name-successor", "UID-1"));
}

#[test]
fn t4_restart_resets_the_countdown() {
    insta::assert_snapshot!(report("latest", "restart", "LIVE-2"));
}

#[test]
fn v1_18_names_its_own_files() {
    let r = report("v1.18", "timer-vs-cancel", "EVICT-1");
    assert!(
        r.contains("pkg/controller/nodelifecycle/scheduler/taint_manager.go"),
        "{r}"
    );
    assert!(!r.contains("tainteviction"), "{r}");
    assert!(
        r.contains(
            "**Affected versions:** Kubernetes 1.18.0-1.18.8 with default gates (taintcheck \
             profile `v1.18`; the upstream files it was read from: `taintcheck profiles \
             --kubernetes 1.18.0`)"
        ),
        "{r}"
    );
}
