#!/usr/bin/env bash
# Instructions per pod decision of the core's steady node update (`benches/core.rs`,
# `steady/PROFILE`), counted by valgrind's callgrind: a figure that, unlike wall time on a shared
# machine, does not move with the load. Usage: scripts/core-instructions.sh [PROFILE...]
# (default: v1.18 latest fixed). Needs valgrind (Debian package `valgrind`).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo bench --profile bench-release -p taintcheck-core --bench core --no-run 2>/dev/null
bench=$(ls -t target/bench-release/deps/core-* | grep -v '\.d$' | head -1)
out=$(mktemp -d)
for profile in "${@:-v1.18 latest fixed}"; do
  for p in $profile; do
    valgrind --tool=callgrind --callgrind-out-file="$out/$p" "$bench" --bench --profile-time 1 \
      "steady/$p" >/dev/null 2>&1
    # The caller tree: process_pod_on_node's inclusive count and its calls from the node update
    # (node_update_pod, or whichever caller the compiler inlined it into: the harness's
    # run_handlers or the controller's step).
    callgrind_annotate --tree=caller --inclusive=yes "$out/$p" 2>/dev/null |
      grep -E -A1 "< .*(node_update_pod|run_handlers|Controller>::step) \(.*x\)" | grep -B1 "\*  .*process_pod_on_node \[" |
      head -1 | awk -v p="$p" '{
        ir = $1; gsub(",", "", ir)
        calls = $0; sub(/.*\(/, "", calls); sub(/x\).*/, "", calls); gsub(",", "", calls)
        printf "%s: %.0f instructions per pod decision (%s decisions)\n", p, ir / calls, calls
      }'
  done
done
rm -r "$out"
