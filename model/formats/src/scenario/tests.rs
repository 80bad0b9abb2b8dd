//! The scenario reader's behaviour, seen through [`parse_scenario`].

use super::*;

const GOOD: &str = "\
name: example
nodes:
  - name: node1
pods:
  - name: web-0
    node: node1
    tolerations:
      - key: key1
        operator: Equal
        value: value1
        effect: NoExecute
        tolerationSeconds: 3600
ops:
  - at: 10s
    deletePod: default/web-0
  - at: 5s
    restartController: {}
expect:
  all:
    notDeleted: [web-0]
";

#[test]
fn reads_pods_ops_in_time_order_and_expectations() {
    let s = parse_scenario("s.yaml", GOOD).unwrap();
    assert_eq!(s.pods[0].pod.uid, Uid("web-0-1".into()));
    assert_eq!(s.pods[0].pod.tolerations[0].seconds, Some(3600));
    assert_eq!(s.ops[0].op, Op::RestartController);
    assert_eq!(s.ops[1].op, Op::DeletePod(PodKey::new("default", "web-0")));
    assert_eq!(s.ops[1].line, 14);
    assert_eq!(s.until, Time(610_000));
    assert_eq!(
        s.expectations_for("latest").not_deleted[0].pod.key,
        PodKey::new("default", "web-0")
    );
}

#[test]
fn the_latency_bound_covers_the_slowest_informer_and_every_broken_watch() {
    let lagging = GOOD.replace(
            "ops:\n",
            "runtime: {nodeInformerLag: 2s, podInformerLag: 1s}\nops:\n  - at: 1s\n    informerLag: {pods: 3s}\n",
        );
    let s = parse_scenario("s.yaml", &lagging).unwrap();
    assert_eq!(s.latency_bound(), Duration(3_000));
    let dropped = lagging.replace(
        "ops:\n",
        "ops:\n  - at: 2s\n    dropWatch: nodes\n    for: 10s\n",
    );
    let s = parse_scenario("s.yaml", &dropped).unwrap();
    // The largest lag (3 s), the broken watch (10 s) and the node informer's lag (2 s).
    assert_eq!(s.latency_bound(), Duration(15_000));
    assert_eq!(
        parse_scenario("s.yaml", GOOD).unwrap().latency_bound(),
        Duration::ZERO
    );
}

/// The compact form is validated as the API server validates a pod: a bad operator or a
/// `tolerationSeconds` on another effect is an error at that field, never a pod that
/// silently tolerates nothing.
#[test]
fn compact_tolerations_are_validated_like_the_api_server() {
    let bad = GOOD
        .replace("operator: Equal", "operator: Foo")
        .replace("effect: NoExecute", "effect: NoSchedule");
    let err = parse_scenario("s.yaml", &bad).unwrap_err().to_string();
    assert_eq!(
            err,
            "s.yaml:9: pods[0].tolerations[0].operator: Unsupported value: \"Foo\": supported values: \"Equal\", \"Exists\", \"Lt\", \"Gt\"\n\
             s.yaml:11: pods[0].tolerations[0].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set"
        );
}

#[test]
fn errors_name_file_line_and_field() {
    let bad = GOOD
        .replace("at: 10s", "at: soon")
        .replace("    node: node1\n", "    nod: node1\n");
    let err = parse_scenario("s.yaml", &bad).unwrap_err().to_string();
    assert_eq!(
            err,
            "s.yaml:6: pods[0].nod: unknown field: supported fields: \"name\", \"namespace\", \"uid\", \"node\", \"tolerations\", \"daemonSet\"\n\
             s.yaml:14: ops[0].at: Invalid value: \"soon\": expected a duration such as 300s, 1.5s or 250ms"
        );
    let err = parse_scenario("s.yaml", "name: [").unwrap_err().to_string();
    assert!(err.starts_with("s.yaml:2: invalid YAML: "), "{err}");
}

/// SCN-4: a pod without `uid` gets one that includes its namespace outside `default`, so pods of
/// one name in two namespaces are two pods; a true duplicate is still an error at both lines.
#[test]
fn generated_uids_tell_namespaces_apart() {
    let text = "name: ns\nnodes: [{name: n1}]\npods:\n  - {name: web, node: n1}\n  - {name: web, namespace: team, node: n1}\n  - manifest: {apiVersion: v1, kind: Pod, metadata: {name: web, namespace: other}, spec: {nodeName: n1, containers: [{name: c, image: i}]}}\n";
    let s = parse_scenario("s.yaml", text).unwrap();
    let uids: Vec<&str> = s.pods.iter().map(|p| &*p.pod.uid.0).collect();
    assert_eq!(uids, ["web-1", "team/web-1", "other/web-1"]);
    let clash = text.replace(
        "{name: web, namespace: team, node: n1}",
        "{name: web, node: n1}",
    );
    let err = parse_scenario("s.yaml", &clash).unwrap_err().to_string();
    assert!(
        err.contains("s.yaml:5: pods[1].name: Duplicate value: \"default/web\": also at line 4"),
        "{err}"
    );
}

/// SCN-3: `qps` and `burst` give the controller's client a token bucket; one without the other
/// is an error at the missing field.
#[test]
fn the_runtime_may_rate_limit_the_client() {
    let limited = GOOD.replace("ops:\n", "runtime: {qps: 20, burst: 30}\nops:\n");
    let s = parse_scenario("s.yaml", &limited).unwrap();
    assert_eq!(s.runtime.rate_limit, RateLimit::qps(20, 30));
    assert_eq!(
        parse_scenario("s.yaml", GOOD).unwrap().runtime.rate_limit,
        None
    );
    let half = GOOD.replace("ops:\n", "runtime: {qps: 20}\nops:\n");
    let err = parse_scenario("s.yaml", &half).unwrap_err().to_string();
    assert!(err.contains("runtime.burst: Required value"), "{err}");
    let zero = GOOD.replace("ops:\n", "runtime: {qps: 0, burst: 30}\nops:\n");
    let err = parse_scenario("s.yaml", &zero).unwrap_err().to_string();
    assert!(err.contains("runtime.qps: Invalid value"), "{err}");
}
