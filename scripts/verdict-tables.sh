#!/usr/bin/env bash
# Regenerates the tables of specs/verdicts.md ("## The table" to the end of the file) from
# `taintcheck check --json`: one table per configuration, one column per profile, the unique
# states of a BFS run without reduction (the verdicts are the same with it, MODEL-POR).
# tests/model_verdicts.rs asserts the same cells. Usage:
#
#   scripts/verdict-tables.sh [TAINTCHECK]
#
# TAINTCHECK: the binary (default target/release/taintcheck, built if missing). Needs jq.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v jq >/dev/null || { echo "scripts/verdict-tables.sh: needs jq" >&2; exit 2; }
bin=${1:-target/release/taintcheck}
[ -x "$bin" ] || cargo build --release --bin taintcheck
profiles=(v1.18 latest fixed)
configs=(default timer-vs-cancel same-name-successor toleration-change stale-cache
  failing-delete restart forever-toleration orphaned-timer live-read successor-stale-listing
  successor-while-deleting toleration-flip-while-deleting terminating-retaint
  rate-limited-storm relist-successor rate-limited-cancel)
file=specs/verdicts.md
tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp".*' EXIT
# Everything before the first configuration's table stays.
awk '/^## The table/ {t=1} t && /^### `/ {exit} {print}' "$file" >"$tmp"
for c in "${configs[@]}"; do
  for p in "${profiles[@]}"; do
    "$bin" check --profile "$p" --config "$c" --reduction none --json 2>/dev/null >"$tmp.$p"
  done
  printf '### `%s`\n\n| property | v1.18 | latest | fixed |\n|---|---|---|---|\n' "$c" >>"$tmp"
  jq -r -s '
    def cell: {"holds": "holds", "violated": "**violated**", "example_found": "example",
               "no_example": "no example", "not_applicable": "not applicable"}[.];
    (.[0].properties | length) as $n
    | ([range(0; $n) as $i
        | "| \(.[0].properties[$i].name) | "
          + ([.[] | .properties[$i].status | cell] | join(" | ")) + " |"]
       + ["| *unique states (bfs)* | " + ([.[] | .unique_states | tostring] | join(" | ")) + " |"])
    | .[]' "$tmp.v1.18" "$tmp.latest" "$tmp.fixed" >>"$tmp"
  echo >>"$tmp"
done
# No blank line at the end of the file.
sed -i '$ { /^$/d }' "$tmp"
cp "$tmp" "$file"
