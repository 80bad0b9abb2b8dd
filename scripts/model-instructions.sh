#!/usr/bin/env bash
# Instructions per unique state of the model checker, counted by valgrind's callgrind: a figure
# that, unlike wall time on a shared machine, does not move with the load. Each line is one
# `taintcheck check` run (DFS, one thread): the process's instructions over its unique states.
# The symmetry ratio is the symmetric run's figure over the plain run's on the same
# configuration. Usage: scripts/model-instructions.sh [CONFIG [BUDGET]] (default: three-pods 0;
# `pods-and-nodes 2` also renames nodes).
# Needs valgrind (Debian package `valgrind`).
set -euo pipefail
cd "$(dirname "$0")/.."
config=${1:-three-pods}
budget=${2:-0}
cargo build --release -p taintcheck --bin taintcheck 2>/dev/null
bin=target/release/taintcheck
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
read -r plain plain_unique < <(per_state --reduction none)
read -r sym sym_unique < <(per_state --reduction none --symmetry)
read -r por por_unique < <(per_state --reduction por)
echo "$config, budget $budget, no reduction: $plain instructions per unique state ($plain_unique unique)"
echo "$config, budget $budget, symmetry: $sym instructions per unique state ($sym_unique unique)"
echo "$config, budget $budget, partial-order reduction: $por instructions per unique state ($por_unique unique)"
awk -v s="$sym" -v p="$plain" 'BEGIN { printf "symmetry costs %.2fx a plain state per unique state\n", s / p }'
