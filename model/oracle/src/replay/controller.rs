//! Controller lines: outputs some state must produce next, responses delivered to the work that
//! sent the request, and restarts (ORACLE-2, ORACLE-3).

use super::Oracle;
use crate::output::{Output, Seen};
use crate::truth::TruePod;
use crate::verdict::{self, Expected, Result};
use std::sync::Arc;
use taintcheck_core::api::{Node, Pod, PodKey, ResourceVersion, Uid};
use taintcheck_core::time::Time;
use taintcheck_core::{ApiResult, FetchedPod, Verb};
use taintcheck_formats::trace::ResponseResult;

impl Oracle {
    pub(super) fn request(
        &mut self,
        id: u64,
        pod: PodKey,
        verb: Verb,
        seen: Option<&Seen>,
        t: Time,
    ) -> Result<()> {
        if self.requests.contains_key(&id) {
            return Err(self.bad(&format!("id: request #{id} sent twice")));
        }
        if let Some(seen) = seen {
            self.output(&pod, seen, t)?;
        }
        if let Some(throttle) = &mut self.machine.throttle {
            throttle.seen(t);
        }
        *self.unanswered.entry(pod.clone()).or_default() += 1;
        let at_send = match verb {
            Verb::Get => self.truth.pods.get(&pod).cloned(),
            _ => None,
        };
        self.requests.insert(id, (pod, verb, at_send));
        Ok(())
    }

    /// Removes the unanswered request `id`.
    fn take_request(&mut self, id: u64) -> Option<(PodKey, Verb, Option<TruePod>)> {
        let (key, verb, at_send) = self.requests.remove(&id)?;
        if let Some(n) = self.unanswered.get_mut(&key) {
            *n -= 1;
            if *n == 0 {
                self.unanswered.remove(&key);
            }
        }
        Some((key, verb, at_send))
    }

    /// The answer to a request the trace shows, built from the response line and the API state
    /// the trace shows at that instant (a GET returns the object as stored, or as it was stored
    /// when the GET was sent: the API server may have read it then and the answer come later;
    /// a PATCH's new resourceVersion is the response's, else the stored pod's).
    pub(super) fn response(
        &mut self,
        id: u64,
        result: ResponseResult,
        uid: &Option<Uid>,
        version: Option<ResourceVersion>,
        t: Time,
    ) -> Result<()> {
        let Some((key, verb, at_send)) = self.take_request(id) else {
            return Err(self.bad(&format!(
                "id: response to request #{id}, which the trace did not send (or answered already)"
            )));
        };
        self.advance(&key, t)?;
        let stored = self.truth.pods.get(&key);
        let shows = |p: &&TruePod| uid.as_ref().is_none_or(|u| *u == p.pod.uid);
        let same_version = |p: &&TruePod| version.is_none_or(|v| v == p.version);
        let fetched = [stored, at_send.as_ref()]
            .into_iter()
            .flatten()
            .filter(shows)
            .find(same_version)
            .or_else(|| stored.filter(shows))
            .or_else(|| at_send.as_ref().filter(shows));
        match (result, &verb) {
            (ResponseResult::Ok, Verb::Get) if fetched.is_none() => {
                return Err(self.bad(&format!(
                    "result: request #{id} fetched {key}, which the trace does not show \
                     (with that uid) at {t}"
                )))
            }
            (ResponseResult::Ok, Verb::GetNode(node)) if !self.truth.nodes.contains_key(node) => {
                return Err(self.bad(&format!(
                    "result: request #{id} fetched node {node}, which the trace does not \
                     show at {t}"
                )))
            }
            _ => {}
        }
        if !self.components.contains_key(&key) {
            // Another share's pod (ORACLE-12), or one forgotten: nobody awaits the answer.
            return Ok(());
        }
        let result = match (result, &verb) {
            (ResponseResult::Ok, Verb::Get) => {
                let p = fetched.expect("checked above");
                ApiResult::Pod(Arc::new(FetchedPod {
                    pod: (*p.pod).clone(),
                    version: version.unwrap_or(p.version),
                    disruption_target: p.disruption_target,
                }))
            }
            (ResponseResult::Ok, Verb::GetNode(node)) => {
                ApiResult::Node(self.truth.nodes[node].clone())
            }
            (ResponseResult::Ok, Verb::PatchDisruptionTarget) => {
                ApiResult::Patched(version.or(stored.map(|p| p.version)).unwrap_or_default())
            }
            (ResponseResult::Ok, Verb::Delete) => ApiResult::Deleted,
            (ResponseResult::NotFound, _) => ApiResult::NotFound,
            (ResponseResult::PreconditionFailed, _) => ApiResult::PreconditionFailed,
            (ResponseResult::Failed, _) => ApiResult::Failed,
        };
        let Some(c) = self.components.get_mut(&key) else {
            return Ok(());
        };
        let owed = c
            .states
            .iter()
            .find_map(|s| s.owed.front().map(|(_, o)| o.clone()));
        let states = std::mem::take(&mut c.states);
        c.states = self.machine.respond(states, t, id, &result);
        if c.states.is_empty() {
            let message = match owed {
                Some(o) => format!(
                    "request #{id} answered at {t} before {key} was {}, which every legal \
                     behaviour does first",
                    verdict::output_text(&o)
                ),
                None => format!(
                    "request #{id} answered at {t}, but no legal behaviour awaited its answer"
                ),
            };
            return Err(self.violation(&key, t, message, Expected::Nothing));
        }
        self.settled(&key)
    }

    /// A controller output line: some state must produce it next (ORACLE-7).
    pub(super) fn output(&mut self, key: &PodKey, seen: &Seen, t: Time) -> Result<()> {
        if !self.owns(key) {
            return Ok(()); // another share's pod
        }
        if !self.components.contains_key(key) {
            let what = verdict::seen_text(seen);
            let message = if self.truth.pods.contains_key(key) {
                format!("{key} {what} at {t}, but no legal behaviour knows pod {key} yet")
            } else {
                format!(
                    "{key} {what} at {t}, but the API server has no pod {key} and no legal \
                     behaviour has anything pending for it"
                )
            };
            return Err(self.violation(key, t, message, Expected::Nothing));
        }
        self.advance(key, t)?;
        let c = self.components.get_mut(key).expect("component exists");
        let mut alternatives: Vec<Output> = Vec::new();
        let states = std::mem::take(&mut c.states);
        c.states = self.machine.produce(
            states,
            t,
            &self.truth,
            seen,
            &mut self.search,
            &mut alternatives,
        );
        if let Some(at) = self.search.gave_up() {
            return Err(self.inconclusive(key, at));
        }
        if c.states.is_empty() {
            let (message, expected) = self.context(key, t).unexplained(seen, &alternatives);
            return Err(self.violation(key, t, message, expected));
        }
        self.settled(key)
    }

    pub(super) fn restarted(&mut self, t: Time) -> Result<()> {
        self.requests.clear();
        self.unanswered.clear();
        let keys = self.keys();
        for key in keys {
            self.advance(&key, t)?;
            let Some(c) = self.components.get_mut(&key) else {
                continue;
            };
            let nodes: Vec<Arc<Node>> = c
                .nodes
                .iter()
                .filter_map(|n| self.truth.nodes.get(n).cloned())
                .collect();
            let pods: Vec<Arc<Pod>> = self.truth.pod(&key).cloned().into_iter().collect();
            let owed = c
                .states
                .iter()
                .find_map(|s| s.owed.front().map(|(_, o)| o.clone()));
            let states = std::mem::take(&mut c.states);
            c.states = self.machine.restart(states, t, &nodes, &pods);
            if c.states.is_empty() {
                let what = owed.map_or("acted".into(), |o| verdict::output_text(&o));
                let message = format!(
                    "the controller restarted at {t} although {key} had been {what} without \
                     the trace showing it"
                );
                return Err(self.violation(&key, t, message, Expected::Nothing));
            }
            self.settled(&key)?;
        }
        if let Some(throttle) = &mut self.machine.throttle {
            throttle.restarted();
        }
        Ok(())
    }
}
