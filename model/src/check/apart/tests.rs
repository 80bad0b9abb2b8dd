use super::*;
use crate::check::config::CheckConfig;
use crate::check::run::{run, RunOptions};
use taintcheck_core::profile::Profile;

fn statuses(r: &Report) -> Vec<(&str, Status)> {
    r.properties.iter().map(|p| (p.id, p.status)).collect()
}

/// `default` (two pods in two classes, on two nodes) checked together and class by class: the
/// same verdicts, each path from the run of the pod it is about.
#[test]
fn the_classes_apart_give_the_verdicts_of_the_whole() {
    for profile in [Profile::v1_18(), Profile::latest(), Profile::fixed()] {
        let model = TaintSys::new(profile, CheckConfig::builtin("default").unwrap());
        let whole = run(model.clone(), &RunOptions::default(), |_, _, _| {});
        let parts = split(&model);
        let names: Vec<&Vec<String>> = parts.iter().map(|(n, _)| n).collect();
        assert_eq!(names, [&vec!["p1".to_string()], &vec!["p2".to_string()]]);
        let runs = parts
            .into_iter()
            .map(|(names, m)| (names, run(m, &RunOptions::default(), |_, _, _| {})))
            .collect();
        let (apart, from) = combine(runs);
        assert_eq!(statuses(&apart), statuses(&whole), "{}", profile.name);
        assert!(apart.unique_states < whole.unique_states);
        for p in &apart.properties {
            let Some(path) = p.path() else { continue };
            let pods = &from[p.id];
            let text = path.text();
            assert!(
                text.contains(&format!("default/{}", pods[0])),
                "{}: {text}",
                p.id
            );
        }
        assert_eq!(apart.cutoff.as_ref().and_then(|c| c.runs), Some(2));
    }
}

#[test]
fn a_rate_limit_or_a_count_of_evictions_couples_the_classes() {
    let limited = TaintSys::new(
        Profile::latest(),
        CheckConfig::builtin("rate-limited-storm").unwrap(),
    );
    assert!(coupled(&limited).is_some());
    let free = TaintSys::new(Profile::latest(), CheckConfig::builtin("default").unwrap());
    assert_eq!(coupled(&free), None);
}
