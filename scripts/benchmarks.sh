#!/usr/bin/env bash
# Runs every measurement of taintcheck and writes docs/benchmarks.md from their JSON output,
# with the machine, its load, the date and the commit. Usage:
#
#   scripts/benchmarks.sh [--quick] [--out FILE]
#
# --quick runs each measurement with tiny settings (seconds, not minutes) to check that the
# pipeline works; the file it writes says so at the top, and its figures mean nothing.
# Needs cargo and jq; valgrind (Debian package `valgrind`) adds instructions per decision.
# Run it on an otherwise idle machine: wall times move with the load, which the file records.
set -euo pipefail
cd "$(dirname "$0")/.."

quick=false
out=docs/benchmarks.md
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=true ;;
    --out) out="$2"; shift ;;
    *) echo "usage: scripts/benchmarks.sh [--quick] [--out FILE]" >&2; exit 2 ;;
  esac
  shift
done
command -v jq >/dev/null || { echo "scripts/benchmarks.sh: needs jq" >&2; exit 2; }

# The settings of each measurement: the published ones, or tiny ones with --quick.
if $quick; then
  model_args=()
  storm_args=(--nodes 20 --pods-per-node 3 --lateness-evictions 0)
  lateness_args=(--nodes 10 --pods-per-node 3 --lateness-evictions 20 --rate 1000)
  oracle_args=(--nodes 10 --pods-per-node 2 --waves 2)
  criterion_args=(--warm-up-time 0.1 --measurement-time 0.1 --sample-size 10)
  instruction_profiles=(latest)
else
  model_args=()
  storm_args=(--nodes 5000 --pods-per-node 30 --lateness-evictions 0)
  lateness_args=(--nodes 1000 --pods-per-node 30 --lateness-evictions 2000 --rate 1000)
  oracle_args=(--nodes 1000 --pods-per-node 20 --waves 6)
  criterion_args=()
  instruction_profiles=(v1.18 latest fixed)
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
started=$(date -u '+%Y-%m-%d %H:%M UTC')

echo "building (release)..." >&2
cargo build --profile bench-release --quiet --bin taintcheck
tc=target/bench-release/taintcheck

echo "bench model..." >&2
$tc bench model "${model_args[@]}" --json >"$work/model.json"
echo "bench runtime (storm)..." >&2
$tc bench runtime "${storm_args[@]}" --json >"$work/storm.json"
echo "bench runtime (lateness)..." >&2
$tc bench runtime "${lateness_args[@]}" --json >"$work/lateness.json"
echo "bench oracle..." >&2
$tc bench oracle "${oracle_args[@]}" --trace "$work/scale.ndjson" --json >"$work/oracle-1000.json"
$tc bench oracle "${oracle_args[@]}" --trace "$work/scale.ndjson" --latency-bound-ms 0 --json \
  >"$work/oracle-0.json"
$tc bench oracle "${oracle_args[@]}" --trace "$work/scale.ndjson" --threads 2 --json \
  >"$work/oracle-1000-2.json"

# Criterion writes each benchmark's estimates under CRITERION_HOME; a fresh one holds this run's.
echo "criterion benches (core, matching)..." >&2
for bench in core matching; do
  CRITERION_HOME="$work/criterion" cargo bench --profile bench-release --quiet -p taintcheck-core --bench "$bench" -- \
    "${criterion_args[@]}" >"$work/criterion-$bench.log" 2>&1
done
for f in "$work"/criterion/*/new/benchmark.json "$work"/criterion/*/*/new/benchmark.json; do
  [ -e "$f" ] || continue
  jq -c --slurpfile e "$(dirname "$f")/estimates.json" \
    '{id: .full_id, ns: $e[0].median.point_estimate,
      low: $e[0].median.confidence_interval.lower_bound,
      high: $e[0].median.confidence_interval.upper_bound,
      elements: (.throughput.Elements // null)}' "$f"
done | jq -s 'sort_by(.id)' >"$work/criterion.json"

instructions="valgrind not installed: skipped"
if command -v valgrind >/dev/null; then
  echo "instructions per decision (callgrind)..." >&2
  instructions=$(scripts/core-instructions.sh "${instruction_profiles[@]}")
fi
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# jq helpers: thousands separators, rounding to d decimals, nanoseconds in a readable unit.
jqlib='def th: (floor | tostring) as $s | ($s | length) as $n
  | [range(0; $n) | $s[.:.+1] + (if ($n - . - 1) % 3 == 0 and . < $n - 1 then "," else "" end)]
  | join("");
def r(d): . * pow(10; d) | round / pow(10; d);
def opt(f): if . == null then "unknown" else f end;
def dur: if . >= 1e6 then "\(. / 1e6 | r(2)) ms" elif . >= 1e3 then "\(. / 1e3 | r(1)) µs"
  else "\(r(1)) ns" end;'
report() { jq -r "$jqlib $1" "$2"; }

commit=$(git rev-parse --short=12 HEAD)
git diff --quiet HEAD -- . ":!$out" || commit="$commit plus uncommitted changes"
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//' || true)
memory=$(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)

{
  echo "# Benchmarks"
  echo
  echo "Written by \`scripts/benchmarks.sh$($quick && echo ' --quick')\`; do not edit by hand: run"
  echo "the script again."
  echo
  if $quick; then
    echo "> **Quick check, not measurements.** Every run below used tiny settings to check that"
    echo "> the script works; the figures say nothing about taintcheck's speed. Run"
    echo "> \`scripts/benchmarks.sh\` without \`--quick\` on an idle machine for real figures."
    echo
  fi
  echo "| Machine | |"
  echo "|---|---|"
  echo "| Date | $started |"
  echo "| Commit | $commit |"
  echo "| CPU | ${cpu:-unknown}, $(nproc) cores available |"
  echo "| Memory | $memory |"
  echo "| Load average (1, 5, 15 min) | $load_before at the start, $load_after at the end |"
  echo "| Toolchain | $(rustc --version) |"
  echo
  echo "Wall times move with the machine's load; state counts, decisions and instruction counts do"
  echo "not."
  echo
  echo "## Model checker"
  echo
  report '"`taintcheck bench model --profile \(.profile) --symmetry-budget \(.symmetry_budget)`:"
    + " each run in one process, wall seconds of the search before the shortest-path pass.\n\n"
    + "| Run | States | Unique | Depth | Seconds | Unique states/s |\n|---|---|---|---|---|---|\n"
    + ([.rows[] | "| \(.label) | \(.states | th) | \(.unique_states | th) | \(.max_depth) | "
        + "\(.seconds | r(3)) | \(.unique_states_per_second | th) |"] | join("\n"))
    + "\n| stateright two-phase commit, \(.two_phase.rms) managers, dfs, 1 thread | | "
    + "\(.two_phase.unique_states | th) | | \(.two_phase.seconds | r(3)) | "
    + "\(.two_phase.unique_states_per_second | th) |"
    + "\n\nPer unique state, `default` (DFS, one thread, no reduction) runs "
    + "\(.rate_vs_two_phase | r(2))× as fast as the two-phase commit example of stateright. "
    + "Partial-order reduction on `default` (DFS): \(.por_unique_state_ratio | r(2))× fewer unique states. "
    + "Two threads run BFS on `default` \(.two_thread_speedup | r(2))× as fast as one. "
    + ([.symmetry[] | "Symmetry on `\(.config)`: \(.unique_state_ratio | r(2))× fewer"
        + " unique states in \(.time_ratio | r(2))× the time."] | join(" "))' \
    "$work/model.json"
  echo
  cat <<'TARGETS'
The issue's targets for bigger configurations, each by the command that measures it (one
thread; `--reduction por`, the default, applies; `--no-cutoff`, so that every pod is explored:
without it `check` cuts each toleration class to its cutoff, MODEL-CUTOFF, and these three
configurations shrink to one or two pods): run them on an idle machine.

| Figure | Command | Target |
|---|---|---|
| `default --pods 4` | `taintcheck check --config default --pods 4 --no-cutoff --strategy dfs --threads 1 --json` (`seconds`) | ≤ 60 s |
| `default --pods 3 --budget 3` | `taintcheck check --config default --pods 3 --budget 3 --no-cutoff --strategy dfs --threads 1 --json` | ≤ 10 s |
| `three-pods`, budget 2 | `taintcheck check --config three-pods --budget 2 --no-cutoff --strategy dfs --threads 1 --json` | ≤ 4 s |
| Unique states/s against stateright's 2PC, matched size | `taintcheck bench model` (the ratio after the table) | ≥ 1.0× |
| Instructions per unique state against stateright's 2PC, matched size | `scripts/model-instructions.sh default 2 6` (the last line: `default` without reduction against the example with 6 managers; callgrind, load-independent) | ≤ 1.0× |
| Symmetry's cost per unique state against a plain state's | `scripts/model-instructions.sh three-pods 0` (callgrind instructions, load-independent) | ≤ 2× |
| Partial-order reduction, unique states | `taintcheck check --config C --profile P --strategy dfs --reduction none` and `--reduction por` (exact) | fewer |
TARGETS
  echo
  echo "## Reference runtime"
  echo
  echo "Eviction storm on the virtual clock (default 300 s tolerations, every second node recovers):"
  echo "\`taintcheck bench runtime ${storm_args[*]}\`."
  echo
  report '"| Nodes × pods | Workers | Setup s | Storm s | Decisions | Decisions/s | Requests | Evictions | Peak RSS MiB |\n"
    + "|---|---|---|---|---|---|---|---|---|\n"
    + "| \(.nodes | th) × \(.pods_per_node) (\(.profile)) | \(.workers) | \(.storm.setup_seconds | r(3)) | "
    + "\(.storm.storm_seconds | r(3)) | \(.storm.decisions | th) | \(.storm.decisions_per_second | th) | "
    + "\(.storm.requests | th) | \(.storm.evictions | th) | \(.storm.peak_rss_kib | opt(. / 1024 | round)) |"' \
    "$work/storm.json"
  echo
  # Measured once with callgrind and perf (the figures' commands are in the text): the profile
  # behind the storm's cost.
  cat <<'STORM'
What the storm cost, profiled with callgrind (`valgrind --tool=callgrind taintcheck bench runtime
--nodes 500 --pods-per-node 30 --lateness-evictions 0`) and `perf record -e context-switches`:
the hand-offs between the controller's threads. Every change of the controller woke all ten
dispatcher and worker threads, and each worked out every step the core offered to find its own
(`enabled_handler_steps`, 3.6 times per step taken: 24 % of the instructions); at 1,000 nodes
the process made 1.35 M voluntary context switches for 45,000 decisions and spent twice its
user time in the kernel. The runtime now works out the offered steps once per change and wakes
only the threads that have one, and an informer arms one delivery per instant instead of one
per event (the initial list armed 155,000). Instructions do not move with the load; context
switches and CPU seconds (`/usr/bin/time -f '%U %S %w'`) barely; wall seconds do (load average
15 to 20 while measured):

| Storm | Instructions | Voluntary context switches | User + sys CPU s | Setup s, storm s (wall) |
|---|---|---|---|---|
| 500 × 30, before | 2,240 M | | | |
| 500 × 30, after | 1,755 M | | | |
| 1,000 × 30, before | | 1,336,643 | 3.74 + 7.79 | 50.6, 34.9 |
| 1,000 × 30, after | 3,621 M | 90,416 | 1.26 + 0.81 | 6.2, 8.5 |

The instructions grow linearly with the nodes: 3.51 M per node at 500 nodes, 3.62 M at 1,000
(`valgrind --tool=callgrind taintcheck bench runtime --nodes N --pods-per-node 30
--lateness-evictions 0`).

What was left, profiled again on an idle machine (`perf record -e context-switches` and
`perf record --call-graph dwarf` of `taintcheck bench runtime --nodes 1000 --lateness-evictions 0`):
the set-up is one long hand-over. The initial list queues 150,000 pods; upstream's pod
dispatcher passes them one at a time through a worker's one-slot channel, and the 30 pods of a
node all go to the same worker, so the dispatcher and that worker take turns 150,000 times. Each
turn parked one thread on its condition variable and woke it with a system call: the pod
dispatcher made half of all context switches, and every `notify` was a `futex` call even when
nobody waited. The runtime now lets a thread that has just taken a step spin briefly (about
1,000 `pause`s, yielding every 64) for its next step before it parks (`spin_until` in
`impl/src/controller.rs`; on a virtual clock only, not under shuttle), notifies only threads that are parked, reads the
informers without a lock, and the timer service notifies its thread only while it sleeps, with a
condition variable of its own for the caller waiting for the end of the run. The storm's other
half is the timer thread, which runs every work step, API answer and informer delivery in
turn (half the storm's CPU: the API server's pod lookups, the informer cache's copies, the
timed queue's maps); its set of scheduled work steps is now hashed and it pops the due timer
instead of looking it up twice. The full storm, the binary before and after in one sitting on an
idle machine (`/usr/bin/time -f '%U %S %w' taintcheck bench runtime --lateness-evictions 0`,
`cargo build --release`, three runs after):

| Full storm, 5,000 × 30 | Setup s | Storm s | User + sys CPU s | Voluntary context switches |
|---|---|---|---|---|
| before | 5.35 | 4.60 | 4.97 + 4.95 | 790,739 |
| after | 1.51, 1.53, 1.51 | 2.10, 2.01, 1.98 | 3.47 + 1.06 | 43,663 |

The wall seconds move with the load; run it on an idle machine.
STORM
  echo
  echo "Eviction lateness on the real clock: \`taintcheck bench runtime ${lateness_args[*]}\`."
  echo
  report '.lateness | "| Evictions | Rate/s | p50 ms | p99 ms | max ms |\n|---|---|---|---|---|\n"
    + "| \(.evictions | th) | \(.rate_per_second | th) | \(.p50_ms) | \(.p99_ms) | \(.max_ms) |"' \
    "$work/lateness.json"
  echo
  echo "The p50 of about 1 ms is RT-CLOCK-2's: an eviction timer fires once the clock is past its"
  echo "instant."
  echo
  echo "## Conformance oracle"
  echo
  echo "The scale scenario's trace, recorded by the runtime once, then read and checked:"
  echo "\`taintcheck bench oracle ${oracle_args[*]} --trace scale.ndjson\`, on one thread with"
  echo "\`--latency-bound-ms 1000\` (the default) and \`0\`, and with \`--threads 2\` (ORACLE-12: the"
  echo "reading thread and two workers; the CPU time and the pods tracked are not sampled then)."
  echo "The first run records the trace, so its peak memory includes the runtime's."
  echo
  echo "| Latency bound | Threads | Lines | Pods | Seconds | CPU s | Lines/s | s per million lines | Largest frontier | Most pods tracked | Peak memory MiB |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
  for run in 1000 0 1000-2; do
    report '"| \(.latency_bound_ms) ms | \(.threads) | \(.lines | th) | \(.pods | th) | \(.seconds | r(3)) | "
      + "\(.cpu_seconds | opt(r(3))) | \(.lines_per_second | th) | "
      + "\(.seconds * 1e6 / ([.lines, 1] | max) | r(2)) | \(.max_frontier) | \(.max_tracked_pods | opt(th)) | "
      + "\(.peak_memory_kib | opt(. / 1024 | round)) |"' \
      "$work/oracle-$run.json"
  done
  echo
  echo "Hostile traces (repeated identical updates, streams of pods): \`scripts/hostile-figures.sh\`"
  echo "prints, per trace, the exit code, the wall time, the peak memory and the oracle's largest"
  echo "frontier and pods tracked; the state counts do not move with the load, and"
  echo "\`tests/oracle_frontier.rs\` asserts them (specs/oracle.md, ORACLE-F1, ORACLE-F2)."
  echo
  # State counts from tests/oracle_shapes.rs (deterministic), which fails when one grows past
  # its figure here by more than a quarter; the wall times were measured with taintcheck.
  cat <<'FRONTIER'
### Frontier on ordinary traces

The shapes on which the frontier's explanations multiply, counted in states (the frontier
enumerates each delivery instant within `D`, each work step within the step slack `S` and each
request's transit within `S`, ORACLE-4, ORACLE-5, ORACLE-11). The test fails when a count grows
past its figure here by more than a quarter. `tests/oracle_shapes.rs` counts them
(`cargo test --release --test oracle_shapes -- --nocapture`; the shapes that do not finish are
`#[ignore]`). Measured with `taintcheck` on a loaded two-core machine; the wall times are only
indicative, the state counts are what to compare.

| Shape | Largest frontier (states expanded) |
|---|---|
| Runtime traces with informer lags 100 to 300 ms and up to 100 ms of execution time per step (RT-JIT-1), 4 pods, 1 node, 3 to 6 taint changes, `D` = 300 ms, 220 per profile (`lagging_informers_and_slow_steps_raise_no_false_alarm`) | `v1.18` 2,396 (616,947), `latest` 2,344 (486,773), `fixed` 245 (246,998); 0 inconclusive, 0 false alarms; 3.1 s for the 660 traces |
| `expect ut-multiple-pods.yaml` (upstream `TestUpdateNodeWithMultiplePods`), `D` = 0 / 100 ms (`expect_on_upstreams_multiple_pods_counts_its_frontier`) | `latest` 11 (12,361) / 31 (57,618); `v1.18` 2 (11,213) / 2 (71,871). CLI, `latest`: 0.06 s, 14 MB / 0.28 s, 17 MB; `D` = 300 ms 0.42 s, 22 MB; 999 ms 0.29 s, 23 MB |
| `expect ut-multiple-pods.yaml`, `D` = 1 s, where two works' retry loops multiply (`expect_gives_up_within_its_limit_where_explanations_multiply`) | inconclusive: more than 100,000 states at once in the search at 1.02 to 1.03 s; `latest` 758 (1,559,568), `v1.18` 4 (2,097,828). CLI: `latest` 7.2 s, 498 MB; `v1.18` 9.0 s, 409 MB (before the search's bound: 6.9 GB after 60 s, no answer) |
| `expect` on a pod evicted at once whose node then gains a second untolerated taint (`retries-after-deletion`, from `taintcheck generate --seed 1`, scenario 167), `latest`, `D` = 300 / 400 ms (`expect_on_retries_after_a_deletion_counts_its_frontier`) | 37 (34,960) / 763 (315,900). CLI: 400 ms 1.4 s, 57 MB; 500 ms 7.4 s, 127 MB |
| `expect watch-dropped-relist.yaml`, `D` = 35 s (ignored test) | CLI: `latest` 26.7 s, 193 MB; `v1.18` 37.9 s, 247 MB |
| Node flapping its NoExecute taint every 5 ms, untolerating pod evicted, requests 50 ms, `D` = 1 s, 1 / 2 updates (`a_flapping_taint_counts_its_frontier`) | 1 / 2 updates: `v1.18` 759 (3,438) / 1,738 (20,045); `latest` 56 (764) / 238 (3,265); `fixed` 4 (290) / 20 (514). 3,000 updates (`--ignored`): inconclusive at lines 8 to 12, 148,256 / 247,993 / 490,493 states expanded, 5.3 s and 456 MB for the three |

The frontier grows with `D` in milliseconds and geometrically in the differing changes within
`D`; symbolic times (ORACLE-4, ORACLE-5) are what would keep it small. Subsumption
(ORACLE-SUB) drops a state whose deadlines are all no earlier than an otherwise equal state's,
when the frontier enters an instant and within the search at an instant, and forgets when an
ended backoff sleep ended. Against the binary before it, on the same shapes: the lagging traces
105,394 / 29,420 / 49,964 states expanded (`v1.18` / `latest` / `fixed`), `ut-multiple-pods`
24,256 / 131,114 under `latest` and 21,294 / 156,886 under `v1.18`, the flapping taint with 2
updates 68,822 / 9,983 / 548, and the retry loop that made `retries-after-deletion`
inconclusive at `D` = 400 ms (each of five 10 ms sleeps ending anywhere in `[u, u + D + S]`).
A request's transit (ORACLE-11) costs states only on traces that observe requests.
FRONTIER
  echo
  echo "## Core and matching"
  echo
  echo "criterion's median and its 95 % confidence interval:"
  echo "\`cargo bench --profile bench-release -p taintcheck-core --bench core\` (\`handleNodeUpdate\` on one node with 110"
  echo "pods and 3 NoExecute taints; \`fresh\` creates every pod's timer, \`steady\` finds them"
  echo "armed; the throughput is pod decisions) and \`--bench matching\` (10 tolerations, 5"
  echo "taints)$($quick && echo ", with \`-- ${criterion_args[*]}\`")."
  echo
  report '"| Benchmark | Median | 95 % interval | Throughput |\n|---|---|---|---|\n"
    + ([.[] | "| `\(.id)` | \(.ns | dur) | \(.low | dur) – \(.high | dur) | "
        + (if .elements then "\(.elements / .ns * 1000 | r(2)) M/s" else "" end) + " |"]
       | join("\n"))' "$work/criterion.json"
  echo
  echo "Instructions per pod decision of the steady node update, counted by callgrind"
  echo "(\`scripts/core-instructions.sh ${instruction_profiles[*]}\`), which do not move with the load:"
  echo
  echo '```'
  echo "$instructions"
  echo '```'
  echo
  # Measured once with callgrind (the commands are in the text); tests/run_cost.rs asserts the
  # linearity on every test run.
  cat <<'RUN'
## `run` and its taint operations

N taints added to one node, 10 ms apart (`scripts/hostile-figures.sh`'s case 11), counted by
callgrind (`valgrind --tool=callgrind taintcheck run ops.yaml`, ops.yaml as that script writes
it): 1,445 M instructions at 1,000 operations, 5,598 M at 2,000 (3.87×). Every part grows
alike: the timeline's lines (48 %), kubectl's rewrite of the node's taint list (`reorganize`,
33 %) and the core's `handleNodeUpdate` (6 %) each read the node's whole taint list on each
operation, as upstream does, and each line of the timeline shows it (LIMIT-COST). The run is
linear in what it prints: operation i prints i taints, N operations N²/2 of them, at 2,890
instructions per printed taint at 1,000 operations and 2,800 at 2,000. On a node whose taints
do not pile up (a taint added and removed in turn) the run is linear in its operations: 86,200
instructions per operation at 500 operations, 81,600 at 2,000 (the threads' brief spin before
they park counts here: 78,400 and 76,100 without it). `tests/run_cost.rs` counts both
with callgrind on every test run (the turns at 500 and 2,000 operations, the piled-up taints at
250 and 500) and requires a flat cost per operation and per printed taint.
RUN
  echo
  cat <<'BUILD'
## Build settings

`cargo build --release` compiles every crate with cargo's default 16 codegen units; the
measurements build with `--profile bench-release` (release plus one codegen unit for
taintcheck-core, taintcheck-model and taintcheck-oracle, `Cargo.toml`), so that the figures above do not move
with how the compiler partitions the code. One unit in `release` itself would have to make
`check` faster by more than a user feels to pay for a first build minutes longer: it saves
8 % of `check`'s instructions (10 % on the `bench model` row), about 0.07 s of its 0.84 s
of CPU. Instructions of
`taintcheck check` (the default configuration, what a new user runs first) and of the first row
of `bench model` (`check --config default --budget 2 --strategy dfs --threads 1 --reduction
none`), counted by callgrind (`valgrind --tool=callgrind`), and the CPU time of compiling the
four workspace crates from warm dependencies (`time cargo build --release --bin taintcheck`,
user + sys; load average 14 to 22 while it ran, so its wall time, 50 min, means nothing):

| Codegen units (core, model) | `check` instructions | `bench model` first row instructions | Compile CPU time |
|---|---|---|---|
| 1, 1 | 1,623 M | 1,181 M | 9 min 55 s |
| 16, 16 (default) | 1,762 M | 1,309 M | 6 min 40 s |

The two crates were measured together, not one at a time. On this 2-core machine the single
unit also keeps one core idle while the model compiles; with 16 units both cores share it.

The formats, the model and the oracle are three crates (`model/formats`, `model`,
`model/oracle`): once the formats are built, the model and the oracle compile side by side.
The split did not slow the model. Against a1a5d58, the last commit before it, built the same
way (`cargo build --profile bench-release --bin taintcheck` in a worktree of that commit), in
one sitting, three alternating runs of `taintcheck bench model --profile latest
--symmetry-budget 1` each: every row explores the same states, in 0.95x to 1.02x the old
binary's median time. The first row's run, counted by callgrind (`valgrind --tool=callgrind
taintcheck check --profile latest --config default --budget 2 --strategy dfs --threads 1
--reduction none`): 1,229.7 M instructions, against 1,232.8 M before the split.
The commands that talk to a real cluster (`controller`, `proxy`, `record`, `reproduce`,
`upstream`, `bench proxy`) are the `cluster` feature, off by default: they need the kube-rs
stack (kube, tokio, rustls, hyper): the CLI's dependency tree is 246 crates with the feature
and 91 without (`cargo tree -p taintcheck -e normal`), and with it the CLI was 1.46 M lines of
LLVM IR, most of it serde_json deserializers of Kubernetes objects and kube-rs watchers
instantiated for it. The CLI and the oracle build incrementally in `release` (`Cargo.toml`); the model, whose
speed `check` users feel, does not. Measured on this 2-core machine (AMD EPYC), the crates
already downloaded, nothing else running:

| What | Time | Command |
|---|---|---|
| First build on a fresh clone, then the default check | 2 min 14 s (4 min 9 s of CPU) | `time cargo run --release -- check` (empty target directory) |
| The same build, by crate | dependencies alone until 20 s; core 12 s, k8s-openapi 30 s, formats 66 s, model 39 s (beside the formats from 60 s), runtime 13 s, oracle 14 s, CLI 17 s; the last crate done at 134 s | `cargo build --release --bin taintcheck --timings` |
| The tests' first build, everything the test command compiles | 9 min 15 s (18 min 11 s of CPU) | `time cargo test --release --workspace --features cluster --no-run` (empty target directory) |
| A one-line change in the oracle, CLI rebuilt | 3 s | change `DEFAULT_STEP_SLACK` in `model/oracle/src/lib.rs`, `time cargo build --release --bin taintcheck` |
| `conform` on the 1.46-million-line scale trace, incremental against whole-crate oracle, three alternating runs | 22.6, 20.9, 18.8 s against 27.4, 23.6, 21.4 s | `taintcheck bench oracle --trace scale.ndjson` |

The tests' build does not meet the 6 minutes asked for. Of its 18 min of CPU, 12.9 min are the
workspace's own 74 units: the CLI with the real-cluster commands (110 s), the libraries built a
second time as unit-test binaries (formats 74 s, cluster 47 s, core 42 s, model 36 s), and 45
integration-test binaries, each linking the whole workspace (`controller_faults` 37 s,
`controller_identity` 36 s). Most of the rest is serde and kube-rs generics instantiated for
Kubernetes objects in each crate that decodes them (`cargo llvm-lines`). The formats crate
decoded Pods and Nodes through two deserializers (an owned `serde_json::Value` for manifests, a
borrowed one for recordings), each wrapped by `serde_path_to_error`, so k8s-openapi's type trees
were instantiated twice; manifests now decode from a borrowed `Value` too: 891,048 lines of LLVM
IR instead of 1,161,550 (`cargo llvm-lines --release -p taintcheck-formats --lib`), 52.0 s of
CPU to build instead of 66.4 s (`cargo build --release -p taintcheck-formats`, dependencies
built), and once more for its unit-test binary. The small integration tests cost under a second
each beyond their own code, so merging them into fewer binaries would save little.
BUILD
} >"$out"
echo "wrote $out" >&2
