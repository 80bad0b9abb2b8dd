#!/usr/bin/env bash
# Regenerates the tables of specs/verdicts.md ("## The table" to the end of the file) from
# `taintcheck check --json`: one table per configuration, one column per switch set of upstream
# releases (PROFILE-R2; the first is `v1.18`'s, the last `latest`'s) and one for `fixed`, the
# unique states of a BFS run without reduction (the verdicts are the same with it, MODEL-POR).
# tests/model_verdicts.rs asserts the cells of the named profiles' columns. Usage:
#
#   scripts/verdict-tables.sh [TAINTCHECK]
#
# TAINTCHECK: the binary (default target/release/taintcheck, built if missing). Needs jq.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v jq >/dev/null || { echo "scripts/verdict-tables.sh: needs jq" >&2; exit 2; }
bin=${1:-target/release/taintcheck}
[ -x "$bin" ] || cargo build --release --bin taintcheck
# A release of each switch set between v1.18 and latest names it to `--profile`; the headings
# are the legend's (specs/verdicts.md, "Verdicts per Kubernetes release").
profiles=(v1.18 1.20 1.26.0 1.28.4 1.31 1.33 latest fixed)
headings='| property | v1.18 | 1.18.9-1.25 | 1.26-1.28 early | 1.26-1.29 late | 1.30-1.32 | 1.33-1.34 | latest | fixed |\n|---|---|---|---|---|---|---|---|---|\n'
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
    # Exit 1 is a finding (a violated property), not a failure of the run.
    "$bin" check --profile "$p" --config "$c" --reduction none --json 2>/dev/null >"$tmp.$p" ||
      [ $? -eq 1 ] || { echo "check --profile $p --config $c failed" >&2; exit 2; }
  done
  printf '### `%s`\n\n'"$headings" "$c" >>"$tmp"
  jq -r -s '
    def cell: {"holds": "holds", "violated": "**violated**", "example_found": "example",
               "no_example": "no example", "not_applicable": "not applicable"}[.];
    (.[0].properties | length) as $n
    | ([range(0; $n) as $i
        | "| \(.[0].properties[$i].name) | "
          + ([.[] | .properties[$i].status | cell] | join(" | ")) + " |"]
       + ["| *unique states (bfs)* | " + ([.[] | .unique_states | tostring] | join(" | ")) + " |"])
    | .[]' "${profiles[@]/#/$tmp.}" >>"$tmp"
  echo >>"$tmp"
done
# No blank line at the end of the file.
sed -i '$ { /^$/d }' "$tmp"
cp "$tmp" "$file"
