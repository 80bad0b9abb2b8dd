//! The oracle on implementations with real clocks (ORACLE-3, ORACLE-4, ORACLE-11): a work's
//! steps take time, events reach the trace asynchronously, and another goroutine's event lands
//! inside a running work's step sequence wherever upstream lets it. Each trace here is legal
//! under upstream's code, and one wrong variant of each is still rejected.

use taintcheck_core::profile::Profile;
use taintcheck_core::time::{Duration, Time};
use taintcheck_formats::trace::parse_trace;
use taintcheck_oracle::{Error, Options, Oracle, Summary};

const HEADER: &str = r#"{"t":0,"kind":"header","version":1,"source":"other","profile":"latest","scenario":"straddle","observed":["requests","events"]}"#;

fn check(profile: Profile, bound_ms: i64, lines: &[String]) -> Result<Summary, Error> {
    let text = std::iter::once(HEADER.to_string())
        .chain(lines.iter().cloned())
        .collect::<Vec<_>>()
        .join("\n");
    let records = parse_trace("trace.ndjson", &text).expect("a well-formed trace");
    Oracle::check(
        Options::new(profile, Duration(bound_ms)),
        &records,
        None::<Time>,
    )
}

fn violation(r: Result<Summary, Error>) -> String {
    match r {
        Err(Error::Violation(v)) => v.message,
        other => panic!("expected a violation, got {other:?}"),
    }
}

/// Trace lines for pod `default/p0` (uid `p0-1`) on node `n1`.
struct Lines {
    lines: Vec<String>,
    next_id: u64,
}

impl Lines {
    /// Node `n1` untainted and `p0` bound to it at 0; `p0` tolerates `k` for `seconds` (none:
    /// no toleration at all).
    fn new(seconds: Option<i64>) -> Lines {
        let tolerations = match seconds {
            Some(s) => format!(
                r#"[{{"key":"k","operator":"Exists","value":"","effect":"NoExecute","seconds":{s}}}]"#
            ),
            None => "[]".to_string(),
        };
        Lines {
            lines: vec![
                r#"{"t":0,"kind":"node_added","rv":1,"node":{"name":"n1","taints":[]}}"#.into(),
                format!(
                    r#"{{"t":0,"kind":"pod_added","rv":2,"pod":{{"key":{{"namespace":"default","name":"p0"}},"uid":"p0-1","node_name":"n1","tolerations":{tolerations}}}}}"#
                ),
            ],
            next_id: 1,
        }
    }

    fn line(mut self, line: String) -> Lines {
        self.lines.push(line);
        self
    }

    fn taint(self, t: i64, tainted: bool) -> Lines {
        let taints = if tainted {
            r#"[{"key":"k","value":"v","effect":"NoExecute","time_added":null}]"#
        } else {
            "[]"
        };
        self.line(format!(
            r#"{{"t":{t},"kind":"node_modified","rv":{},"node":{{"name":"n1","taints":{taints}}}}}"#,
            t + 3
        ))
    }

    fn event(self, t: i64, what: &str) -> Lines {
        let message = match what {
            "mark" => "Marking for deletion Pod default/p0",
            _ => "Cancelling deletion of Pod default/p0",
        };
        self.line(format!(
            r#"{{"t":{t},"kind":"event","namespace":"default","name":"p0","reason":"TaintManagerEviction","message":"{message}"}}"#
        ))
    }

    /// A request of `verb` at `t`; its id is the next one.
    fn request(mut self, t: i64, verb: &str) -> Lines {
        let id = self.next_id;
        self.next_id += 1;
        let uid = if verb == "patch" {
            r#","uid":"p0-1""#
        } else {
            ""
        };
        self.line(format!(
            r#"{{"t":{t},"kind":"request","id":{id},"verb":"{verb}","namespace":"default","name":"p0"{uid}}}"#
        ))
    }

    /// The successful answer to the last request, at `t` (a DELETE's with the pod's deletion).
    fn response(self, t: i64, delete: bool) -> Lines {
        let id = self.next_id - 1;
        let this = if delete {
            self.line(format!(
                r#"{{"t":{t},"kind":"pod_deleted","rv":99,"namespace":"default","name":"p0","uid":"p0-1"}}"#
            ))
        } else {
            self
        };
        this.line(format!(
            r#"{{"t":{t},"kind":"response","id":{id},"result":"ok","uid":"p0-1"}}"#
        ))
    }

    fn call(self, t: i64, verb: &str) -> Lines {
        self.request(t, verb).response(t, verb == "delete")
    }
}

/// The issue's straddle trace: the work emits "Marking for deletion" at 1.100 s and sends its
/// GET at 1.101 s, after a clock tick (cause A).
fn straddle(get_at: i64) -> Vec<String> {
    Lines::new(None)
        .taint(1_000, true)
        .event(1_100, "mark")
        .call(get_at, "get")
        .call(get_at, "patch")
        .call(get_at, "delete")
        .lines
}

#[test]
fn the_straddle_trace_verbatim_conforms() {
    // The issue's lines as written (its "…" completed with the response, PATCH and DELETE).
    let text = [
        HEADER,
        r#"{"t":0,"kind":"node_added","rv":1,"node":{"name":"n1","taints":[]}}"#,
        r#"{"t":0,"kind":"pod_added","rv":2,"pod":{"key":{"namespace":"default","name":"p0"},"uid":"p0-1","node_name":"n1","tolerations":[]}}"#,
        r#"{"t":1000,"kind":"node_modified","rv":3,"node":{"name":"n1","taints":[{"key":"k","value":"v","effect":"NoExecute","time_added":null}]}}"#,
        r#"{"t":1100,"kind":"event","namespace":"default","name":"p0","reason":"TaintManagerEviction","message":"Marking for deletion Pod default/p0"}"#,
        r#"{"t":1101,"kind":"request","id":1,"verb":"get","namespace":"default","name":"p0"}"#,
        r#"{"t":1101,"kind":"response","id":1,"result":"ok","uid":"p0-1"}"#,
        r#"{"t":1101,"kind":"request","id":2,"verb":"patch","namespace":"default","name":"p0","uid":"p0-1"}"#,
        r#"{"t":1101,"kind":"response","id":2,"result":"ok","uid":"p0-1"}"#,
        r#"{"t":1101,"kind":"request","id":3,"verb":"delete","namespace":"default","name":"p0"}"#,
        r#"{"t":1101,"kind":"pod_deleted","rv":4,"namespace":"default","name":"p0","uid":"p0-1"}"#,
        r#"{"t":1101,"kind":"response","id":3,"result":"ok","uid":"p0-1"}"#,
    ]
    .join("\n");
    let records = parse_trace("straddle.ndjson", &text).unwrap();
    let r = Oracle::check(
        Options::new(Profile::latest(), Duration(1_000)),
        &records,
        None,
    );
    assert!(r.is_ok(), "{r:?}");
}

/// The work's GET step comes within the step slack of its "Marking" (1.100s at the latest),
/// and the request reaches the trace within the step slack of its step (ORACLE-11).
#[test]
fn a_work_step_may_take_up_to_the_step_slack_and_no_longer() {
    let slack = taintcheck_oracle::DEFAULT_STEP_SLACK.0;
    assert!(check(Profile::latest(), 1_000, &straddle(1_100 + 2 * slack)).is_ok());
    let message = violation(check(
        Profile::latest(),
        1_000,
        &straddle(1_101 + 2 * slack),
    ));
    assert!(
        message.contains("should have been fetched (GET) by 1.300s")
            && message.contains(
                "sent at 1.200s at the latest, a request reaches the trace within the step slack"
            ),
        "{message}"
    );
    // With no slack, the steps of a work are instantaneous again.
    let mut options = Options::new(Profile::latest(), Duration(1_000));
    options.step_slack = Duration(0);
    let text = std::iter::once(HEADER.to_string())
        .chain(straddle(1_101))
        .collect::<Vec<_>>()
        .join("\n");
    let records = parse_trace("t", &text).unwrap();
    assert!(Oracle::check(options, &records, None).is_err());
}

#[test]
fn a_response_and_the_next_request_may_straddle_a_tick() {
    let lines = Lines::new(None)
        .taint(1_000, true)
        .event(1_100, "mark")
        .request(1_100, "get")
        .response(1_130, false)
        .request(1_170, "patch")
        .response(1_180, false)
        .request(1_250, "delete")
        .response(1_260, true)
        .lines;
    let r = check(Profile::latest(), 1_000, &lines);
    assert!(r.is_ok(), "{r:?}");
}

/// The issue's cause B: `p0` tolerates `k` for 2 s, the taint is added at 1 s and removed at
/// 3 s; at 3.050 s the timer's work runs while the removal's "Cancelling deletion" is emitted.
/// `cancel_after` says after how many of the work's lines the cancel event comes.
fn cancel_inside_the_work(cancel_after: usize) -> Vec<String> {
    let work: [(&str, &str); 7] = [
        ("event", "mark"),
        ("request", "get"),
        ("response", "get"),
        ("request", "patch"),
        ("response", "patch"),
        ("request", "delete"),
        ("response", "delete"),
    ];
    let mut l = Lines::new(Some(2)).taint(1_000, true).taint(3_000, false);
    for (i, (kind, what)) in work.iter().enumerate() {
        if i == cancel_after {
            l = l.event(3_050, "cancel");
        }
        l = match *kind {
            "event" => l.event(3_050, what),
            "request" => l.request(3_050, what),
            _ => l.response(3_050, *what == "delete"),
        };
    }
    l.lines
}

#[test]
fn a_cancel_event_may_land_in_every_window_upstream_leaves_open() {
    // Before "Marking" (the work passed its flag check; the recorder reorders the two events),
    // between "Marking" and the GET, between a response and the next request, and (as
    // before) between a request and its response or after the work.
    for after in 0..=7 {
        let r = check(Profile::latest(), 1_000, &cancel_inside_the_work(after));
        assert!(r.is_ok(), "cancel after {after} lines of the work: {r:?}");
    }
}

#[test]
fn the_fixed_design_still_stops_a_cancelled_work_before_its_next_request() {
    // Under `fixed` the cancelled flag is checked before every request: a GET or PATCH after the
    // cancel event is wrong (the event is only emitted when the work will not delete).
    for after in [1, 3] {
        let r = check(Profile::fixed(), 1_000, &cancel_inside_the_work(after));
        assert!(r.is_err(), "cancel after {after} lines of the work: {r:?}");
    }
}

/// Seen on the real controller under `fixed` (`taintcheck controller`, `rt-n1-timer-vs-untaint`,
/// specs/upstream-harness.md): the work read its cancelled flag and sent its node GET, a worker
/// then cancelled the work and emitted "Cancelling deletion", and the API server received the
/// GET after the Event was recorded. A request reaches the trace within the step slack of the
/// step that sent it (ORACLE-11): so late it is legal, later it is not.
#[test]
fn a_request_in_transit_may_reach_the_trace_after_a_later_cancel() {
    let trace = |get_node_at: i64| {
        let l = Lines::new(Some(2))
            .taint(1_000, true)
            .taint(3_000, false)
            .event(3_050, "mark")
            .call(3_050, "get")
            .event(3_050, "cancel");
        let id = l.next_id;
        l.line(format!(
            r#"{{"t":{get_node_at},"kind":"request","id":{id},"verb":"get_node","namespace":"default","name":"p0","node":"n1"}}"#
        ))
        .lines
    };
    let slack = taintcheck_oracle::DEFAULT_STEP_SLACK.0;
    let r = check(Profile::fixed(), 1_000, &trace(3_050 + slack));
    assert!(r.is_ok(), "{r:?}");
    let message = violation(check(Profile::fixed(), 1_000, &trace(3_051 + slack)));
    assert!(
        message.contains("read with its node n1 (GET) at 3.151s: no legal behaviour of fixed"),
        "{message}"
    );
}

#[test]
fn an_event_may_reach_the_trace_late_but_within_the_slack() {
    // The recorder's broadcaster delivers "Marking" after the GET was sent.
    let late = |at: i64| {
        Lines::new(None)
            .taint(1_000, true)
            .request(1_100, "get")
            .event(at, "mark")
            .response(at, false)
            .call(at, "patch")
            .call(at, "delete")
            .lines
    };
    let slack = taintcheck_oracle::DEFAULT_STEP_SLACK.0;
    assert!(check(Profile::latest(), 1_000, &late(1_100 + slack)).is_ok());
    assert!(check(Profile::latest(), 1_000, &late(1_101 + slack)).is_err());
}

#[test]
fn a_late_event_is_rejected_with_its_real_cause() {
    // "Marking for deletion" reaches the trace after the pod is gone and after the step slack:
    // the reason is the late event, not the pod being gone.
    let lines = Lines::new(None)
        .taint(1_000, true)
        .call(1_100, "get")
        .call(1_100, "patch")
        .call(1_100, "delete")
        .event(1_300, "mark")
        .lines;
    let message = violation(check(Profile::latest(), 1_000, &lines));
    assert!(!message.contains("no longer has it"), "{message}");
    assert!(
        message.contains("should have been marked for deletion by 1.200s")
            && message.contains("an event reaches the trace within the step slack 0.1 s"),
        "{message}"
    );
}

#[test]
fn a_retry_may_come_late_after_its_backoff_while_other_pods_move() {
    // The GET fails at 1.000s; the work takes the answer in up to the step slack later and
    // sleeps 10 ms (latest's backoff), so its retry may come up to `D + S` after the sleep
    // (ORACLE-4). Another pod's line at 1.050s wakes `p0`'s component past the sleep's end plus
    // `D`: the behaviours still asleep then must be kept, and a wake-up found for them later.
    let lines = Lines::new(None)
        .line(r#"{"t":0,"kind":"node_added","rv":3,"node":{"name":"n2","taints":[]}}"#.into())
        .taint(1_000, true)
        .event(1_000, "mark")
        .request(1_000, "get")
        .line(r#"{"t":1000,"kind":"response","id":1,"result":"failed"}"#.into())
        .line(
            r#"{"t":1050,"kind":"pod_added","rv":1050,"pod":{"key":{"namespace":"default","name":"p1"},"uid":"p1-1","node_name":"n2","tolerations":[]}}"#
                .into(),
        )
        .call(1_060, "get")
        .call(1_060, "patch")
        .call(1_060, "delete")
        .lines;
    let r = check(Profile::latest(), 0, &lines);
    assert!(r.is_ok(), "{r:?}");
    // A retry later than the backoff's end plus `D + S`, plus its transit `S` (1.000s + 100 ms
    // + 10 ms + 100 ms + 100 ms at the latest) is still rejected.
    let late = Lines::new(None)
        .taint(1_000, true)
        .event(1_000, "mark")
        .request(1_000, "get")
        .line(r#"{"t":1000,"kind":"response","id":1,"result":"failed"}"#.into())
        .call(1_311, "get")
        .call(1_311, "patch")
        .call(1_311, "delete")
        .lines;
    let message = violation(check(Profile::latest(), 0, &late));
    assert!(
        message.contains("should have been fetched (GET) by 1.310s"),
        "{message}"
    );
}
