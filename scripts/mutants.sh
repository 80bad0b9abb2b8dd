#!/usr/bin/env bash
# Mutation testing of the core's decision files: cargo-mutants with .cargo/mutants.toml, one file
# at a time, one mutant at a time. Usage: scripts/mutants.sh [FILE...] [-- CARGO-MUTANTS-ARGS]
# (default: the decision files listed below, in order; `-- --cargo-arg=--lib` builds and runs only
# the unit tests, much sooner). Results: target/mutants/<file>/mutants.out (caught.txt, missed.txt,
# timeout.txt, unviable.txt); MUTANTS_RUN=NAME appends -NAME, for a rerun that keeps the first
# run's outcomes. Scores: scripts/mutants-scores.sh, docs/mutants.md.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! cargo mutants --version >/dev/null 2>&1; then
    echo "scripts/mutants.sh: cargo-mutants is not installed; install it with" >&2
    echo "    cargo install cargo-mutants --locked" >&2
    exit 2
fi

case "${1:-}" in
-h | --help)
    sed -n '2,7s/^# \{0,1\}//p' "$0"
    exit 0
    ;;
esac

files=()
while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do
    files+=("$1")
    shift
done
[ "${1:-}" = "--" ] && shift
# Without a baseline the tool cannot time the tests and would wait 300 s for a hung mutant; the
# core's unit tests take seconds.
for arg in "$@"; do
    case "$arg" in
    --baseline=skip) set -- --timeout=60 "$@" && break ;;
    esac
done
# The decision surface, in the order to run it; the oracle's truth.rs and verdict.rs are tested
# with the oracle crate's tests.
if [ "${#files[@]}" -eq 0 ]; then
    files=(core/src/timed_queue.rs core/src/handlers.rs core/src/matching.rs core/src/arrivals.rs
        core/src/workqueue.rs core/src/work.rs core/src/shards.rs core/src/controller/mod.rs
        core/src/controller/step.rs core/src/controller/rename.rs
        model/oracle/src/truth.rs model/oracle/src/verdict.rs)
fi

# The mutants are applied in a copy of the tree that persists under target/mutants/tree, with its
# own build directory, so the dependencies are built once and each file's run rebuilds only the
# core. Files are copied only when they differ, which keeps the copy's build fresh.
root=$PWD
tree=target/mutants/tree
mkdir -p "$tree"
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
    if [ -f "$f" ] && ! cmp -s "$f" "$tree/$f"; then
        mkdir -p "$tree/$(dirname "$f")"
        cp "$f" "$tree/$f"
    fi
done

status=0
for file in "${files[@]}"; do
    # The crate the file belongs to is mutated and tested with its own tests.
    case "$file" in
    model/oracle/*) package=taintcheck-oracle ;;
    model/formats/*) package=taintcheck-formats ;;
    model/*) package=taintcheck-model ;;
    *) package=taintcheck-core ;;
    esac
    # core/src/controller/step.rs -> controller-step; model/oracle/src/truth.rs -> oracle-truth
    name=${file#core/src/}
    name=${name#model/src/}
    name=${name/#model\/oracle\/src\//oracle-}
    name=${name%.rs}
    name=${name//\//-}${MUTANTS_RUN:+-$MUTANTS_RUN}
    echo "== $file"
    mkdir -p "target/mutants/$name"
    # Exit code 2: some mutants were missed; go on with the other files and report it at the end.
    # In place, one mutant at a time (--jobs cannot be combined with --in-place).
    cargo mutants --dir "$tree" --in-place --package "$package" --test-package "$package" \
        --file "$file" \
        --output "$root/target/mutants/$name" "$@" || status=$?
done
exit "$status"
