//! Every id the code's comments and the documents cite resolves inside this repository: spec ids
//! (`CORE-A5`, `EVICT-1`, `PROFILE-11`, ranges such as `IMPORT-1..4`) are defined in `specs/*.md`,
//! and upstream ids (sections `§4.3`, interleavings `N5`, issue entries `R1`, `T2`, `I1`, `S2`,
//! `A6`, ...) in `specs/upstream.md`. A failure names the file and line of each unresolved id.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Tokens shaped like spec ids that are names of other things.
const NOT_IDS: &[&str] = &[
    "DNS-1123", // RFC 1123 names
    "KEP-2268", // Kubernetes enhancement proposals
    "KEP-3329", "KEP-5471", "SHA-256", "UTF-8",
    "NAME-1", // the scenario format's default UID, the pod's name with `-1`
];

/// Letters of upstream issue and interleaving ids (`specs/upstream.md`).
const UPSTREAM_LETTERS: &[u8] = b"RTISPAN";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The ids `specs/*.md` define: a spec id that opens a table row, a list item or a heading, and
/// an upstream id or section that opens a heading.
fn defined(specs: &[(PathBuf, String)]) -> BTreeSet<String> {
    let mut ids = BTreeSet::new();
    for (_, text) in specs {
        for line in text.lines() {
            let heading = line.starts_with('#');
            let rest = line.trim_start_matches(['|', '-', '*', '#', ' ']);
            let rest = rest.trim_start_matches("**");
            let first = rest.split([' ', '|', '*', '`', ':']).next().unwrap_or("");
            let first = first.trim_end_matches('.');
            let spec_id = spec_id_at(first.as_bytes(), 0) == Some(first.len());
            if spec_id || heading && (is_upstream_id(first) || is_section(first)) {
                ids.insert(first.to_string());
            }
        }
    }
    ids
}

fn is_upstream_id(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2
        && b.len() <= 3
        && UPSTREAM_LETTERS.contains(&b[0])
        && b[1..].iter().all(u8::is_ascii_digit)
}

fn is_section(s: &str) -> bool {
    s.strip_prefix('§').is_some_and(|n| {
        !n.is_empty()
            && n.split('.')
                .all(|p| !p.is_empty() && p.bytes().all(|c| c.is_ascii_digit()))
    })
}

/// The length of the spec id starting at `i` (`WORD(-WORD)*-[A-Z]?DIGITS`), if one does.
fn spec_id_at(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i;
    loop {
        let start = j;
        while j < b.len() && b[j].is_ascii_uppercase() {
            j += 1;
        }
        if j == start || j >= b.len() || b[j] != b'-' {
            return None;
        }
        j += 1;
        // After the hyphen: digits (the number), a letter then digits, or another word.
        let letter = usize::from(j < b.len() && b[j].is_ascii_uppercase());
        let digits = b[j + letter..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if digits > 0 {
            let end = j + letter + digits;
            let boundary = b.get(end).is_none_or(|c| !c.is_ascii_alphanumeric());
            return boundary.then_some(end - i);
        }
    }
}

/// One cited id and where.
struct Citation {
    file: PathBuf,
    line: usize,
    id: String,
    /// Why it is wrong even if defined (an ambiguous form), if it is.
    problem: Option<&'static str>,
}

/// The ids cited in `text` (line numbers from 1), ranges expanded.
fn citations(file: &Path, text: &str, comments_only: bool) -> Vec<Citation> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = if comments_only {
            match comment(line) {
                Some(c) => c,
                None => continue,
            }
        } else {
            line
        };
        let mut cite = |id: String, problem| {
            out.push(Citation {
                file: file.to_path_buf(),
                line: n + 1,
                id,
                problem,
            })
        };
        let b = line.as_bytes();
        // The letter of the last spec id's final part, and where it ended: a bare `A6` right
        // after `CORE-A5/` reads as `CORE-A6`, not as upstream A6.
        let mut last_spec: Option<(u8, usize)> = None;
        let mut i = 0;
        while i < b.len() {
            let after_word = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
            let next = i + line[i..].chars().next().map_or(1, char::len_utf8);
            if b[i] == b'-' || after_word {
                i = next;
                continue;
            }
            if let Some(len) = spec_id_at(b, i) {
                let id = &line[i..i + len];
                let (prefix, number) = split_number(id);
                let mut end = i + len;
                // A range: `IMPORT-1..4`, `CORE-A4..A7`.
                if line[end..].starts_with("..") {
                    let tail = &line[end + 2..];
                    let letter = prefix.chars().last().filter(char::is_ascii_uppercase);
                    let tail = match letter {
                        Some(l) => tail.strip_prefix(l).unwrap_or(""),
                        None => tail,
                    };
                    let digits: String = tail.chars().take_while(char::is_ascii_digit).collect();
                    if let Ok(last) = digits.parse::<u32>() {
                        for k in number..=last {
                            cite(format!("{prefix}{k}"), None);
                        }
                        end = line.len() - tail.len() + digits.len();
                    }
                } else if !NOT_IDS.contains(&id) {
                    cite(id.to_string(), None);
                }
                last_spec = prefix
                    .bytes()
                    .last()
                    .filter(u8::is_ascii_uppercase)
                    .map(|l| (l, end));
                i = end;
                continue;
            }
            if line[i..].starts_with('§') {
                let n: String = line[i + '§'.len_utf8()..]
                    .chars()
                    .take_while(|c| c.is_ascii_digit() || *c == '.')
                    .collect();
                let n = n.trim_end_matches('.');
                if !n.is_empty() {
                    cite(format!("§{n}"), None);
                }
                i += '§'.len_utf8() + n.len();
                continue;
            }
            if UPSTREAM_LETTERS.contains(&b[i]) && (i == 0 || b[i - 1] != b'.') {
                let digits = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
                let end = i + 1 + digits;
                let boundary = b.get(end).is_none_or(|c| !c.is_ascii_alphanumeric());
                if (1..=2).contains(&digits) && boundary {
                    let continues = last_spec.is_some_and(|(letter, spec_end)| {
                        letter == b[i]
                            && line[spec_end..i]
                                .trim_matches([' ', ',', '/'])
                                .trim_end_matches(" and")
                                .trim_end_matches(" or")
                                .trim()
                                .is_empty()
                    });
                    let problem = continues.then_some(
                        "reads as the previous spec id's sibling: write the spec id in full",
                    );
                    cite(line[i..end].to_string(), problem);
                    i = end;
                    continue;
                }
            }
            i = next;
        }
    }
    out
}

/// `CORE-A12` → (`CORE-A`, 12).
fn split_number(id: &str) -> (&str, u32) {
    let at = id.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    (&id[..at], id[at..].parse().expect("an id ends in digits"))
}

/// The comment on a line of Rust (`//`, `///`, `//!`), if it has one outside a string.
fn comment(line: &str) -> Option<&str> {
    let trimmed = line.trim_start();
    if let Some(c) = trimmed.strip_prefix("//") {
        return Some(c);
    }
    // A trailing comment: the first ` //` after code with no string literal open before it.
    let at = line.find(" //")?;
    let quotes = line[..at].matches('"').count() - line[..at].matches("\\\"").count();
    quotes.is_multiple_of(2).then(|| &line[at + 3..])
}

fn files(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.is_dir() {
            if name != "target" && name != "node_modules" && !name.starts_with('.') {
                files(&path, ext, out);
            }
        } else if name.ends_with(ext) {
            out.push(path);
        }
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Unresolved citations in the given documents and Rust sources, as `file:line: message`.
fn unresolved(
    specs: &[(PathBuf, String)],
    documents: &[(PathBuf, String)],
    sources: &[(PathBuf, String)],
) -> Vec<String> {
    let ids = defined(specs);
    let cited = documents
        .iter()
        .flat_map(|(p, t)| citations(p, t, false))
        .chain(sources.iter().flat_map(|(p, t)| citations(p, t, true)));
    cited
        .filter_map(|c| {
            let place = format!(
                "{}:{}",
                c.file.strip_prefix(root()).unwrap_or(&c.file).display(),
                c.line
            );
            match c.problem {
                Some(problem) => Some(format!("{place}: {}: {problem}", c.id)),
                None if !ids.contains(&c.id) => Some(format!(
                    "{place}: {} is cited but not defined in specs/",
                    c.id
                )),
                None => None,
            }
        })
        .collect()
}

fn load(paths: Vec<PathBuf>) -> Vec<(PathBuf, String)> {
    paths.into_iter().map(|p| (p.clone(), read(&p))).collect()
}

#[test]
fn every_cited_id_is_defined_in_specs() {
    let root = root();
    let mut spec_files = Vec::new();
    files(&root.join("specs"), ".md", &mut spec_files);
    let mut documents = spec_files.clone();
    files(&root.join("specs"), ".yaml", &mut documents);
    files(&root.join("docs"), ".md", &mut documents);
    documents.push(root.join("README.md"));
    let mut sources = Vec::new();
    for dir in ["core", "model", "impl", "cluster", "src", "tests"] {
        files(&root.join(dir), ".rs", &mut sources);
    }
    // This file's fixtures cite bogus ids on purpose.
    sources.retain(|p| !p.ends_with("tests/spec_ids.rs"));
    let specs = load(spec_files);
    assert!(
        defined(&specs).len() > 200,
        "the definitions were not found"
    );
    let problems = unresolved(&specs, &load(documents), &load(sources));
    assert!(
        problems.is_empty(),
        "{} unresolved citations:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn a_bogus_or_ambiguous_id_is_reported_with_its_place() {
    let spec = vec![(
        root().join("specs/x.md"),
        "| CORE-A5 | a step |\n| CORE-A6 | another |\n### N5 an interleaving\n### §4.3 a \
         section\n- **IMPORT-1 Input.**\n- **IMPORT-2 Times.**\n"
            .to_string(),
    )];
    let source = vec![(
        root().join("core/src/x.rs"),
        "/// Spec: CORE-A5, N5, §4.3, IMPORT-1..2.\nfn f() {} // CORE-A9 and N21\n\
         let s = \"CORE-A7\"; // §4.4\n/// CORE-A5/A6\n"
            .to_string(),
    )];
    let problems = unresolved(&spec, &[], &source);
    assert_eq!(
        problems,
        [
            "core/src/x.rs:2: CORE-A9 is cited but not defined in specs/",
            "core/src/x.rs:2: N21 is cited but not defined in specs/",
            "core/src/x.rs:3: §4.4 is cited but not defined in specs/",
            "core/src/x.rs:4: A6: reads as the previous spec id's sibling: write the spec id in full",
        ]
    );
}
