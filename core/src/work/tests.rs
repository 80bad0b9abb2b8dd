//! The work's timer steps called one at a time on a bare timed queue (semantics §6.1; spec
//! CORE-A11): a timer acts only when due, and a failed attempt is retried until upstream's last
//! attempt (S2, N14), or for ever under the fixed design's durable retry after a re-check of the
//! caches (CORE-A14).

use super::*;
use crate::api::{Node, Pod, PodKey, TaintEffect};
use crate::arrivals::Arrivals;
use crate::driver::Cluster;
use crate::timed_queue::{Immediate, WorkKey};

/// Pod `ns/p` (incarnation `u`) on `node1`, tainted with an untolerated NoExecute taint.
fn cluster() -> Cluster {
    let mut view = Cluster::default();
    view.nodes.insert(
        "node1".into(),
        Node {
            name: "node1".into(),
            taints: vec![Taint::new("t", "", TaintEffect::NoExecute)],
        },
    );
    let pod = Pod {
        key: PodKey::new("ns", "p"),
        uid: Uid("u".into()),
        node_name: Some("node1".into()),
        tolerations: vec![],
    };
    view.pods.insert(pod.key.clone(), pod);
    view
}

/// A queue with one work for `ns/p` under `profile`'s key, armed for 50 ms.
fn queue(profile: &Profile) -> (TimedQueue, WorkId) {
    let uid = Uid("u".into());
    let key = WorkKey::new(profile.work_key, &PodKey::new("ns", "p"), &uid);
    let mut q = TimedQueue::new();
    let id = q
        .add_work(&key, Time(0), Time(50), Immediate::Nil, &mut vec![])
        .unwrap();
    (q, id)
}

fn fire(q: &mut TimedQueue, id: WorkId, profile: &Profile, view: &Cluster, now: i64) -> bool {
    let arrivals = Arrivals::default();
    let cx = Context {
        profile,
        view,
        arrivals: &arrivals,
        now: Time(now),
    };
    fire_timer(q, id.timer(), cx, &mut vec![])
}

fn attempt(q: &TimedQueue, id: WorkId) -> Option<u32> {
    match q.work(id)?.phase {
        WorkPhase::Requesting { attempt, .. } => Some(attempt),
        _ => None,
    }
}

/// Upstream `time.AfterFunc` fires at its deadline, not before: an armed timer spawns the
/// work's goroutine from `fire_at` on, and a timer that is not armed does nothing.
#[test]
fn an_armed_timer_spawns_the_work_only_when_due() {
    let latest = Profile::latest();
    let (mut q, id) = queue(&latest);
    let view = cluster();
    assert!(!fire(&mut q, id, &latest, &view, 49));
    assert_eq!(q.work(id).unwrap().phase, WorkPhase::Armed);
    assert!(fire(&mut q, id, &latest, &view, 50));
    assert_eq!(q.work(id).unwrap().phase, WorkPhase::Spawned);
    assert!(!fire(&mut q, id, &latest, &view, 60), "spawned: no timer");
}

/// Upstream's `deletePodHandler` retries a failed attempt after its backoff, at most
/// `retries` (5) attempts in all, then gives up (§6.1, S2, N14); it reads no cache in between,
/// so a pod gone from the cache is still retried.
#[test]
fn upstream_retries_after_the_backoff_until_the_last_attempt() {
    let latest = Profile::latest();
    let gone = Cluster::default();
    for (failed, next) in [(1, Some(2)), (4, Some(5)), (5, None)] {
        let (mut q, id) = queue(&latest);
        let backoff = WorkPhase::Backoff {
            attempt: failed,
            until: Time(60),
        };
        q.work_mut(id).unwrap().phase = backoff.clone();
        assert!(!fire(&mut q, id, &latest, &gone, 59), "not yet due");
        assert_eq!(q.work(id).unwrap().phase, backoff);
        assert!(fire(&mut q, id, &latest, &gone, 60));
        assert_eq!(attempt(&q, id), next, "after attempt {failed}");
        if next.is_none() {
            let failed = WorkPhase::Finished {
                outcome: Outcome::Failed,
            };
            assert_eq!(q.work(id).unwrap().phase, failed, "gave up");
        }
    }
}

/// Fixed design (PROFILE-6, CORE-A14): past upstream's last attempt the work retries still, each
/// attempt after re-checking the caches: while they call for eviction it goes on, once the pod
/// is gone it is abandoned.
#[test]
fn fixed_retries_past_the_last_attempt_after_a_recheck() {
    let fixed = Profile::fixed();
    for (view, next) in [(cluster(), Some(6)), (Cluster::default(), None)] {
        let (mut q, id) = queue(&fixed);
        q.work_mut(id).unwrap().phase = WorkPhase::Backoff {
            attempt: fixed.attempts,
            until: Time(60),
        };
        assert!(fire(&mut q, id, &fixed, &view, 60));
        assert_eq!(attempt(&q, id), next);
        if next.is_none() {
            let abandoned = WorkPhase::Finished {
                outcome: Outcome::Abandoned,
            };
            assert_eq!(q.work(id).unwrap().phase, abandoned);
        }
    }
}

/// The spawned work starts and, if it marked the pod, takes its next step (its first request).
fn start(q: &mut TimedQueue, id: WorkId, profile: &Profile, view: &Cluster) -> Vec<Effect> {
    let arrivals = Arrivals::default();
    let cx = Context {
        profile,
        view,
        arrivals: &arrivals,
        now: Time(50),
    };
    let mut out = vec![];
    assert!(start_work(q, id, cx, &mut out));
    if q.work(id).is_some_and(|w| w.phase == WorkPhase::Marked) {
        assert!(continue_work(q, id, cx, &mut out));
    }
    out
}

/// A spawned goroutine (CORE-A12): upstream emits "Marking for deletion" and sends its first
/// request without reading the caches (§6.1), unless its cancelled flag is set (`008b3652`,
/// §5.5), when it exits at once; a work that is not spawned does not start.
#[test]
fn a_spawned_work_starts_unless_cancelled() {
    let latest = Profile::latest();
    let gone = Cluster::default();
    let (mut q, id) = queue(&latest);
    let arrivals = Arrivals::default();
    let cx = Context {
        profile: &latest,
        view: &gone,
        arrivals: &arrivals,
        now: Time(50),
    };
    assert!(
        !start_work(&mut q, id, cx, &mut vec![]),
        "armed, not spawned"
    );
    q.work_mut(id).unwrap().phase = WorkPhase::Spawned;
    let out = start(&mut q, id, &latest, &gone);
    assert!(matches!(
        &out[0],
        Effect::Event(EventRecord {
            kind: EventKind::MarkingForDeletion,
            ..
        })
    ));
    assert_eq!(attempt(&q, id), Some(1));

    let (mut q, id) = queue(&latest);
    let mut work = q.work_mut(id).unwrap();
    work.phase = WorkPhase::Spawned;
    work.cancelled = true;
    drop(work);
    let out = start(&mut q, id, &latest, &gone);
    assert_eq!(q.work(id), None, "exits without running");
    assert_eq!(
        out,
        [decision(PodKey::new("ns", "p"), Note::Suppressed)],
        "no request"
    );
}

/// Fixed design (CORE-A14): the goroutine re-checks the caches before its first request and
/// starts only while they call for eviction now.
#[test]
fn fixed_starts_after_a_recheck() {
    let fixed = Profile::fixed();
    for (view, started) in [(cluster(), true), (Cluster::default(), false)] {
        let (mut q, id) = queue(&fixed);
        q.work_mut(id).unwrap().phase = WorkPhase::Spawned;
        start(&mut q, id, &fixed, &view);
        assert_eq!(attempt(&q, id).is_some(), started);
    }
}

/// The sleep between attempts: upstream's constant 10 ms (§6.1); the fixed design's durable
/// retry doubles it per failed attempt up to its bound (PROFILE-6).
#[test]
fn backoff_is_constant_upstream_and_doubles_under_durable_retry() {
    let latest = Profile::latest();
    let fixed = Profile::fixed();
    for attempt in [1, 2, 5] {
        assert_eq!(backoff(&latest, attempt), Duration(10));
    }
    let grown: Vec<i64> = [1, 2, 3, 4, 10, 40]
        .into_iter()
        .map(|a| backoff(&fixed, a).0)
        .collect();
    assert_eq!(grown, [10, 20, 40, 80, 5_000, 5_000]);
}

/// Work `id` of `q` waiting for `verb` (sent with `version`, having read `fetched`) gets
/// `result`; its phase after.
fn answer(
    profile: &Profile,
    verb: Verb,
    version: Option<u64>,
    fetched: Option<Arc<FetchedPod>>,
    result: ApiResult,
) -> WorkPhase {
    let (mut q, id) = queue(profile);
    let key = q.work(id).unwrap().key.clone();
    q.work_mut(id).unwrap().phase = WorkPhase::Requesting {
        attempt: 1,
        request: ApiRequest {
            id: id.request(),
            verb,
            pod: key.pod.clone(),
            uid: key.uid.clone(),
            version: version.map(ResourceVersion),
        },
        fetched,
    };
    let (view, arrivals) = (cluster(), Arrivals::default());
    let cx = Context {
        profile,
        view: &view,
        arrivals: &arrivals,
        now: Time(60),
    };
    assert!(responded(&mut q, id.request(), result));
    assert!(continue_work(&mut q, id, cx, &mut vec![]));
    q.work(id).unwrap().phase.clone()
}

/// The pod as a GET returns it, incarnation `uid`, `DisruptionTarget` already set or not.
fn fetched(uid: &str, disruption_target: bool) -> Arc<FetchedPod> {
    let mut pod = cluster().pods.values().next().unwrap().clone();
    pod.uid = Uid(uid.into());
    Arc::new(FetchedPod {
        pod,
        version: ResourceVersion(7),
        disruption_target,
    })
}

/// The request a work sends next: (verb, UID precondition, version precondition).
fn sent(phase: &WorkPhase) -> Option<(Verb, Option<Uid>, Option<ResourceVersion>)> {
    match phase {
        WorkPhase::Requesting { request, .. } => {
            Some((request.verb.clone(), request.uid.clone(), request.version))
        }
        _ => None,
    }
}

fn finished(outcome: Outcome) -> WorkPhase {
    WorkPhase::Finished { outcome }
}

/// Upstream's `addConditionAndDeletePod` (§6.1, §6.2): GET the pod, PATCH the condition unless
/// it is there already, DELETE by name; any error, a 404 included, fails the attempt.
#[test]
fn upstream_gets_patches_then_deletes_and_retries_any_error() {
    let latest = Profile::latest();
    let u = Some(Uid("u".into()));
    let get = |r| answer(&latest, Verb::Get, None, None, r);
    let patch = (Verb::PatchDisruptionTarget, u.clone(), None);
    assert_eq!(sent(&get(ApiResult::Pod(fetched("u", false)))), Some(patch));
    let delete = Some((Verb::Delete, None, None));
    assert_eq!(sent(&get(ApiResult::Pod(fetched("u", true)))), delete);
    let patched = ApiResult::Patched(ResourceVersion(8));
    let after_patch = answer(&latest, Verb::PatchDisruptionTarget, None, None, patched);
    assert_eq!(sent(&after_patch), delete);
    let deleted = answer(&latest, Verb::Delete, None, None, ApiResult::Deleted);
    assert_eq!(deleted, finished(Outcome::Succeeded));
    for error in [ApiResult::NotFound, ApiResult::PreconditionFailed] {
        let phase = answer(&latest, Verb::Delete, None, None, error.clone());
        assert!(matches!(phase, WorkPhase::Backoff { .. }), "{error:?}");
    }
}

/// Fixed design (PROFILE-5, PROFILE-8, PROFILE-12): the live read reads the pod, then its node,
/// and patches with UID and resourceVersion preconditions only while the node still exposes the
/// pod; a successor's pod, a 404 or a failed UID precondition abandon the work, a failed
/// version precondition retries.
#[test]
fn fixed_reads_live_and_abandons_what_is_no_longer_its_pod() {
    let fixed = Profile::fixed();
    let u = Some(Uid("u".into()));
    let get = |r| answer(&fixed, Verb::Get, None, None, r);
    let node = Some((Verb::GetNode("node1".into()), None, None));
    assert_eq!(sent(&get(ApiResult::Pod(fetched("u", false)))), node);
    let successor = get(ApiResult::Pod(fetched("u2", false)));
    assert_eq!(successor, finished(Outcome::Abandoned));
    let node_get = Verb::GetNode("node1".into());
    let read = |node: Node| {
        let result = ApiResult::Node(Arc::new(node));
        answer(
            &fixed,
            node_get.clone(),
            None,
            Some(fetched("u", false)),
            result,
        )
    };
    let tainted = cluster().nodes.values().next().unwrap().clone();
    let patch = (
        Verb::PatchDisruptionTarget,
        u.clone(),
        Some(ResourceVersion(7)),
    );
    assert_eq!(sent(&read(tainted.clone())), Some(patch));
    let clean = Node {
        taints: vec![],
        ..tainted
    };
    assert!(matches!(read(clean), WorkPhase::Backoff { .. }));
    let delete = |version, r| answer(&fixed, Verb::Delete, version, None, r);
    assert_eq!(
        delete(None, ApiResult::NotFound),
        finished(Outcome::Abandoned)
    );
    let uid_failed = delete(None, ApiResult::PreconditionFailed);
    assert_eq!(uid_failed, finished(Outcome::Abandoned));
    let version_failed = delete(Some(7), ApiResult::PreconditionFailed);
    assert!(matches!(version_failed, WorkPhase::Backoff { .. }));
}

/// Upstream's cancelled flag is read once, when the goroutine starts (`008b3652`, §5.5): a work
/// cancelled while its GET is in flight goes on to PATCH. The fixed design reads it before every
/// request (PROFILE-4) and stops.
#[test]
fn the_cancelled_flag_stops_a_running_work_only_in_the_fixed_design() {
    for (profile, stopped) in [(Profile::latest(), false), (Profile::fixed(), true)] {
        let (mut q, id) = queue(&profile);
        let key = q.work(id).unwrap().key.clone();
        let mut work = q.work_mut(id).unwrap();
        work.cancelled = true;
        work.phase = WorkPhase::Requesting {
            attempt: 1,
            request: ApiRequest {
                id: id.request(),
                verb: Verb::Get,
                pod: key.pod,
                uid: key.uid,
                version: None,
            },
            fetched: None,
        };
        drop(work);
        let (view, arrivals) = (cluster(), Arrivals::default());
        let cx = Context {
            profile: &profile,
            view: &view,
            arrivals: &arrivals,
            now: Time(60),
        };
        let result = ApiResult::Pod(fetched("u", false));
        assert!(responded(&mut q, id.request(), result));
        assert!(continue_work(&mut q, id, cx, &mut vec![]));
        let phase = &q.work(id).unwrap().phase;
        assert_eq!(
            *phase == finished(Outcome::Abandoned),
            stopped,
            "{}: {phase:?}",
            profile.name
        );
    }
}

/// The switches apart from the profiles that ship them (specs/profiles.md): a DELETE-only
/// sequence under UID keys carries the UID precondition (PROFILE-8), and without a live read
/// the DELETE after a PATCH carries no resourceVersion (PROFILE-12: the version is the live
/// read's).
#[test]
fn preconditions_follow_their_switches() {
    let delete_only = Profile {
        uid_precondition: true,
        work_key: crate::profile::WorkKeyPolicy::Uid,
        ..Profile::v1_18()
    };
    let (mut q, id) = queue(&delete_only);
    q.work_mut(id).unwrap().phase = WorkPhase::Spawned;
    start(&mut q, id, &delete_only, &cluster());
    let u = Some(Uid("u".into()));
    let delete = Some((Verb::Delete, u, None));
    assert_eq!(sent(&q.work(id).unwrap().phase), delete);

    let versioned = Profile {
        version_precondition: true,
        ..Profile::latest()
    };
    let patched = ApiResult::Patched(ResourceVersion(8));
    let after = answer(&versioned, Verb::PatchDisruptionTarget, None, None, patched);
    assert_eq!(sent(&after), Some((Verb::Delete, None, None)));
}

/// client-go's `tryThrottle` (CORE-THROTTLE): an attempt whose client has no token left waits
/// in `Throttled`, its timer armed for the token's instant; the timer sends the request then,
/// not before. With a token left the request goes at once.
#[test]
fn a_request_without_a_token_waits_for_it() {
    use crate::throttle::RateLimit;
    let latest = Profile::latest();
    let view = cluster();
    let arrivals = Arrivals::default();
    let cx = |now| Context {
        profile: &latest,
        view: &view,
        arrivals: &arrivals,
        now: Time(now),
    };
    let key = WorkKey::new(latest.work_key, &PodKey::new("ns", "p"), &Uid("u".into()));
    // One token per 100 ms, one at once.
    let limit = RateLimit::new(1, Duration(100), 1);
    for drained in [false, true] {
        let mut q = TimedQueue::with_rate_limit(limit);
        let id = q
            .add_work(&key, Time(0), Time(50), Immediate::Nil, &mut vec![])
            .unwrap();
        if drained {
            q.bucket_mut().unwrap().reserve(Time(0));
        }
        q.work_mut(id).unwrap().phase = WorkPhase::Backoff {
            attempt: 1,
            until: Time(60),
        };
        let mut out = vec![];
        assert!(fire_timer(&mut q, id.timer(), cx(60), &mut out));
        if !drained {
            assert_eq!(attempt(&q, id), Some(2));
            assert!(matches!(out[..], [Effect::Api(_)]), "{out:?}");
            continue;
        }
        let armed = Effect::ArmTimer {
            id: id.timer(),
            fire_at: Time(100),
        };
        assert_eq!(out, [armed]);
        assert!(matches!(
            q.work(id).unwrap().phase,
            WorkPhase::Throttled {
                attempt: 2,
                until: Time(100),
                ..
            }
        ));
        assert_eq!(q.next_deadline(), Some(Time(100)));
        let mut out = vec![];
        assert!(
            !fire_timer(&mut q, id.timer(), cx(99), &mut out),
            "no token yet"
        );
        assert!(out.is_empty() && attempt(&q, id).is_none());
        assert!(fire_timer(&mut q, id.timer(), cx(100), &mut out));
        assert_eq!(attempt(&q, id), Some(2));
        assert!(
            matches!(&out[..], [Effect::Api(r)] if r.verb == Verb::Get),
            "{out:?}"
        );
    }
}

/// PROFILE-4 with a rate limit: a work cancelled while its PATCH waits for its token. The
/// fixed design reads its flag when the token is granted and sends nothing (the leftover
/// `DisruptionTarget` of issue 42, CANCEL-2); upstream's works, which read it only when they
/// start, send the PATCH. The token stays spent: the next request waits for the one after.
#[test]
fn a_work_cancelled_while_it_waits_for_its_token_sends_nothing() {
    use crate::throttle::RateLimit;
    let view = cluster();
    let arrivals = Arrivals::default();
    for (profile, sends) in [(Profile::latest(), true), (Profile::fixed(), false)] {
        let cx = |now| Context {
            profile: &profile,
            view: &view,
            arrivals: &arrivals,
            now: Time(now),
        };
        let key = WorkKey::new(profile.work_key, &PodKey::new("ns", "p"), &Uid("u".into()));
        let mut q = TimedQueue::with_rate_limit(RateLimit::new(1, Duration(100), 1));
        let id = q
            .add_work(&key, Time(0), Time(0), Immediate::Nil, &mut vec![])
            .unwrap();
        // The GET took the bucket's one token; the PATCH reserved the next, at 100 ms.
        q.bucket_mut().unwrap().reserve(Time(0));
        assert_eq!(q.bucket_mut().unwrap().reserve(Time(0)), Time(100));
        let patch = ApiRequest {
            id: id.request(),
            verb: Verb::PatchDisruptionTarget,
            pod: key.pod.clone(),
            uid: key.uid.clone(),
            version: None,
        };
        q.work_mut(id).unwrap().phase = WorkPhase::Throttled {
            attempt: 1,
            request: patch,
            fetched: None,
            until: Time(100),
        };
        // The node update's cancel lands during the wait; it reports true only where the work
        // is certain not to write again.
        let cancelled = q.cancel_work(&key, &profile, &mut vec![]);
        let mut out = vec![];
        assert!(fire_timer(&mut q, id.timer(), cx(100), &mut out));
        let patched = out
            .iter()
            .any(|e| matches!(e, Effect::Api(r) if r.verb == Verb::PatchDisruptionTarget));
        assert_eq!(patched, sends, "{}: {out:?}", profile.name);
        if !sends {
            assert!(cancelled, "the cancel reached the waiting work");
            assert_eq!(q.work(id).unwrap().phase, finished(Outcome::Abandoned));
            assert!(out.contains(&Effect::Decision(Decision {
                pod: key.pod.clone(),
                note: Note::Suppressed,
            })));
            assert_eq!(q.bucket().unwrap().earliest(Time(100)), Time(200));
        }
    }
}

/// A DELETE waiting for its token is not in flight: under the fixed design a cancel reaches
/// it (and reports true), and the work sends nothing when the token is granted. A DELETE
/// already sent cannot be recalled and keeps its entry (CORE-A9).
#[test]
fn a_throttled_delete_is_recalled_but_a_sent_one_is_not() {
    use crate::throttle::RateLimit;
    let fixed = Profile::fixed();
    let key = WorkKey::new(fixed.work_key, &PodKey::new("ns", "p"), &Uid("u".into()));
    for throttled in [true, false] {
        let mut q = TimedQueue::with_rate_limit(RateLimit::new(1, Duration(100), 1));
        let id = q
            .add_work(&key, Time(0), Time(0), Immediate::Nil, &mut vec![])
            .unwrap();
        let request = ApiRequest {
            id: id.request(),
            verb: Verb::Delete,
            pod: key.pod.clone(),
            uid: key.uid.clone(),
            version: None,
        };
        q.work_mut(id).unwrap().phase = if throttled {
            WorkPhase::Throttled {
                attempt: 1,
                request,
                fetched: None,
                until: Time(100),
            }
        } else {
            WorkPhase::Requesting {
                attempt: 1,
                request,
                fetched: None,
            }
        };
        assert_eq!(q.cancel_work(&key, &fixed, &mut vec![]), throttled);
        assert_eq!(q.entry(&key).is_some(), !throttled);
    }
}
