//! Upstream's `timed_workers_test.go` (1.18 and newest, plus the ownership-token test of PR
//! #141568), reproduced on the core's timed queue. The Go tests count how often the work
//! function runs; here a run is a work that starts (the "Marking for deletion" event). Their fake
//! clock is the virtual `now`.

use std::sync::Arc;
use taintcheck_core::api::{Pod, PodKey, ResourceVersion, Uid};
use taintcheck_core::driver::Cluster;
use taintcheck_core::profile::{CompletionPolicy, Profile};
use taintcheck_core::releases::SWITCH_SETS;
use taintcheck_core::time::Time;
use taintcheck_core::timed_queue::{Entry, Immediate, TimedQueue, WorkKey, WorkPhase};
use taintcheck_core::{
    work, ApiResult, Arrivals, Context, Effect, EventKind, FetchedPod, Verb, WorkId,
};

/// The successful answer to the request work `id` waits for, if any (the Go tests' fake client
/// succeeds at everything).
fn success(queue: &TimedQueue, id: WorkId) -> Option<ApiResult> {
    let WorkPhase::Requesting { request, .. } = &queue.work(id)?.phase else {
        return None;
    };
    Some(match &request.verb {
        Verb::Get => ApiResult::Pod(Arc::new(FetchedPod {
            pod: Pod {
                key: request.pod.clone(),
                uid: Uid("uid".into()),
                node_name: Some("node".into()),
                tolerations: vec![],
            },
            version: ResourceVersion(1),
            disruption_target: false,
        })),
        Verb::GetNode(_) => return None, // a fixed-design read: no upstream test sends it
        Verb::PatchDisruptionTarget => ApiResult::Patched(ResourceVersion(2)),
        Verb::Delete => ApiResult::Deleted,
    })
}

fn key(name: &str) -> WorkKey {
    WorkKey {
        pod: PodKey::new(name, name),
        uid: None,
    }
}

/// The queue, a profile and a clock; the API answers every request with success.
struct Harness {
    queue: TimedQueue,
    profile: Profile,
    view: Cluster,
    now: Time,
    effects: Vec<Effect>,
}

impl Harness {
    fn new(profile: Profile) -> Harness {
        Harness {
            queue: TimedQueue::new(),
            profile,
            view: Cluster::default(),
            now: Time::ZERO,
            effects: Vec::new(),
        }
    }

    fn add(&mut self, name: &str, created_at: i64, fire_at: i64) {
        self.queue.add_work(
            &key(name),
            Time(created_at),
            Time(fire_at),
            Immediate::Nil,
            &mut self.effects,
        );
    }

    fn cancel(&mut self, name: &str) -> bool {
        self.queue
            .cancel_work(&key(name), &self.profile, &mut self.effects)
    }

    /// Step the fake clock to `t` and run every due work to completion.
    fn run_until(&mut self, t: i64) {
        self.now = Time(t);
        loop {
            let works: Vec<_> = self.queue.works().keys().copied().collect();
            let mut progressed = false;
            for id in works {
                let arrivals = Arrivals::default();
                let (p, out) = (&self.profile, &mut self.effects);
                let cx = Context {
                    profile: p,
                    view: &self.view,
                    arrivals: &arrivals,
                    now: self.now,
                };
                progressed |= work::fire_timer(&mut self.queue, id.timer(), cx, out);
                progressed |= work::start_work(&mut self.queue, id, cx, out);
                if let Some(answer) = success(&self.queue, id) {
                    progressed |= work::responded(&mut self.queue, id.request(), answer);
                }
                progressed |= work::continue_work(&mut self.queue, id, cx, out);
                progressed |= self.queue.complete(id, p).is_some();
            }
            if !progressed {
                return;
            }
        }
    }

    /// How often the work function ran.
    fn runs(&self) -> usize {
        self.effects
            .iter()
            .filter(|e| matches!(e, Effect::Event(ev) if ev.kind == EventKind::MarkingForDeletion))
            .count()
    }
}

/// Every distinct switch set of upstream releases (`releases::SWITCH_SETS`): 1.18.0 to the
/// newest.
fn eras() -> Vec<Profile> {
    SWITCH_SETS.iter().map(|s| s.switches).collect()
}

/// `TestExecute`: five works with a zero delay all run.
#[test]
fn execute() {
    for profile in eras() {
        let mut h = Harness::new(profile);
        for name in ["1", "2", "3", "4", "5"] {
            h.add(name, 0, 0);
        }
        h.run_until(0);
        assert_eq!(h.runs(), 5, "{}", profile.name);
    }
}

/// `TestExecuteDelayed`: duplicate adds are skipped; every work runs once after 11 s.
#[test]
fn execute_delayed() {
    for profile in eras() {
        let mut h = Harness::new(profile);
        for name in ["1", "2", "3", "4", "5", "1", "2", "3", "4", "5"] {
            h.add(name, 0, 10_000);
        }
        h.run_until(9_999);
        assert_eq!(h.runs(), 0, "{}", profile.name);
        h.run_until(11_000);
        assert_eq!(h.runs(), 5, "{}", profile.name);
    }
}

/// `TestCancel`: two of five cancelled works never run.
#[test]
fn cancel() {
    for profile in eras() {
        let mut h = Harness::new(profile);
        for name in ["1", "2", "3", "4", "5", "1", "2", "3", "4", "5"] {
            h.add(name, 0, 10_000);
        }
        assert!(h.cancel("2") && h.cancel("4"));
        h.run_until(11_000);
        assert_eq!(h.runs(), 3, "{}", profile.name);
    }
}

/// `TestCancelAndRead`: a cancelled key can be added again and then runs.
#[test]
fn cancel_and_read() {
    for profile in eras() {
        let mut h = Harness::new(profile);
        for name in ["1", "2", "3", "4", "5", "1", "2", "3", "4", "5"] {
            h.add(name, 0, 10_000);
        }
        h.cancel("2");
        h.cancel("4");
        h.add("2", 0, 10_000);
        h.run_until(11_000);
        assert_eq!(h.runs(), 4, "{}", profile.name);
    }
}

/// PR #141568's `TestRunningWorkerCompletionDoesNotRemoveReplacement` (N4): a running work's
/// completion leaves a newer entry alone. Its era is `latest` plus ownership tokens; plain
/// `latest` deletes the replacement, orphaning its timer.
#[test]
fn running_worker_completion_does_not_remove_replacement() {
    let tokens = Profile {
        completion: CompletionPolicy::OwnedDelete,
        ..Profile::latest()
    };
    let mut snapshot = String::new();
    for (profile, kept) in [(tokens, true), (Profile::latest(), false)] {
        // (first worker, whether upstream's CancelWork reports it cancelled)
        for (scheduled, cancel_succeeds) in [(false, false), (true, true)] {
            let mut h = Harness::new(profile);
            let k = key("pod");
            if scheduled {
                h.add("pod", 0, 1_000);
            } else {
                h.add("pod", 0, 0);
            }
            let first = *h.queue.works().keys().next().unwrap();
            h.now = Time(if scheduled { 1_000 } else { 0 });
            let arrivals = Arrivals::default();
            let cx = Context {
                profile: &h.profile,
                view: &h.view,
                arrivals: &arrivals,
                now: h.now,
            };
            work::fire_timer(&mut h.queue, first.timer(), cx, &mut h.effects);
            work::start_work(&mut h.queue, first, cx, &mut h.effects);
            work::continue_work(&mut h.queue, first, cx, &mut h.effects);
            assert!(matches!(
                h.queue.work(first).unwrap().phase,
                WorkPhase::Requesting { .. }
            ));
            assert_eq!(h.cancel("pod"), cancel_succeeds, "{}", profile.name);
            h.add("pod", 2_000, 10_000);
            let replacement = h.queue.get_worker(&k).expect("replacement added");
            assert_eq!(replacement.1, Time(10_000));
            // Release the first worker: its GET, PATCH and DELETE succeed, then it completes.
            for _ in 0..3 {
                let result = success(&h.queue, first).expect("a request in flight");
                let arrivals = Arrivals::default();
                let cx = Context {
                    profile: &h.profile,
                    view: &h.view,
                    arrivals: &arrivals,
                    now: h.now,
                };
                work::responded(&mut h.queue, first.request(), result);
                work::continue_work(&mut h.queue, first, cx, &mut h.effects);
            }
            assert!(h.queue.complete(first, &h.profile).is_some());
            let after = h.queue.entry(&k).cloned();
            assert_eq!(
                matches!(
                    after,
                    Some(Entry::Timer {
                        fire_at: Time(10_000),
                        ..
                    })
                ),
                kept,
                "{} scheduled={scheduled}",
                profile.name
            );
            assert_eq!(h.cancel("pod"), kept, "{}", profile.name);
            assert!(h.queue.get_worker(&k).is_none());
            if !kept {
                // N4: the replacement's timer is orphaned: still armed, no longer cancellable.
                h.run_until(10_000);
                assert_eq!(h.runs(), 2, "the orphaned timer still fires");
            }
            let title = if profile.completion == CompletionPolicy::OwnedDelete {
                "latest + ownership tokens"
            } else {
                "latest"
            };
            snapshot.push_str(&format!(
                "## {title}, first worker scheduled: {scheduled}\n"
            ));
            for effect in &h.effects {
                snapshot.push_str(&format!("{effect}\n"));
            }
        }
    }
    insta::assert_snapshot!(snapshot);
}

/// The timer of `name`'s work fires (the work is spawned, not yet started).
fn fire(h: &mut Harness, name: &str, at: i64) {
    h.now = Time(at);
    let id = h
        .queue
        .entry(&key(name))
        .and_then(Entry::work)
        .expect("an armed work");
    let arrivals = Arrivals::default();
    let cx = Context {
        profile: &h.profile,
        view: &h.view,
        arrivals: &arrivals,
        now: h.now,
    };
    assert!(work::fire_timer(
        &mut h.queue,
        id.timer(),
        cx,
        &mut h.effects
    ));
}

/// The queue of 1.33 and 1.34 (`timed_workers.go` after `4766d191`, before #134945): the key
/// is deleted when the work returns, so the name can be scheduled again, and a cancel after the
/// timer fired does not stop the work (no cancelled flag). 1.32 keeps a tombstone that the
/// completing work writes even after the cancel removed the key (N3); 1.35 has the flag, and
/// the same cancel suppresses the work.
#[test]
fn the_1_33_queue_deletes_on_completion_and_has_no_cancelled_flag() {
    for (name, runs_after_cancel, runs_after_re_add) in [
        ("1.32", 1, 1),
        ("1.33", 1, 2),
        ("1.34", 1, 2),
        ("1.35", 0, 1),
    ] {
        let mut h = Harness::new(Profile::by_name(name).expect("a release profile"));
        h.add("pod", 0, 1_000);
        fire(&mut h, "pod", 1_000);
        assert!(h.cancel("pod"), "{name}: a timer entry reports its cancel");
        h.run_until(1_000);
        assert_eq!(h.runs(), runs_after_cancel, "{name}");
        h.add("pod", 2_000, 2_000);
        h.run_until(2_000);
        assert_eq!(h.runs(), runs_after_re_add, "{name}");
    }
}
