//! The real-time corpus (`specs/scenarios/realtime/`, SCN-RT) and `taintcheck upstream`: on the
//! reference runtime always; on upstream's own controllers on a real kube-apiserver when
//! `upstream/build.sh` has built them (skipped with the reason otherwise, failed instead when
//! `TAINTCHECK_REQUIRE_UPSTREAM=1`, as CI sets it after building).

mod cli_support;

use cli_support::{stderr, stdout, taintcheck};
use std::path::{Path, PathBuf};
use taintcheck_core::profile::Profile;
use taintcheck_formats::scenario::{check, parse_scenario};
use taintcheck_runtime::driver::{run_scenario, ClockKind};

/// The newest release and the oldest, which CI runs.
const RELEASES: [&str; 2] = ["1.37.2", "1.18.6"];

fn realtime() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("specs/scenarios/realtime");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("specs/scenarios/realtime exists")
        .map(|e| e.expect("readable directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
}

#[test]
fn the_realtime_corpus_is_short_playable_and_met_by_the_runtime() {
    let files = realtime();
    assert!(files.len() >= 10, "{} real-time scenarios", files.len());
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let s = parse_scenario(path.to_str().unwrap(), &text).unwrap();
        assert_eq!(
            Some(s.name.as_str()),
            path.file_stem().and_then(|n| n.to_str())
        );
        assert!(s.until.millis() <= 10_000, "{}: until {}", s.name, s.until);
        let refused = taintcheck_cluster::play::unsupported(&s, false);
        assert!(refused.is_empty(), "{}: {refused:?}", s.name);
        for profile in [Profile::v1_18(), Profile::latest(), Profile::fixed()] {
            let trace = run_scenario(&s, profile, ClockKind::Virtual);
            let failures = check(&s.expectations_for(profile.name), &trace.records);
            assert!(
                failures.is_empty(),
                "{} under {}: {failures:?}",
                s.name,
                profile.name
            );
        }
    }
}

#[test]
fn scenarios_a_real_api_server_cannot_play_are_refused_naming_the_line() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("specs/scenarios/s2-140639-failing-deletes.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    let line = 1 + text
        .lines()
        .position(|l| l.contains("failRequests"))
        .expect("the scenario fails requests");
    let out = taintcheck(&["upstream", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "cannot run on a real API server: line {line}: failRequests"
        )),
        "{err}"
    );
}

#[test]
fn missing_binaries_name_the_build_command() {
    let empty = std::env::temp_dir().join(format!("tc-nobin-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let scenario = realtime()[0].clone();
    let out = taintcheck(&[
        "upstream",
        scenario.to_str().unwrap(),
        "--bin",
        empty.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("controlplane: not built: run `upstream/build.sh` first"),
        "{}",
        stderr(&out)
    );
    std::fs::write(empty.join("controlplane"), "").unwrap();
    let out = taintcheck(&[
        "upstream",
        scenario.to_str().unwrap(),
        "--bin",
        empty.to_str().unwrap(),
        "--kubernetes",
        "1.99.0",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("run `upstream/build.sh 1.99.0`"),
        "{}",
        stderr(&out)
    );
    std::fs::remove_dir_all(&empty).unwrap();
}

/// Whether upstream's binaries for `release` are built; if not, skip (printing why) or, under
/// `TAINTCHECK_REQUIRE_UPSTREAM=1`, fail.
fn built(release: &str) -> bool {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("upstream/bin");
    let missing: Vec<String> = [
        "controlplane".to_string(),
        format!("taint-eviction-v{release}"),
    ]
    .into_iter()
    .filter(|b| !bin.join(b).is_file())
    .collect();
    if missing.is_empty() {
        return true;
    }
    let why = format!(
        "upstream/bin lacks {}: run `upstream/build.sh {release}` (needs Go)",
        missing.join(", ")
    );
    if std::env::var("TAINTCHECK_REQUIRE_UPSTREAM").as_deref() == Ok("1") {
        panic!("TAINTCHECK_REQUIRE_UPSTREAM=1 but {why}");
    }
    eprintln!("skipped: {why}");
    false
}

/// `files` on `release`'s own controller: every run conforms (no false alarm), meets the
/// scenario's expectations, and lies in the envelope.
fn runs_on(release: &str, files: &[PathBuf]) {
    if !built(release) {
        return;
    }
    let files: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
    let mut args = vec!["upstream", "--kubernetes", release, "--json"];
    args.extend(files.iter().map(String::as_str));
    let out = taintcheck(&args);
    let text = stdout(&out);
    let reports: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON report a line"))
        .collect();
    assert_eq!(reports.len(), files.len(), "{text}\n{}", stderr(&out));
    for r in &reports {
        assert_eq!(r["conforms"], true, "false alarm: {r}");
        assert_eq!(r["expect_failures"], serde_json::json!([]), "{r}");
        assert_eq!(r["envelope_failures"], serde_json::json!([]), "{r}");
        assert_eq!(r["refused"], serde_json::json!([]), "{r}");
    }
    assert_eq!(out.status.code(), Some(0), "{text}");
}

/// The whole real-time corpus on the newest release, then 1.18.6: one after the other, since
/// each run is timed against a latency bound and two control planes at once would share the
/// machine's cores.
#[test]
fn realtime_corpus_on_the_newest_release_and_1_18_6() {
    for release in RELEASES {
        runs_on(release, &realtime());
    }
}
