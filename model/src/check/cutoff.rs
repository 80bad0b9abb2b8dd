//! The cutoff (spec MODEL-CUTOFF): a configuration's pods grouped into toleration classes, and
//! the configuration that keeps only as many pods of each class as any property's verdict can
//! depend on.
//!
//! Pods of one class (same node, same tolerations, the same membership in every declared
//! property's pattern) are alike to every step of the model and to every property. Steps take
//! no time (MODEL-TIME), so a pod's classmates can only interleave with it, never delay it past
//! an instant; its claims read its own objects alone. So the behaviours of one pod beside `N`
//! classmates, seen through that pod, are those beside none, and a claim about `m` pods at once
//! (`at_most_deletions`: `count + 1` evictions) needs `m` of a class. The argument, and where it
//! stops (a client rate limit, whose tokens the classmates take), is the spec's.

use super::config::{CheckConfig, PodSpec};
use serde::{Deserialize, Serialize};
use taintcheck_core::api::Toleration;
use taintcheck_core::profile::Profile;
use taintcheck_core::throttle::{Bucket, RateLimit};
use taintcheck_core::time::Time;
use taintcheck_formats::properties::vocabulary::Claim;

/// Pods the model and the declared properties cannot tell apart, as indices into the
/// configuration's `pods`, in configuration order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Class {
    /// The pods, in configuration order.
    pub pods: Vec<usize>,
    /// How many of them a verdict can depend on (MODEL-CUTOFF): 1, or `count + 1` for an
    /// `at_most_deletions` claim whose pattern matches them.
    pub cutoff: usize,
}

/// What makes two pods classmates: node, tolerations, and which declared patterns match.
type Likeness<'a> = (&'a Option<String>, &'a Vec<Toleration>, Vec<bool>);

/// The configuration's classes, in the order of their first pods.
pub fn classes(config: &CheckConfig) -> Vec<Class> {
    let mut keyed: Vec<(Likeness<'_>, Class)> = Vec::new();
    for (i, pod) in config.pods.iter().enumerate() {
        let key = (&pod.node, &pod.tolerations, membership(config, pod));
        match keyed.iter_mut().find(|(k, _)| *k == key) {
            Some((_, class)) => class.pods.push(i),
            None => {
                let cutoff = cutoff_of(config, pod);
                keyed.push((
                    key,
                    Class {
                        pods: vec![i],
                        cutoff,
                    },
                ))
            }
        }
    }
    keyed.into_iter().map(|(_, class)| class).collect()
}

/// Which declared properties' patterns match `pod`.
fn membership(config: &CheckConfig, pod: &PodSpec) -> Vec<bool> {
    let key = pod.key();
    config
        .properties
        .iter()
        .map(|d| d.claim.pods().matches(&key))
        .collect()
}

/// How many pods of `pod`'s class a verdict can depend on: a claim about one pod at a time
/// needs that pod; `at_most_deletions` needs `count + 1` evicted at once.
fn cutoff_of(config: &CheckConfig, pod: &PodSpec) -> usize {
    let key = pod.key();
    config
        .properties
        .iter()
        .filter_map(|d| match &d.claim {
            Claim::AtMostDeletions { pods, count, .. } if pods.matches(&key) => {
                Some(usize::from(*count) + 1)
            }
            _ => None,
        })
        .fold(1, usize::max)
}

/// What the cutoff did to a configuration, for the report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cutoff {
    /// Pods in the configuration as given.
    pub pods: usize,
    /// Its classes.
    pub classes: usize,
    /// The most pods any class needs (each class keeps `min(its size, its cutoff)`).
    pub per_class: usize,
    /// Pods checked.
    pub checked: usize,
    /// Why every pod was checked although a class is larger than its cutoff: the client's rate
    /// limit, and the delay its bucket implies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coupled: Option<String>,
    /// With `check --each-class`: the runs, one per class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs: Option<usize>,
}

impl Cutoff {
    /// The report's line: "30 pods in 5 classes; checked 1 per class (5 pods; cutoff,
    /// MODEL-CUTOFF)".
    pub fn describe(&self) -> String {
        let count = |n: usize, one: &str, many: &str| match n {
            1 => format!("1 {one}"),
            n => format!("{n} {many}"),
        };
        let classes = count(self.classes, "class", "classes");
        match &self.coupled {
            Some(why) => format!(
                "{} pods in {classes}; checked all of them: {why} (MODEL-CUTOFF)",
                self.pods
            ),
            None => format!(
                "{} pods in {classes}; checked {} per class ({}{}; cutoff, MODEL-CUTOFF); \
                 --no-cutoff checks all",
                self.pods,
                self.per_class,
                count(self.checked, "pod", "pods"),
                match self.runs {
                    Some(n) => format!(", each class on its own: {}", count(n, "run", "runs")),
                    None => String::new(),
                }
            ),
        }
    }
}

/// `config` with each class cut to its cutoff (the class's first pods, configuration order
/// kept), and what was cut; `None` when no class is larger than its cutoff. Under a client
/// rate limit nothing is cut and the report says why (MODEL-CUTOFF's limit).
pub fn apply(config: CheckConfig, profile: &Profile) -> (CheckConfig, Option<Cutoff>) {
    let classes = classes(&config);
    if classes.iter().all(|c| c.pods.len() <= c.cutoff) {
        return (config, None);
    }
    let mut summary = Cutoff {
        pods: config.pods.len(),
        classes: classes.len(),
        per_class: classes.iter().map(|c| c.cutoff).max().unwrap_or(1),
        checked: config.pods.len(),
        coupled: None,
        runs: None,
    };
    if let Some(limit) = config.rate_limit {
        summary.coupled = Some(bucket_bound(limit, profile, config.pods.len()));
        return (config, Some(summary));
    }
    let mut keep = vec![false; config.pods.len()];
    for class in &classes {
        for &i in class.pods.iter().take(class.cutoff) {
            keep[i] = true;
        }
    }
    let mut cut = config;
    let mut flags = keep.into_iter();
    cut.pods.retain(|_| flags.next().unwrap_or(false));
    summary.checked = cut.pods.len();
    (cut, Some(summary))
}

/// What the bucket implies for `pods` evictions that fall due at once: each takes up to
/// `profile`'s requests per attempt, all through one bucket that starts full, so the last
/// eviction's DELETE (the last request) goes this long after the first eviction's.
fn bucket_bound(limit: RateLimit, profile: &Profile, pods: usize) -> String {
    let per_eviction = profile.delete_sequence.requests() as usize;
    let mut bucket = Bucket::new(limit);
    let sends: Vec<Time> = (0..per_eviction * pods)
        .map(|_| bucket.reserve(Time(0)))
        .collect();
    let first = sends[per_eviction - 1];
    let last = sends[sends.len() - 1];
    format!(
        "the client's rate limit ({} per {} ms, burst {}) couples them, so their evictions \
         depend on how many there are: {pods} falling due at once, {per_eviction} requests \
         each under {}, the last DELETE goes up to {} ms after the first",
        limit.tokens(),
        limit.per().0,
        limit.burst(),
        profile.name,
        last.0 - first.0
    )
}

#[cfg(test)]
mod tests;
