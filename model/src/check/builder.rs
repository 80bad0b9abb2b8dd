//! Model checking from a Rust test suite: a configuration, a profile, your own properties, and
//! assertions on the verdicts that print the shortest counterexample when they fail. It runs the
//! same checker, with the same reports, as `taintcheck check`. Spec: PROP-4.
//!
//! Properties come from the configuration's `properties:` section (spec PROP-2's vocabulary)
//! or from Rust: [`Check::property`] (`always`: every reachable state satisfies the predicate)
//! and [`Check::sometimes`] (some reachable state does). A predicate reads a [`SysState`]: the
//! API server's objects (`s.api.pods`, `s.api.nodes`), the informer caches, the controller and
//! the clock (`s.now`).
//!
//! # Example
//!
//! `web` tolerates the taint `k` for 2 s; the environment may add `k` to its node once, on a
//! 1 s grid, and the clock stops at 3 s.
//!
//! ```
//! use taintcheck_model::check::builder::Check;
//! use taintcheck_core::profile::Profile;
//!
//! let config = r#"
//! nodes: [{name: n1}]
//! pods: [{name: web, node: n1, tolerations: [{key: k, tolerationSeconds: 2}]}]
//! taints: [k]
//! operations: [add_taint]
//! budget: 1
//! properties:
//!   - name: web-keeps-its-2s
//!     always:
//!       not_deleted_before: {pods: web, taint: k, after: 2s}
//! "#;
//! let report = Check::config(config)
//!     .profile(Profile::latest())
//!     .property("web-stays", |s| s.api.pods.keys().any(|k| &*k.name == "web"))
//!     .run();
//! report.assert_holds("web-keeps-its-2s");
//! // Evicted 2 s after the taint: the shortest counterexample ends with the DELETE.
//! let trace = report.assert_violated("web-stays");
//! assert!(trace.text().contains("deletes default/web"), "{}", trace.text());
//! ```

use super::config::{CheckConfig, ConfigErrors};
use super::properties::custom::Predicate;
use super::run::{self, PropertyReport, Report, RunOptions, Status};
use super::state::SysState;
use super::trace::Trace;
use super::transition::TaintSys;
use std::sync::Arc;
use taintcheck_core::profile::Profile;

/// A model-checking run to set up: [`Check::config`], then any of [`Check::profile`],
/// [`Check::property`], [`Check::sometimes`], [`Check::options`], then [`Check::run`].
#[must_use = "a Check does nothing until run"]
pub struct Check {
    config: Result<CheckConfig, ConfigErrors>,
    profile: Profile,
    properties: Vec<(String, bool, Predicate)>,
    options: RunOptions,
}

impl Check {
    /// A configuration in the format of `specs/configs/*.yaml` (`properties:` included);
    /// errors surface at [`Check::run`], located in `<config>`.
    pub fn config(yaml: &str) -> Check {
        Check::from(CheckConfig::parse("<config>", "config", yaml))
    }

    /// A configuration by built-in name (`default`, `timer-vs-cancel`, ...) or YAML path.
    pub fn load(name_or_path: &str) -> Check {
        Check::from(CheckConfig::load(name_or_path))
    }

    fn from(config: Result<CheckConfig, ConfigErrors>) -> Check {
        Check {
            config,
            profile: Profile::latest(),
            properties: Vec::new(),
            options: RunOptions::default(),
        }
    }

    /// The Kubernetes behaviour to check (default: [`Profile::latest`]).
    pub fn profile(mut self, profile: Profile) -> Check {
        self.profile = profile;
        self
    }

    /// An `always` property named `name`: every reachable state satisfies `test`.
    pub fn property(
        mut self,
        name: &str,
        test: impl Fn(&SysState) -> bool + Send + Sync + 'static,
    ) -> Check {
        self.properties
            .push((name.to_owned(), true, Arc::new(test)));
        self
    }

    /// A `sometimes` property named `name`: some reachable state satisfies `test`.
    pub fn sometimes(
        mut self,
        name: &str,
        test: impl Fn(&SysState) -> bool + Send + Sync + 'static,
    ) -> Check {
        self.properties
            .push((name.to_owned(), false, Arc::new(test)));
        self
    }

    /// How to explore (default: breadth-first on one thread, so shortest counterexamples).
    pub fn options(mut self, options: RunOptions) -> Check {
        self.options = options;
        self
    }

    /// The model this would check, or what is wrong with the configuration, a property's name
    /// or the options.
    pub fn model(self) -> Result<(TaintSys, RunOptions), String> {
        let config = self.config.map_err(|e| e.to_string())?;
        let mut model = TaintSys::new(self.profile, config);
        for (name, always, test) in self.properties {
            model.custom.add(&name, always, test)?;
        }
        self.options.check_for(&model)?;
        Ok((model, self.options))
    }

    /// Runs the checker. Panics, saying why, if [`Check::model`] would fail: in a test, a bad
    /// configuration is the test's failure.
    pub fn run(self) -> CheckReport {
        let (model, options) = self.model().unwrap_or_else(|e| panic!("{e}"));
        CheckReport(run::run(model, &options, |_, _, _| {}))
    }
}

/// A run's report with assertions for tests; [`CheckReport::report`] is what `taintcheck
/// check --json` prints.
#[derive(Clone, Debug)]
pub struct CheckReport(Report);

impl CheckReport {
    /// The whole report.
    pub fn report(&self) -> &Report {
        &self.0
    }

    /// The line of the property `name` (its id or full name). Panics if there is none.
    pub fn property(&self, name: &str) -> &PropertyReport {
        self.0
            .properties
            .iter()
            .find(|p| p.name == name || p.id == name)
            .unwrap_or_else(|| {
                let names: Vec<_> = self.0.properties.iter().map(|p| p.id).collect();
                panic!("no property {name:?}: the run has {}", names.join(", "))
            })
    }

    /// The verdict of the property `name`.
    pub fn status(&self, name: &str) -> Status {
        self.property(name).status
    }

    /// Panics, printing the counterexample, unless the `always` property `name` holds.
    pub fn assert_holds(&self, name: &str) -> &CheckReport {
        self.expect(name, Status::Holds);
        self
    }

    /// Panics unless the `always` property `name` is violated; its shortest counterexample.
    pub fn assert_violated(&self, name: &str) -> &Trace {
        self.expect(name, Status::Violated);
        self.property(name)
            .counterexample
            .as_ref()
            .expect("a violated property has a counterexample")
    }

    /// Panics unless the `sometimes` property `name` has an example; its shortest example.
    pub fn assert_example(&self, name: &str) -> &Trace {
        self.expect(name, Status::ExampleFound);
        self.property(name)
            .example
            .as_ref()
            .expect("a property with an example has its path")
    }

    fn expect(&self, name: &str, expected: Status) {
        let p = self.property(name);
        if p.status == expected {
            return;
        }
        let mut message = format!(
            "property {:?} (profile {}, config {}): expected {}, got {}",
            p.name,
            self.0.profile,
            self.0.config,
            expected.as_str(),
            self.0.verdict_text(p.status)
        );
        if let Some(path) = p.path() {
            let what = if p.counterexample.is_some() {
                "counterexample"
            } else {
                "example"
            };
            message.push_str(&format!("\n{what} ({} steps):\n", path.steps.len()));
            for line in path.lines() {
                message.push_str(&format!("  {line}\n"));
            }
            message.push_str(&format!("Explorer path: {}", path.action_path));
        }
        panic!("{message}");
    }
}
