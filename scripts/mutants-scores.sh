#!/usr/bin/env bash
# Prints the per-file scores of the mutation runs left by scripts/mutants.sh, as the Markdown
# table of docs/mutants.md, then the mutants still missed. Usage: scripts/mutants-scores.sh
# [OUTPUT-DIR...] (default: every run under target/mutants). A mutant tested by several runs
# (a file's run, then a rerun of what it missed) counts once, with the outcome of the latest run;
# a mutant .cargo/mutants.toml excludes as equivalent is left out.
# Needs jq.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$#" -eq 0 ]; then
    set -- target/mutants/*/
fi
runs=()
for dir in "$@"; do
    f="${dir%/}/mutants.out/outcomes.json"
    [ -f "$f" ] && runs+=("$f")
done
if [ "${#runs[@]}" -eq 0 ]; then
    echo "scripts/mutants-scores.sh: no mutants.out/outcomes.json under: $*" >&2
    exit 2
fi

# One line per run: its start time, then the outcomes file; oldest first.
ordered=$(for f in "${runs[@]}"; do
    printf '%s\t%s\n' "$(jq -r .start_time "$f")" "$f"
done | sort | cut -f2)

# The equivalent mutants excluded in .cargo/mutants.toml (one quoted regex per line of
# `exclude_re`), left out of runs made before they were excluded.
excluded=$(sed -n "/^exclude_re/,/^]/s/^ *'\(.*\)',\{0,1\} *$/\1/p" .cargo/mutants.toml)

# file <TAB> mutant <TAB> outcome <TAB> tests ("unit": the core's unit tests alone, --lib; "all":
# its integration tests too), one line per mutant tested, the latest run's outcome kept.
outcomes=$(while IFS= read -r f; do
    jq -r '.outcomes[] | select(.scenario != "Baseline")
        | [.scenario.Mutant.file, .scenario.Mutant.name, .summary,
            (if any(.phase_results[]; (.argv // []) | index("--lib")) then "unit" else "all" end)]
        | @tsv' "$f"
done <<<"$ordered" | awk -F'\t' '{ last[$2] = $0; if (!($2 in seen)) { seen[$2] = 1; order[++n] = $2 } }
    END { for (i = 1; i <= n; i++) print last[order[i]] }' |
    EXCLUDED=$excluded awk -F'\t' '
        BEGIN { n = split(ENVIRON["EXCLUDED"], re, "\n") }
        { for (i = 1; i <= n; i++) if (re[i] != "" && $2 ~ re[i]) next; print }')

version=$(jq -r .cargo_mutants_version "$(tail -n1 <<<"$ordered")")
echo "Measured with cargo-mutants $version; runs started $(jq -r .start_time $(head -n1 <<<"$ordered") | cut -c1-10) to $(jq -r .start_time "$(tail -n1 <<<"$ordered")" | cut -c1-10)."
echo
echo '| file | tests | mutants | unviable | caught | timeout | missed | score (caught + timeout) / viable |'
echo '|---|---|---|---|---|---|---|---|'
awk -F'\t' '
    !($1 in files) { files[$1] = 1; order[++n] = $1 }
    { count[$1, $3]++; total[$1]++; tests[$1, $4]++ }
    END {
        for (i = 1; i <= n; i++) {
            f = order[i]
            caught = count[f, "CaughtMutant"] + 0; timeout = count[f, "Timeout"] + 0
            missed = count[f, "MissedMutant"] + 0; unviable = count[f, "Unviable"] + 0
            viable = caught + timeout + missed
            score = viable ? sprintf("%d / %d = %.1f %%", caught + timeout, viable, 100 * (caught + timeout) / viable) : "-"
            unit = tests[f, "unit"] + 0; all = tests[f, "all"] + 0
            kind = !all ? "unit" : !unit ? "all" : sprintf("unit; %d with all", all)
            printf "| `%s` | %s | %d | %d | %d | %d | %d | %s |\n", f, kind, total[f], unviable, caught, timeout, missed, score
        }
    }' <<<"$outcomes"
missed=$(awk -F'\t' '$3 == "MissedMutant" { print "- `" $2 "`" }' <<<"$outcomes")
echo
if [ -n "$missed" ]; then
    echo "Missed:"
    echo
    echo "$missed"
else
    echo "Missed: none."
fi
