//! `taintcheck minimize`: the smallest configuration, derived from a given one, on which a
//! property is still violated. The search goes dimension by dimension in [`DIMENSIONS`] order,
//! each from its smallest value up, and takes the first smaller value that still violates; it
//! repeats the round until no dimension can shrink. The result is minimal in the sense of
//! CHECK-4: lowering any single dimension further makes the property hold. Spec: CHECK-4.

use super::config::{CheckConfig, OpKind, Overrides};
use super::properties::PropertyInfo;
use super::shortest;
use super::trace::Trace;
use super::transition::TaintSys;
use std::fmt;
use taintcheck_core::profile::Profile;

/// A dimension of a configuration, in the order the search shrinks them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dimension {
    /// Environment operations a behaviour may perform.
    Budget,
    /// The kinds of operation the environment may perform.
    Operations,
    /// Nodes (the first k kept).
    Nodes,
    /// Pods (the first k kept).
    Pods,
    /// Controller workers.
    Workers,
    /// Taints the environment may add (the first k kept, at least one).
    Taints,
    /// tolerationSeconds choices (the first k kept, at least one).
    Seconds,
    /// The clock's horizon, in multiples of the environment's grid.
    Horizon,
    /// The per-worker node channel's capacity.
    NodeChannel,
    /// The per-worker pod channel's capacity.
    PodChannel,
}

/// The search order: the environment first (it multiplies the state space most), then the
/// objects, then the controller.
pub const DIMENSIONS: [Dimension; 10] = [
    Dimension::Budget,
    Dimension::Operations,
    Dimension::Nodes,
    Dimension::Pods,
    Dimension::Workers,
    Dimension::Taints,
    Dimension::Seconds,
    Dimension::Horizon,
    Dimension::NodeChannel,
    Dimension::PodChannel,
];

/// The smallest configuration found and its shortest counterexample.
pub struct Minimal {
    /// The configuration.
    pub config: CheckConfig,
    /// The shortest counterexample on it.
    pub trace: Trace,
    /// How many configurations were checked.
    pub checked: usize,
}

/// Why nothing can be minimized: the property holds on the configuration given.
#[derive(Debug, PartialEq, Eq)]
pub struct Holds;

/// Shrinks `config` while `property` stays violated under `profile`.
pub fn minimize(
    profile: Profile,
    config: CheckConfig,
    property: &PropertyInfo,
) -> Result<Minimal, Holds> {
    let mut checked = 0;
    let mut violated = |c: &CheckConfig| {
        checked += 1;
        let model = TaintSys::new(profile, c.clone());
        !shortest::counterexamples(&model, &[property.name]).is_empty()
    };
    if !violated(&config) {
        return Err(Holds);
    }
    let mut current = config;
    loop {
        let mut shrunk = false;
        for d in DIMENSIONS {
            if let Some(smaller) = smaller(&current, d).into_iter().find(|c| violated(c)) {
                current = smaller;
                shrunk = true;
            }
        }
        if !shrunk {
            break;
        }
    }
    let model = TaintSys::new(profile, current.clone());
    let path = shortest::counterexamples(&model, &[property.name])
        .remove(property.name)
        .expect("the last configuration taken violates");
    Ok(Minimal {
        trace: Trace::of(&model, &path),
        config: current,
        checked,
    })
}

/// The valid configurations smaller than `c` in dimension `d` only, smallest first.
pub fn smaller(c: &CheckConfig, d: Dimension) -> Vec<CheckConfig> {
    let with = |o: Overrides| {
        let mut next = c.clone();
        next.apply(&o).ok().map(|()| next)
    };
    let below = |n: usize, from: usize| (from..n).collect::<Vec<_>>();
    let candidates: Vec<Option<CheckConfig>> = match d {
        Dimension::Budget => (0..c.budget)
            .map(|b| {
                with(Overrides {
                    budget: Some(b),
                    ..Overrides::default()
                })
            })
            .collect(),
        Dimension::Operations => c
            .operations
            .iter()
            .map(|op| {
                let operations = c.operations.iter().copied().filter(|o| o != op).collect();
                with(Overrides {
                    operations: Some(operations),
                    ..Overrides::default()
                })
            })
            .collect(),
        Dimension::Nodes => below(c.nodes.len(), 1)
            .into_iter()
            .map(|n| {
                with(Overrides {
                    nodes: Some(n),
                    ..Overrides::default()
                })
            })
            .collect(),
        Dimension::Pods => below(c.pods.len(), 1)
            .into_iter()
            .map(|n| {
                with(Overrides {
                    pods: Some(n),
                    ..Overrides::default()
                })
            })
            .collect(),
        Dimension::Workers => below(c.workers, 1)
            .into_iter()
            .map(|n| {
                with(Overrides {
                    workers: Some(n),
                    ..Overrides::default()
                })
            })
            .collect(),
        Dimension::Taints => below(c.taints.len(), 1)
            .into_iter()
            .map(|n| {
                let mut next = c.clone();
                next.taints.truncate(n);
                Some(next)
            })
            .collect(),
        Dimension::Seconds => below(c.seconds_choices.len(), 1)
            .into_iter()
            .map(|n| {
                let mut next = c.clone();
                next.seconds_choices.truncate(n);
                Some(next)
            })
            .collect(),
        Dimension::Horizon => {
            let step = c.step_ms.max(1);
            (1..)
                .map(|k| k * step)
                .take_while(|h| *h < c.horizon_ms)
                .map(|h| {
                    with(Overrides {
                        horizon_ms: Some(h),
                        ..Overrides::default()
                    })
                })
                .collect()
        }
        Dimension::NodeChannel => below(c.node_channel_capacity, 1)
            .into_iter()
            .map(|n| {
                with(Overrides {
                    node_channel_capacity: Some(n),
                    ..Overrides::default()
                })
            })
            .collect(),
        Dimension::PodChannel => below(c.pod_channel_capacity, 1)
            .into_iter()
            .map(|n| {
                with(Overrides {
                    pod_channel_capacity: Some(n),
                    ..Overrides::default()
                })
            })
            .collect(),
    };
    candidates.into_iter().flatten().collect()
}

/// A configuration's size in every dimension, as `minimize` prints it and the tests assert.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Size {
    /// Budget.
    pub budget: u8,
    /// Operation names.
    pub operations: Vec<&'static str>,
    /// Nodes, pods, workers.
    pub nodes: usize,
    /// Pods.
    pub pods: usize,
    /// Workers.
    pub workers: usize,
    /// Taints the environment may add.
    pub taints: usize,
    /// tolerationSeconds choices.
    pub seconds: usize,
    /// Horizon (ms).
    pub horizon_ms: i64,
    /// Node and pod channel capacities.
    pub channels: (usize, usize),
}

impl Size {
    /// The size of `c`.
    pub fn of(c: &CheckConfig) -> Size {
        Size {
            budget: c.budget,
            operations: c.operations.iter().map(|o: &OpKind| o.name()).collect(),
            nodes: c.nodes.len(),
            pods: c.pods.len(),
            workers: c.workers,
            taints: c.taints.len(),
            seconds: c.seconds_choices.len(),
            horizon_ms: c.horizon_ms,
            channels: (c.node_channel_capacity, c.pod_channel_capacity),
        }
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "budget {}, operations [{}], {} node(s), {} pod(s), {} worker(s), {} taint(s) to add, \
             {} seconds choice(s), horizon {} ms, channel capacities {}/{}",
            self.budget,
            self.operations.join(", "),
            self.nodes,
            self.pods,
            self.workers,
            self.taints,
            self.seconds,
            self.horizon_ms,
            self.channels.0,
            self.channels.1
        )
    }
}

/// The command-line overrides that turn the configuration minimized from into `c`: every
/// dimension, spelled as `check` takes it.
pub fn overrides_line(c: &CheckConfig) -> String {
    let ops: Vec<&str> = c.operations.iter().map(|o| o.name()).collect();
    let mut s = format!(
        "--budget {} --operations {} --nodes {} --pods {} --workers {}",
        c.budget,
        ops.join(","),
        c.nodes.len(),
        c.pods.len(),
        c.workers
    );
    if !c.taints.is_empty() {
        let keys: Vec<String> = c
            .taints
            .iter()
            .map(|t| {
                if t.value.is_empty() {
                    t.key.to_string()
                } else {
                    format!("{}={}", t.key, t.value)
                }
            })
            .collect();
        s.push_str(&format!(" --taint-keys {}", keys.join(",")));
    }
    if !c.seconds_choices.is_empty() {
        let seconds: Vec<String> = c
            .seconds_choices
            .iter()
            .map(|s| s.map_or("forever".to_string(), |n| n.to_string()))
            .collect();
        s.push_str(&format!(" --seconds {}", seconds.join(",")));
    }
    s.push_str(&format!(
        " --horizon-ms {} --node-channel-capacity {} --pod-channel-capacity {}",
        c.horizon_ms, c.node_channel_capacity, c.pod_channel_capacity
    ));
    s
}
