#!/usr/bin/env bash
# Instructions per unique state of the model checker, counted by valgrind's callgrind: a figure
# that, unlike wall time on a shared machine, does not move with the load. Each line is one
# `taintcheck check` run (DFS, one thread): the process's instructions over its unique states.
# The symmetry ratio is the symmetric run's figure over the plain run's on the same
# configuration. The reference is stateright's two-phase commit example with RMS managers
# (`taintcheck bench two-phase`, 6 by default: about the unreduced `default`'s unique states);
# the per-state target is the plain run's figure at most the example's (ratio <= 1.0).
# Usage: scripts/model-instructions.sh [CONFIG [BUDGET [RMS]]] (default: three-pods 0 6;
# `pods-and-nodes 2` also renames nodes).
# Needs valgrind (Debian package `valgrind`).
set -euo pipefail
cd "$(dirname "$0")/.."
config=${1:-three-pods}
budget=${2:-0}
rms=${3:-6}
cargo build --profile bench-release -p taintcheck --bin taintcheck 2>/dev/null
bin=target/bench-release/taintcheck
per_state() {
  local log json ir unique
  log=$(mktemp)
  json=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" check --config "$config" \
    --budget "$budget" --strategy dfs --threads 1 "$@" --json 2>"$log" || true)
  ir=$(grep -o "Collected : [0-9]*" "$log" | awk '{print $3}')
  rm "$log"
  unique=$(jq .unique_states <<<"$json")
  echo $((ir / unique)) "$unique"
}
# The same count for the two-phase commit example.
two_phase() {
  local log json ir unique
  log=$(mktemp)
  json=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" bench two-phase \
    --rms "$rms" --json 2>"$log")
  ir=$(grep -o "Collected : [0-9]*" "$log" | awk '{print $3}')
  rm "$log"
  unique=$(jq .unique_states <<<"$json")
  echo $((ir / unique)) "$unique"
}
read -r plain plain_unique < <(per_state --reduction none)
read -r sym sym_unique < <(per_state --reduction none --symmetry)
read -r por por_unique < <(per_state --reduction por)
echo "$config, budget $budget, no reduction: $plain instructions per unique state ($plain_unique unique)"
echo "$config, budget $budget, symmetry: $sym instructions per unique state ($sym_unique unique)"
echo "$config, budget $budget, partial-order reduction: $por instructions per unique state ($por_unique unique)"
read -r tpc tpc_unique < <(two_phase)
echo "stateright two-phase commit, $rms managers: $tpc instructions per unique state ($tpc_unique unique)"
awk -v s="$sym" -v p="$plain" 'BEGIN { printf "symmetry costs %.2fx a plain state per unique state\n", s / p }'
awk -v t="$tpc" -v p="$plain" 'BEGIN { printf "a plain state costs %.2fx a two-phase commit state (target: at most 1.0)\n", p / t }'
