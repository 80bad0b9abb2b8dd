//! `check --junit FILE`: the verdicts as JUnit XML for CI dashboards, one test case per
//! property. A case fails on what makes the run exit 1: with `--expect`, a verdict other than
//! the expected one; without, what `--gate` fails on. The failure's message is the verdict, its
//! text the shortest path. An incomplete run's unrefuted `always` property is skipped: it was
//! not shown to hold; so is a `sometimes` property the configuration cannot exemplify, with its
//! reason. Spec: CHECK-1.

use taintcheck_model::check::expectation::Expectation;
use taintcheck_model::check::run::{PropertyReport, Report, Status};

/// The XML document.
pub fn render(r: &Report, expectation: Option<&Expectation>) -> String {
    let suite = format!("taintcheck check {}/{}", r.profile, r.config);
    let class = format!("taintcheck.{}.{}", r.profile, r.config);
    let cases: Vec<(String, Case)> = r
        .properties
        .iter()
        .map(|p| (p.name.to_string(), case(r, p, expectation)))
        .collect();
    let failures = cases
        .iter()
        .filter(|(_, c)| matches!(c, Case::Failure { .. }))
        .count();
    let skipped = cases
        .iter()
        .filter(|(_, c)| matches!(c, Case::Skipped(_)))
        .count();
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    s.push_str(&format!(
        "<testsuites name=\"taintcheck check\" tests=\"{}\" failures=\"{failures}\" time=\"{:.3}\">\n",
        cases.len(),
        r.seconds
    ));
    s.push_str(&format!(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" skipped=\"{skipped}\" time=\"{:.3}\">\n",
        escape(&suite),
        cases.len(),
        r.seconds
    ));
    for (name, c) in &cases {
        let open = format!(
            "    <testcase classname=\"{}\" name=\"{}\"",
            escape(&class),
            escape(name)
        );
        match c {
            Case::Passed => s.push_str(&format!("{open}/>\n")),
            Case::Skipped(message) => s.push_str(&format!(
                "{open}>\n      <skipped message=\"{}\"/>\n    </testcase>\n",
                escape(message)
            )),
            Case::Failure { message, text } => s.push_str(&format!(
                "{open}>\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>\n",
                escape(message),
                escape(message.split(':').next().unwrap_or_default()),
                escape(text)
            )),
        }
    }
    s.push_str("  </testsuite>\n</testsuites>\n");
    s
}

/// One test case's result.
enum Case {
    Passed,
    Skipped(String),
    Failure { message: String, text: String },
}

fn case(r: &Report, p: &PropertyReport, expectation: Option<&Expectation>) -> Case {
    let verdict = r.verdict_text(p.status);
    let failed = match expectation {
        Some(e) => {
            let expected = e
                .of_name(p.name)
                .expect("the expectation was read for the reported properties");
            let met = e.met(p.name, p.status).unwrap_or(false);
            (!met).then(|| format!("{verdict}: expected {}", expected.as_str()))
        }
        None => p.status.fails_gate().then(|| verdict.clone()),
    };
    match failed {
        Some(message) => Case::Failure {
            message,
            text: p.path().map(|t| t.text()).unwrap_or_default(),
        },
        None if p.status == Status::NotRefuted => Case::Skipped(verdict),
        None if p.status == Status::NotApplicable => Case::Skipped(r.verdict_line(p)),
        None => Case::Passed,
    }
}

/// XML text and attribute escaping.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}
