//! Conformance checking from a Rust test suite: does some legal behaviour of a Kubernetes
//! version (a [`Profile`]) explain what your taint eviction controller did?
//!
//! Record what your controller did as a trace (`specs/trace-format.md`: the API changes it
//! saw, and the events, requests or deletions it produced, each with its time), then check it
//! with an [`Oracle`]: feed it line by line ([`Oracle::feed`], so a harness can check events as
//! they happen) or all at once ([`Oracle::check`]). The verdict is `Ok` with a [`Summary`] when a
//! legal behaviour explains every line; [`Error::Violation`] names the first line none explains
//! and why, in plain words; [`Error::BadInput`] is a malformed trace. The latency bound `D`
//! says how late your controller may observe an API change or fire a due timer, so legal
//! eviction times form windows (`specs/oracle.md`, ORACLE-4).
//!
//! This module is the stable entry point; the implementation is [the crate](crate), the same one
//! `taintcheck conform` runs.
//!
//! # Example
//!
//! A pod without tolerations on a node that gets a `NoExecute` taint at 1 s must be marked for
//! deletion by 2.2 s with `D` = 1 s and the default step slack of 100 ms (ORACLE-11). The trace records only the controller's events
//! (`"observed":["events"]`, TRACE-7):
//!
//! ```
//! use taintcheck_oracle::conformance::{parse_trace, Duration, Error, Oracle, Options, Profile};
//!
//! let trace = |marked_at: u64| {
//!     format!(
//!         r#"{{"t":0,"kind":"header","version":1,"source":"my-controller","observed":["events"]}}
//! {{"t":0,"kind":"node_added","rv":1,"node":{{"name":"n1","taints":[]}}}}
//! {{"t":0,"kind":"pod_added","rv":2,"pod":{{"key":{{"namespace":"default","name":"web-0"}},"uid":"u1","node_name":"n1","tolerations":[]}}}}
//! {{"t":1000,"kind":"node_modified","rv":3,"node":{{"name":"n1","taints":[{{"key":"maintenance","value":"","effect":"NoExecute","time_added":null}}]}}}}
//! {{"t":{marked_at},"kind":"event","namespace":"default","name":"web-0","reason":"TaintManagerEviction","message":"Marking for deletion Pod default/web-0"}}
//! "#
//!     )
//! };
//! let options = Options::new(Profile::latest(), Duration::from_secs(1));
//!
//! // Marked 0.5 s after the taint: within the bound.
//! let records = parse_trace("ok.ndjson", &trace(1_500)).unwrap();
//! let summary = Oracle::check(options, &records, None).unwrap();
//! assert_eq!(summary.pods, 1);
//!
//! // Marked 4 s after the taint: no legal behaviour waits that long.
//! let records = parse_trace("late.ndjson", &trace(5_000)).unwrap();
//! let Err(Error::Violation(v)) = Oracle::check(options, &records, None) else {
//!     panic!("a late eviction conforms");
//! };
//! assert_eq!(v.line, Some(5));
//! assert!(
//!     v.message.starts_with("default/web-0 should have been marked for deletion by 2.200s"),
//!     "{}",
//!     v.message
//! );
//! ```

pub use crate::{BadInput, Error, Expected, Observe, Options, Oracle, Result, Summary, Violation};
pub use taintcheck_core::profile::Profile;
pub use taintcheck_core::time::{Duration, Time};
pub use taintcheck_formats::trace::{parse_trace, TraceEvent, TraceReader, TraceRecord};
