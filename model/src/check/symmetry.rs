//! Symmetry reduction (stateright `symmetry_fn`, honoured by DFS and simulation only).
//! Spec: MODEL-SYM (specs/spec.md, "Symmetry").

use super::state::SysState;

/// The canonical representative of `s`'s symmetry class.
pub fn representative(s: &SysState) -> SysState {
    s.clone()
}
