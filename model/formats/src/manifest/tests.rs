use super::*;
use taintcheck_core::api::{Operator, Taint, TaintEffect as E, Toleration};

fn messages(m: &Manifests) -> Vec<String> {
    m.errors.iter().map(ToString::to_string).collect()
}

#[test]
fn reads_a_single_pod_into_compact_form() {
    let text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  namespace: shop\n  uid: u-1\nspec:\n  nodeName: w1\n  tolerations:\n  - key: k\n    operator: Exists\n    effect: NoExecute\n    tolerationSeconds: 30\n  - key: e\n    value: v\n";
    let m = read_str("pod.yaml", text);
    assert!(m.errors.is_empty(), "{:?}", messages(&m));
    let pod = m.objects[0].compact_pod().unwrap();
    assert_eq!(pod.key.to_string(), "shop/web");
    assert_eq!(&*pod.uid.0, "u-1");
    assert_eq!(pod.node_name.as_deref(), Some("w1"));
    assert_eq!(
        pod.tolerations,
        vec![
            Toleration::exists("k", Some(E::NoExecute), Some(30)),
            Toleration::equal("e", "v", None, None),
        ]
    );
    assert_eq!(
        pod.tolerations[1].operator,
        Operator::Equal,
        "empty operator is Equal"
    );
}

#[test]
fn reads_lists_typed_lists_and_multi_document_streams() {
    let list = r#"{"apiVersion":"v1","kind":"List","items":[
        {"apiVersion":"v1","kind":"Node","metadata":{"name":"a"},"spec":{"taints":[{"key":"k","effect":"NoExecute","timeAdded":"2025-03-05T14:02:16Z"}]}},
        {"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}]}"#;
    let m = read_str("list.json", list);
    assert!(m.errors.is_empty(), "{:?}", messages(&m));
    assert_eq!(
        m.objects.iter().map(Located::kind).collect::<Vec<_>>(),
        vec!["Node", "Pod"]
    );
    let node = m.objects[0].compact_node().unwrap();
    let mut want = Taint::new("k", "", E::NoExecute);
    want.time_added = Some(taintcheck_core::time::Time(1_741_183_336_000));
    assert_eq!(node.taints, vec![want]);
    assert_eq!(
        m.objects[1].compact_pod().unwrap().key.to_string(),
        "default/p",
        "no namespace: default"
    );

    let typed = "apiVersion: v1\nkind: PodList\nitems:\n- metadata:\n    name: x\n- metadata:\n    name: y\n";
    let m = read_str("pods.yaml", typed);
    assert!(m.errors.is_empty(), "{:?}", messages(&m));
    assert_eq!(m.objects.len(), 2);
    assert_eq!(m.objects[1].line(), 6);

    let stream = "apiVersion: v1\nkind: Node\nmetadata:\n  name: a\n---\n---\napiVersion: v1\nkind: Node\nmetadata:\n  name: b\n";
    let m = read_str("nodes.yaml", stream);
    assert_eq!(m.objects.len(), 2, "empty documents are skipped");
    assert_eq!(m.objects[1].line(), 7);
}

#[test]
fn type_errors_are_located_field_errors_not_panics() {
    let text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  tolerations:\n  - key: k\n    tolerationSeconds: abc\n";
    assert_eq!(
        messages(&read_str("p.yaml", text)),
        vec![
            r#"p.yaml:8: spec.tolerations[0].tolerationSeconds: Invalid value: "abc": expected i64"#
        ]
    );
    let text = "apiVersion: v1\nkind: Node\nmetadata:\n  name: [1, 2]\n";
    assert_eq!(
        messages(&read_str("n.yaml", text)),
        vec![r#"n.yaml:4: metadata.name: Invalid value: [1,2]: expected a string"#]
    );
}

#[test]
fn missing_required_strings_decode_as_empty_and_validate_upstream_style() {
    let text = "apiVersion: v1\nkind: Node\nmetadata:\n  name: n\nspec:\n  taints:\n  - value: v\n";
    let m = read_str("n.yaml", text);
    assert!(m.errors.is_empty(), "{:?}", messages(&m));
    let diags: Vec<String> = m.objects[0]
        .validate(false)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        diags[0],
        r#"n.yaml:7: spec.taints[0].key: Invalid value: "": name part must be non-empty"#
    );
    assert_eq!(
        diags.last().unwrap(),
        "n.yaml:7: spec.taints[0].effect: Required value"
    );
}

#[test]
fn unsupported_documents_are_reported() {
    let cases = [
        (
            "apiVersion: apps/v1\nkind: Deployment\n",
            r#"f:1: apiVersion: Unsupported value: "apps/v1": supported values: "v1""#,
        ),
        (
            "apiVersion: v1\nkind: Service\n",
            r#"f:2: kind: Unsupported value: "Service": supported values: "List", "Node", "NodeList", "Pod", "PodList""#,
        ),
        ("apiVersion: v1\n", "f:1: kind: Required value"),
        ("- 1\n- 2\n", "f:1: Invalid value: [1,2]: must be an object"),
        (
            "kind: List\napiVersion: v1\nitems: 3\n",
            "f:3: items: Invalid value: 3: must be a list",
        ),
        (
            "a: [1,\n",
            "f:2: while parsing a node, did not find expected node content",
        ),
    ];
    for (text, want) in cases {
        let m = read_str("f", text);
        assert_eq!(messages(&m), vec![want.to_owned()], "{text}");
    }
}

#[test]
fn unreadable_files_are_diagnostics() {
    let m = read_file(std::path::Path::new("/nonexistent/taintcheck.yaml"));
    assert_eq!(m.errors.len(), 1);
    assert!(m.errors[0]
        .to_string()
        .starts_with("/nonexistent/taintcheck.yaml: cannot read file:"));
}

#[test]
fn printed_manifests_read_back_to_the_same_compact_objects() {
    let mut taint = Taint::new("example.com/sla", "950", E::NoExecute);
    taint.time_added = Some(taintcheck_core::time::Time(1_700_000_000_000));
    let node = taintcheck_core::api::Node {
        name: "n1".into(),
        taints: vec![taint, Taint::new("k", "", E::NoSchedule)],
    };
    let text = node_yaml(&node);
    let m = read_str("n.yaml", &text);
    assert!(m.errors.is_empty(), "{text}");
    assert_eq!(m.objects[0].compact_node(), Some(node));
    assert!(text.contains("value: \"950\""), "{text}");

    let pod = taintcheck_core::api::Pod {
        key: taintcheck_core::api::PodKey::new("ns", "p"),
        uid: taintcheck_core::api::Uid("".into()),
        node_name: None,
        tolerations: vec![
            Toleration::exists("", None, Some(-1)),
            Toleration::equal("a", "true", Some(E::PreferNoSchedule), None),
        ],
    };
    let m = read_str("p.yaml", &pod_yaml(&pod));
    assert_eq!(m.objects[0].compact_pod(), Some(pod));
}

mod properties {
    use super::*;
    use proptest::prelude::*;
    use quickcheck::quickcheck;
    use taintcheck_core::strategies;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// PROP: compact → manifest → compact is the identity, and generated objects validate.
        #[test]
        fn nodes_roundtrip_through_manifests(node in strategies::node()) {
            let m = read_str("n.yaml", &node_yaml(&node));
            prop_assert!(m.errors.is_empty());
            prop_assert_eq!(m.objects[0].validate(false), vec![]);
            prop_assert_eq!(m.objects[0].compact_node(), Some(node));
        }

        #[test]
        fn pods_roundtrip_through_manifests(pod in strategies::pod()) {
            let m = read_str("p.yaml", &pod_yaml(&pod));
            prop_assert!(m.errors.is_empty());
            prop_assert_eq!(m.objects[0].validate(true), vec![]);
            prop_assert_eq!(m.objects[0].compact_pod(), Some(pod));
        }

        /// PROP: reading never panics on YAML-ish noise built from manifest fragments.
        #[test]
        fn reading_fragment_noise_never_panics(parts in prop::collection::vec(prop::sample::select(vec![
            "apiVersion: v1\n", "kind: Pod\n", "kind: Node\n", "kind: List\n", "items:\n", "- ", "spec:\n",
            "  tolerations:\n", "  taints:\n", "  - key: k\n", "    effect: NoExecute\n", "    tolerationSeconds: x\n",
            "    operator: [\n", "---\n", "{", "}", "\"", ": ", "  ", "\t", "metadata: {name: 3}\n", "&a ", "*a\n",
        ]), 0..30)) {
            let text: String = parts.concat();
            let m = read_str("noise.yaml", &text);
            for o in &m.objects {
                let _ = o.validate(true);
            }
        }
    }

    quickcheck! {
        /// PROP (quickcheck): arbitrary text never panics the reader, and every diagnostic is
        /// located in the file.
        fn reading_arbitrary_text_never_panics(text: String) -> bool {
            let m = read_str("q.yaml", &text);
            m.errors.iter().all(|d| d.file == "q.yaml" && d.line.is_some())
        }
    }
}
