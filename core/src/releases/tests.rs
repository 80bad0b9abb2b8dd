use super::*;
use crate::profile::{CancelFlag, CompletionPolicy, DeleteSequence, ImmediatePath};

fn name(version: &str) -> &'static str {
    Release::parse(version).expect(version).name
}

/// Every minor from 1.18 to the newest is a profile named after it.
#[test]
fn every_minor_is_a_profile() {
    for minor in 18..=37 {
        let text = format!("1.{minor}");
        let p = Profile::by_name(&text).unwrap_or_else(|| panic!("{text}"));
        assert_eq!(p.name, text);
        // `v1.18` is the named profile (1.18.0 to 1.18.8), not the minor's newest patches.
        if minor != 18 {
            let v = Profile::by_name(&format!("v{text}"));
            assert_eq!(v.map(|p| p.name), Some(p.name));
        }
    }
    assert_eq!(Profile::by_name("v1.18"), Some(Profile::V1_18));
    assert!(Profile::by_name("1.17").is_none() && Profile::by_name("1.38").is_none());
}

/// A patch maps to its range; where a minor's patches differ, the patch decides.
#[test]
fn a_patch_finds_its_range() {
    for (version, range) in [
        ("1.18.0", "1.18.0-1.18.8"),
        ("1.18.6", "1.18.0-1.18.8"),
        ("1.18.8", "1.18.0-1.18.8"),
        ("1.18.9", "1.18"),
        ("1.18.20", "1.18"),
        ("1.26.10", "1.26.0-1.26.10"),
        ("1.26.11", "1.26"),
        ("1.27.7", "1.27.0-1.27.7"),
        ("1.27.8", "1.27"),
        ("1.28.3", "1.28.0-1.28.3"),
        ("1.28.4", "1.28"),
        ("v1.31.4", "1.31"),
        ("1.34.2", "1.34"),
        ("1.37.2", "1.37"),
    ] {
        assert_eq!(name(version), range, "{version}");
    }
    for bad in ["1.31.15", "1.37.3", "1.17.0", "2.0"] {
        assert!(Release::parse(bad).is_err(), "{bad}");
    }
    for malformed in ["1", "1.x", "1.31.4.1", "1.031", "", "1.31.-1"] {
        assert_eq!(
            Release::parse(malformed).err(),
            Some(ReleaseError::Malformed),
            "{malformed:?}"
        );
    }
}

/// The ranges tile each minor's patches, oldest first, with no gap and no overlap; every
/// range has its first and last patch pinned; every pinned release lies in a range.
#[test]
fn ranges_tile_the_patches_and_are_pinned_at_both_ends() {
    for pair in RELEASES.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        if a.minor == b.minor {
            assert_eq!(a.patches.1 + 1, b.patches.0, "{} / {}", a.name, b.name);
        } else {
            assert_eq!(
                (a.minor + 1, 0),
                (b.minor, b.patches.0),
                "{} / {}",
                a.name,
                b.name
            );
        }
    }
    for r in &RELEASES {
        let pinned: Vec<_> = r.pinned().map(|p| p.release).collect();
        let end = |patch| format!("1.{}.{patch}", r.minor);
        // 1.18.20's k8s.io/api is not served; its kubernetes module is pinned all the same.
        assert!(
            pinned.contains(&end(r.patches.0).as_str()),
            "{}: {pinned:?}",
            r.name
        );
        assert!(
            pinned.contains(&end(r.patches.1).as_str()),
            "{}: {pinned:?}",
            r.name
        );
    }
    for p in PINNED {
        assert!(Release::parse(p.release).is_ok(), "{}", p.release);
        assert!(!p.files.is_empty(), "{}", p.release);
    }
}

/// The named upstream profiles are the oldest and the newest switch sets: `v1.18` is 1.18.0 to
/// 1.18.8, `latest` the newest release as shipped (default gates).
#[test]
fn named_profiles_are_the_ends_of_the_release_table() {
    let same = |a: &Profile, b: &Profile| a.switches() == b.switches();
    assert!(same(&SWITCH_SETS[0].switches, &Profile::V1_18));
    assert!(same(&SWITCH_SETS[6].switches, &Profile::LATEST));
    assert!(same(&Profile::by_name("1.18.6").unwrap(), &Profile::V1_18));
    assert!(same(&Profile::by_name("1.37").unwrap(), &Profile::LATEST));
    let names = |p: &Profile| -> Vec<_> { p.releases().iter().map(|r| r.name).collect() };
    assert_eq!(names(&Profile::V1_18), ["1.18.0-1.18.8"]);
    assert_eq!(names(&Profile::LATEST), ["1.35", "1.36", "1.37"]);
    assert!(Profile::FIXED.releases().is_empty());
    // The switch sets are distinct: one verdict column each.
    for (i, a) in SWITCH_SETS.iter().enumerate() {
        for b in &SWITCH_SETS[i + 1..] {
            assert!(!same(&a.switches, &b.switches), "{} = {}", a.label, b.label);
        }
        assert!(Release::of_set(i).count() > 0, "{}", a.label);
    }
}

/// specs/profiles.md's table of releases (PROFILE-R2), switch set by switch set.
#[test]
fn switch_sets_have_the_switches_of_the_spec_table() {
    use CancelFlag::*;
    use CompletionPolicy::*;
    use DeleteSequence::*;
    use ImmediatePath::*;
    let expected = [
        (
            "1.18.0-1.18.8",
            false,
            TwoNows,
            Tombstone,
            Absent,
            DeleteOnly,
        ),
        ("1.18.9-1.25", true, TwoNows, Tombstone, Absent, DeleteOnly),
        (
            "1.26.0-1.26.10, 1.27.0-1.27.7, 1.28.0-1.28.3",
            true,
            TwoNows,
            Tombstone,
            Absent,
            GetApplyDelete,
        ),
        (
            "1.26.11-1.26.15, 1.27.8-1.27.16, 1.28.4-1.29",
            true,
            TwoNows,
            Tombstone,
            Absent,
            GetPatchDelete,
        ),
        (
            "1.30-1.32",
            true,
            SameNow,
            Tombstone,
            Absent,
            GetPatchDelete,
        ),
        ("1.33-1.34", true, SameNow, Delete, Absent, GetPatchDelete),
        (
            "1.35-1.37",
            true,
            SameNow,
            Delete,
            BeforeStart,
            GetPatchDelete,
        ),
    ];
    for (set, (label, forever, immediate, completion, flag, sequence)) in
        SWITCH_SETS.iter().zip(expected)
    {
        let p = set.switches;
        assert_eq!(set.label, label);
        assert_eq!(p.name, label);
        assert_eq!(
            (
                p.cancel_on_forever,
                p.immediate_path,
                p.completion,
                p.cancel_flag
            ),
            (forever, immediate, completion, flag),
            "{label}"
        );
        assert_eq!(p.delete_sequence, sequence, "{label}");
        // Every upstream release: the same retries, keys and deadlines; no Lt/Gt by default.
        assert_eq!(p.switches()[5..], Profile::V1_18.switches()[5..], "{label}");
    }
}

/// `--feature-gates`: a gate changes its switch; kube-controller-manager's refusals are ours.
#[test]
fn gates_change_their_switch_or_are_refused() {
    let r = Release::parse("1.35").unwrap();
    let gt = r
        .with_gates(&[(Gate::TaintTolerationComparisonOperators, true)])
        .unwrap();
    assert!(gt.comparison_operators && !r.profile().comparison_operators);
    assert_eq!(gt.name, "1.35,TaintTolerationComparisonOperators=true");
    assert_eq!(Profile::by_name(gt.name), Some(gt));
    let default = r
        .with_gates(&[(Gate::TaintTolerationComparisonOperators, false)])
        .unwrap();
    assert_eq!(default, r.profile());

    let off = Release::parse("1.27.3")
        .unwrap()
        .with_gates(&[(Gate::PodDisruptionConditions, false)])
        .unwrap();
    assert_eq!(off.delete_sequence, DeleteSequence::DeleteOnly);
    assert_eq!(Profile::by_name(off.name), Some(off));
    let on = Release::parse("1.25").unwrap();
    let on = on
        .with_gates(&[(Gate::PodDisruptionConditions, true)])
        .unwrap();
    assert_eq!(on.delete_sequence, DeleteSequence::GetPatchDelete);

    let err = |v: &str, g: Gate, b: bool| Release::parse(v).unwrap().with_gates(&[(g, b)]).err();
    assert_eq!(
        err("1.31", Gate::PodDisruptionConditions, false),
        Some(ReleaseError::Locked(Gate::PodDisruptionConditions, false))
    );
    assert_eq!(
        err("1.34", Gate::PodDisruptionConditions, true),
        Some(ReleaseError::NotInRelease(Gate::PodDisruptionConditions))
    );
    assert_eq!(
        err("1.34.1", Gate::TaintTolerationComparisonOperators, true),
        Some(ReleaseError::NotInRelease(
            Gate::TaintTolerationComparisonOperators
        ))
    );
    // Off, the node lifecycle controller runs the same code: no switch changes.
    let inline = Release::parse("1.29")
        .unwrap()
        .with_gates(&[(Gate::SeparateTaintEvictionController, false)])
        .unwrap();
    assert_eq!(inline, Release::parse("1.29").unwrap().profile());

    assert_eq!(
        parse_gates("TaintTolerationComparisonOperators=true,PodDisruptionConditions=false"),
        Ok(vec![
            (Gate::TaintTolerationComparisonOperators, true),
            (Gate::PodDisruptionConditions, false)
        ])
    );
    assert_eq!(
        parse_gates("NoSuchGate=true"),
        Err(ReleaseError::UnknownGate("NoSuchGate".into()))
    );
    assert!(matches!(
        parse_gates("PodDisruptionConditions"),
        Err(ReleaseError::GateSyntax(_))
    ));
    assert!(matches!(
        parse_gates("PodDisruptionConditions=yes"),
        Err(ReleaseError::GateSyntax(_))
    ));
}
