//! `check --each-class`: each toleration class of a configuration checked in a run of its own,
//! and the runs' reports combined into the configuration's (spec MODEL-CUTOFF, "each class on
//! its own").
//!
//! Every property reads one pod at a time (or a node's taints), and a pod's behaviours are the
//! same beside any other pods when steps take no time and no rate limit couples them, so a
//! property is violated (or exemplified) in the whole configuration exactly when it is in one
//! of the runs. A claim about several pods at once (`at_most_deletions`) and a rate limit couple
//! the classes: then there is one run.

use super::cutoff::{classes, Cutoff};
use super::run::{PropertyReport, Report, Status};
use super::transition::TaintSys;
use std::collections::BTreeMap;
use taintcheck_formats::properties::vocabulary::Claim;

/// Why `model`'s classes cannot be checked apart, if they cannot.
pub fn coupled(model: &TaintSys) -> Option<&'static str> {
    let config = &model.config;
    if config.rate_limit.is_some() {
        return Some("the client's rate limit couples the classes (MODEL-CUTOFF)");
    }
    let counts = config
        .properties
        .iter()
        .any(|d| matches!(d.claim, Claim::AtMostDeletions { .. }));
    counts.then_some("an at_most_deletions claim counts evictions of several pods at once")
}

/// One model per class of `model`'s configuration, each with that class's pods, with the pods'
/// names; the report's cutoff line says how many runs there are.
pub fn split(model: &TaintSys) -> Vec<(Vec<String>, TaintSys)> {
    let config = &model.config;
    let classes = classes(config);
    let runs = classes.len();
    let mut cutoff = model.cutoff.clone().unwrap_or(Cutoff {
        pods: config.pods.len(),
        classes: runs,
        per_class: 1,
        checked: config.pods.len(),
        coupled: None,
        runs: None,
    });
    cutoff.runs = Some(runs);
    classes
        .into_iter()
        .map(|class| {
            let mut part = config.clone();
            part.pods = class.pods.iter().map(|&i| config.pods[i].clone()).collect();
            let names = part.pods.iter().map(|p| p.name.clone()).collect();
            let mut model = TaintSys::new(model.profile, part);
            model.cutoff = Some(cutoff.clone());
            (names, model)
        })
        .collect()
}

/// The configuration's report from its runs' (in class order): counts summed, and per
/// property the verdict `found in some run` (the shortest path found), `holds` only when every
/// run completed, `not applicable` only when it is in every run. With each property's path,
/// the pods of the run it came from.
pub fn combine(runs: Vec<(Vec<String>, Report)>) -> (Report, BTreeMap<String, Vec<String>>) {
    let mut runs = runs.into_iter();
    let (first_pods, mut report) = runs.next().expect("a configuration has a class");
    let mut from: BTreeMap<String, Vec<String>> = report
        .properties
        .iter()
        .filter(|p| p.path().is_some())
        .map(|p| (p.id.to_string(), first_pods.clone()))
        .collect();
    for (pods, run) in runs {
        report.states += run.states;
        report.unique_states += run.unique_states;
        report.max_depth = report.max_depth.max(run.max_depth);
        report.seconds += run.seconds;
        report.complete &= run.complete;
        for (p, q) in report.properties.iter_mut().zip(run.properties) {
            debug_assert_eq!(p.id, q.id, "every run has the same properties");
            let shorter = match (p.path(), q.path()) {
                (None, Some(_)) => true,
                (Some(a), Some(b)) => b.steps.len() < a.steps.len(),
                _ => false,
            };
            if shorter {
                from.insert(q.id.to_string(), pods.clone());
                p.counterexample = q.counterexample;
                p.example = q.example;
            }
            if q.reason.is_none() {
                p.reason = None;
            }
        }
    }
    let complete = report.complete;
    for p in &mut report.properties {
        p.status = judged(p, complete);
        if p.status != Status::NotApplicable {
            p.reason = None;
        }
    }
    (report, from)
}

/// The combined verdict of one property.
fn judged(p: &PropertyReport, complete: bool) -> Status {
    let always = p.kind == "always";
    Status::judged(always, p.path().is_some(), complete, p.reason.is_some())
}

#[cfg(test)]
mod tests;
