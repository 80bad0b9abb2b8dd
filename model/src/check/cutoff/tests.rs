use super::*;

fn config(text: &str) -> CheckConfig {
    CheckConfig::parse("x.yaml", "x", text).expect("a valid configuration")
}

const NODE: &str = "nodes: [{name: n1, taints: [k]}, {name: n2}]\n\
                    taints: [k]\noperations: [remove_taint]\n";

fn names(config: &CheckConfig) -> Vec<&str> {
    config.pods.iter().map(|p| p.name.as_str()).collect()
}

#[test]
fn classes_are_node_tolerations_and_pattern_membership() {
    let cfg = config(&format!(
        "{NODE}pods:\n\
         - {{name: web-1, node: n1, tolerations: [{{key: k, tolerationSeconds: 1}}]}}\n\
         - {{name: db-0, node: n1, tolerations: [{{key: k, tolerationSeconds: 1}}]}}\n\
         - {{name: web-2, node: n1, tolerations: [{{key: k, tolerationSeconds: 1}}]}}\n\
         - {{name: web-3, node: n2, tolerations: [{{key: k, tolerationSeconds: 1}}]}}\n\
         - {{name: web-4, node: n1, tolerations: [{{key: k, tolerationSeconds: 2}}]}}\n\
         - {{name: web-5, node: n1, tolerations: [{{key: k, tolerationSeconds: 1}}]}}\n\
         properties:\n\
         - {{name: db, always: {{never_deleted: {{pods: \"db-*\"}}}}}}\n"
    ));
    let pods: Vec<Vec<usize>> = classes(&cfg).into_iter().map(|c| c.pods).collect();
    // db-0 differs from web-1 only in the pattern; web-3 in its node; web-4 in its seconds.
    assert_eq!(pods, vec![vec![0, 2, 5], vec![1], vec![3], vec![4]]);
    let (cut, summary) = apply(cfg, &Profile::latest());
    assert_eq!(names(&cut), ["web-1", "db-0", "web-3", "web-4"]);
    let summary = summary.expect("a class was cut");
    assert_eq!((summary.pods, summary.classes, summary.checked), (6, 4, 4));
    assert_eq!(
        summary.describe(),
        "6 pods in 4 classes; checked 1 per class (4 pods; cutoff, MODEL-CUTOFF); \
         --no-cutoff checks all"
    );
}

#[test]
fn at_most_deletions_keeps_count_plus_one_of_the_classes_it_matches() {
    let pods: String = (1..=5)
        .map(|i| format!("  - {{name: web-{i}, node: n1}}\n  - {{name: db-{i}, node: n1}}\n"))
        .collect();
    let cfg = config(&format!(
        "{NODE}pods:\n{pods}properties:\n\
         - {{name: slow, always: {{at_most_deletions: {{pods: \"web-*\", count: 2, window: 1s}}}}}}\n"
    ));
    let cutoffs: Vec<usize> = classes(&cfg).iter().map(|c| c.cutoff).collect();
    assert_eq!(cutoffs, [3, 1]);
    let (cut, summary) = apply(cfg, &Profile::latest());
    assert_eq!(names(&cut), ["web-1", "db-1", "web-2", "web-3"]);
    assert_eq!(summary.map(|s| s.per_class), Some(3));
}

#[test]
fn nothing_is_cut_when_every_class_is_within_its_cutoff() {
    let cfg = CheckConfig::builtin("default").unwrap();
    let (cut, summary) = apply(cfg.clone(), &Profile::latest());
    assert_eq!((cut, summary), (cfg, None));
}

#[test]
fn a_rate_limit_couples_the_pods_and_the_bucket_bounds_them() {
    let cfg = CheckConfig::builtin("rate-limited-storm").unwrap();
    let (qps, burst) = {
        let limit = cfg.rate_limit.expect("a rate limit");
        (limit.tokens(), limit.burst())
    };
    let (cut, summary) = apply(cfg.clone(), &Profile::v1_18());
    assert_eq!(cut.pods.len(), cfg.pods.len(), "nothing cut");
    let summary = summary.expect("the class is larger than its cutoff");
    let why = summary.coupled.as_deref().expect("coupled");
    // v1.18 sends one DELETE per eviction: of three, the third request waits for the
    // (3 - burst)-th new token.
    let wait = (3 - i64::from(burst)).max(0) * 1000 / i64::from(qps);
    assert!(
        why.ends_with(&format!(
            "the last DELETE goes up to {wait} ms after the first"
        )),
        "{why}"
    );
    assert!(summary.describe().contains("checked all of them"));
}
