//! What one transition did: the core's effects, judged at that step, and the model's own notes
//! (API answers, deliveries), kept only to describe the step.

use taintcheck_core::Effect;

/// What one transition did, for display and for the properties judged at that step.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// The controller core's outputs, in order.
    pub effects: Vec<Effect>,
    /// The model's notes, in order.
    pub notes: Notes,
}

/// Model-side notes (API answers, deliveries), in order, for a step's description. Kept only
/// when a step is described ([`TaintSys::outcome`](super::transition::TaintSys::outcome)): while
/// checking no one reads them, and formatting them cost ≈ 4 % of a check's instructions.
#[derive(Clone, Debug, Default)]
pub struct Notes(Option<Vec<String>>);

impl Notes {
    /// Notes that keep what they are told.
    pub(super) fn recording() -> Notes {
        Notes(Some(Vec::new()))
    }

    /// Adds the note `text` makes, calling it only when notes are kept.
    pub(super) fn add(&mut self, text: impl FnOnce() -> String) {
        if let Some(notes) = &mut self.0 {
            notes.push(text());
        }
    }

    /// The notes kept (none while checking).
    pub fn as_slice(&self) -> &[String] {
        self.0.as_deref().unwrap_or_default()
    }
}
