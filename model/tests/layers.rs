//! The modules of `check/` import one way (the module doc of `check` draws the layers): no module
//! reaches, directly or through others, a module that reaches it. A circle would mean that no
//! module of it can be read, tested or moved without the others.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Each top-level module of `check/` with the sibling modules its non-test code names.
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/check");
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in rust_files(&root) {
        let rel = file.strip_prefix(&root).unwrap();
        let parts: Vec<String> = rel
            .with_extension("")
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        if parts.iter().any(|p| p == "tests") || test_only(&file) {
            continue;
        }
        let top = parts[0].clone();
        if top == "mod" {
            continue;
        }
        // `super::` from a top-level file names a sibling; from `x/y.rs`, `super::super::` does.
        let sibling_prefix = "super::".repeat(parts.len());
        let code = without_tests(&fs::read_to_string(&file).unwrap());
        let names = graph.entry(top.clone()).or_default();
        for prefix in ["crate::check::", sibling_prefix.as_str()] {
            for name in named_after(&code, prefix) {
                if name != top {
                    names.insert(name);
                }
            }
        }
    }
    let modules: BTreeSet<String> = graph.keys().cloned().collect();
    for names in graph.values_mut() {
        names.retain(|n| modules.contains(n));
    }
    graph
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// A file its parent declares under `#[cfg(test)]`.
fn test_only(file: &Path) -> bool {
    let name = file.file_stem().unwrap().to_string_lossy();
    let dir = file.parent().unwrap();
    let parent = dir.with_extension("rs");
    let parent = if parent.exists() {
        parent
    } else {
        dir.join("mod.rs")
    };
    fs::read_to_string(parent).is_ok_and(|p| p.contains(&format!("#[cfg(test)]\nmod {name};")))
}

/// The code without comments and without its `#[cfg(test)] mod tests { .. }` (always last).
fn without_tests(code: &str) -> String {
    let code = match code.find("#[cfg(test)]\nmod tests {") {
        Some(i) => &code[..i],
        None => code,
    };
    code.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first path segment after each `prefix` (each item of a `prefix{a, b::c}` list).
fn named_after(code: &str, prefix: &str) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut names = BTreeSet::new();
    for (i, _) in code.match_indices(prefix) {
        // `super::super::x` is not a sibling of a top-level file.
        if i >= 7 && &code[i - 7..i] == "super::" && prefix.starts_with("super::") {
            continue;
        }
        let rest = &code[i + prefix.len()..];
        if let Some(list) = rest.strip_prefix('{') {
            let list = &list[..list.find('}').unwrap_or(list.len())];
            names.extend(list.split(',').map(|item| ident(item.trim())));
        } else {
            names.insert(ident(rest));
        }
    }
    names.retain(|n| !n.is_empty() && n.chars().next().unwrap().is_ascii_lowercase());
    names
}

/// A circle of modules, if the graph has one.
fn circle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        m: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == m) {
            let mut c = path[i..].to_vec();
            c.push(m.to_owned());
            return Some(c);
        }
        if done.contains(m) {
            return None;
        }
        path.push(m.to_owned());
        for n in &graph[m] {
            if let Some(c) = visit(n, graph, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(m.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|m| visit(m, graph, &mut Vec::new(), &mut done))
}

#[test]
fn check_modules_import_one_way() {
    let graph = imports();
    assert!(graph.len() >= 25, "found only {graph:?}");
    if let Some(c) = circle(&graph) {
        panic!("a circle of modules in check/: {}", c.join(" -> "));
    }
}

#[test]
fn the_layers_hold_where_the_module_doc_draws_them() {
    let graph = imports();
    // What the layering rests on: the state sits below every operation, the transition
    // relation below the reduction, and the run above the system.
    let below = |lower: &str, upper: &str| {
        assert!(
            !graph[lower].contains(upper),
            "{lower} names {upper}, which sits above it"
        );
    };
    below("state", "system");
    below("state", "properties");
    below("transition", "reduction");
    below("transition", "system");
    below("reduction", "system");
    below("properties", "transition");
    below("config", "properties");
    below("run", "partition");
    assert!(graph["system"].contains("transition") && graph["reduction"].contains("transition"));
}

#[test]
fn the_finder_sees_a_circle() {
    let mut graph = imports();
    graph.get_mut("state").unwrap().insert("system".into());
    let c = circle(&graph).expect("state -> system closes a circle");
    assert_eq!(c.first(), c.last());
}
