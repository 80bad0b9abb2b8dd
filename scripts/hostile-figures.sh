#!/usr/bin/env bash
# The hostile inputs of specs/limits.md, measured: for each case the exit code, the wall time and
# the peak memory (GNU time), under an 8 GiB address-space cap and a 120 s time limit, as the
# limits were first measured. Usage: scripts/hostile-figures.sh [TAINTCHECK-BINARY]
# (default target/release/taintcheck). It writes Markdown: `scripts/hostile-figures.sh >
# docs/hostile.md`. Exit codes, state counts and peak memory do not depend on the machine's load;
# wall times do.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-target/release/taintcheck}")
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
work=$(mktemp -d)
cd "$work"
fence='```'
cat <<EOF
# Hostile inputs, measured

The output of \`scripts/hostile-figures.sh\` (commit $commit, $(nproc) cores, load average
$(cut -d' ' -f1-3 /proc/loadavg) at the start): the hostile inputs of \`specs/limits.md\` and of
the oracle's ORACLE-F1/F2, each run under an 8 GiB address-space cap and a 120 s time limit, with
its exit code, wall time, peak resident memory (GNU time) and the start of its message. Exit
codes, the oracle's state counts and peak memory do not depend on the machine's load; wall times
do, and on a loaded machine they are upper bounds. Regenerate with
\`scripts/hostile-figures.sh > docs/hostile.md\` after \`cargo build --release\`.

$fence
EOF
trap 'echo "$fence"; rm -rf "$work"' EXIT

# case NAME EXPECTED-EXIT COMMAND...: one line per case.
case_() {
    local name=$1 expected=$2
    shift 2
    local rc secs kb
    /usr/bin/time -o time.txt -f '%x %e %M' prlimit --as=8589934592 timeout 120 "$@" \
        >/dev/null 2>err.txt
    read -r rc secs kb < <(tail -1 time.txt)
    printf '%-46s exit %3s (expected %s)  %7s s  %8s MiB  %s\n' "$name" "$rc" "$expected" \
        "$secs" "$((kb / 1024))" "$(head -c 100 err.txt | head -1)"
}

py() { python3 -c "$1"; }

py "print('- '*20000+'1')" >deep.yaml
py "print(''.join(' '*i+'k:\n' for i in range(6000)))" >deep-map.yaml
case_ "1. 20,000-deep block list: validate" 2 "$bin" validate deep.yaml
case_ "1. 6,000-deep block mapping: validate" 2 "$bin" validate deep-map.yaml
cat >workers.yaml <<'EOF'
name: w
runtime: {workers: 1000000}
nodes: [{name: n1}]
EOF
case_ "2. runtime.workers 1,000,000: run" 2 "$bin" run workers.yaml
case_ "3. check --threads 100000" 2 "$bin" check --threads 100000
case_ "5. run > /dev/full" 2 sh -c "'$bin' run '$OLDPWD/specs/scenarios/docs-default-300s.yaml' >/dev/full"
py "
import json
e={'type':'ADDED','object':{'apiVersion':'v1','kind':'Event','count':2000000000,
 'firstTimestamp':'2025-11-25T08:00:00Z','lastTimestamp':'2025-11-25T08:05:00Z',
 'involvedObject':{'apiVersion':'v1','kind':'Pod','name':'p','namespace':'default'},
 'message':'Marking for deletion Pod default/p','reason':'TaintManagerEviction',
 'metadata':{'name':'p.1','namespace':'default','resourceVersion':'5'},'type':'Normal'}}
print(json.dumps(e))" >count.json
case_ "6. Event count 2,000,000,000: import" 0 "$bin" import count.json
case_ "7. conform /dev/zero" 2 "$bin" conform /dev/zero
case_ "7. validate /dev/zero" 2 "$bin" validate /dev/zero
for n in 4000 37000; do
    py "
item='  - apiVersion: v1\n    kind: Pod\n    metadata: {name: p}\n    spec:\n      containers: [{name: c, image: i}]\n'
print('apiVersion: v1\nkind: List\nitems:\n' + item*$n)" >list$n.yaml
    case_ "8. kind: List of $n pods: validate" 0 "$bin" validate list$n.yaml
done
for n in 10000 100000; do
    py "
print('apiVersion: v1\nkind: Node\nmetadata: {name: n}\nspec:\n  taints:')
for i in range($n): print(f'  - {{key: k{i}, effect: NoExecute}}')" >taints$n.yaml
    case_ "9. node with $n taints: validate" "$([ $n -gt 10000 ] && echo 2 || echo 0)" "$bin" validate taints$n.yaml
done
# The output (timeline) of N taint operations on one node is quadratic in N (each line shows
# the node's taints); the run's memory follows the node (LIMIT-COST). 20,000 restarts are above
# the default limit of 10,000 operations (LIMIT-1).
ops=(env TAINTCHECK_MAX_OPERATIONS=20000)
for n in 2500 5000 10000; do
    py "
print('name: ops\nnodes: [{name: n1}]\npods:\n  - {name: p, node: n1, tolerations: [{operator: Exists, effect: NoExecute}]}\nops:')
for i in range($n): print(f'  - {{at: {i*10}ms, taint: n1 k{i}=v:NoExecute}}')" >taint-ops$n.yaml
    case_ "11. $n taint operations on one node: run" 0 "${ops[@]}" "$bin" run taint-ops$n.yaml
done
for n in 5000 20000; do
    py "
print('name: r\nnodes: [{name: n1, taints: [\"k=v:NoExecute\"]}]\npods:\n  - {name: p, node: n1, tolerations: [{key: k, operator: Exists, effect: NoExecute, tolerationSeconds: 100000}]}\nops:')
for i in range($n): print(f'  - {{at: {i*10}ms, restartController: {{}}}}')" >restarts$n.yaml
    case_ "11. $n controller restarts: expect" 0 "${ops[@]}" "$bin" expect restarts$n.yaml
done
# conform_case NAME TRACE: exit, time, peak memory and the oracle's counts (one thread).
conform_case() {
    local name=$1 trace=$2 rc secs kb
    shift 2
    /usr/bin/time -o time.txt -f '%x %e %M' prlimit --as=8589934592 timeout 120 \
        "$bin" conform "$trace" --threads 1 --json "$@" >out.txt 2>err.txt
    read -r rc secs kb < <(tail -1 time.txt)
    printf '%-46s exit %3s (expected 0)  %7s s  %8s MiB  %s\n' "$name" "$rc" "$secs" \
        "$((kb / 1024))" "$(python3 -c "import json,sys
try: s=json.load(open('out.txt'))['summary']; print(f\"largest frontier {s['max_frontier']}, pods tracked at the end {s['live_components']}\")
except Exception: print(open('err.txt').read()[:100])")"
}
# A tainted node and a pod tolerating it for 300 s, then N identical node updates DT ms apart.
repeats() {
    py "
import json
node={'name':'n1','taints':[{'key':'k','value':'v','effect':'NoExecute','time_added':None}]}
pod={'key':{'namespace':'default','name':'p'},'uid':'u1','node_name':'n1',
     'tolerations':[{'key':'k','operator':'Exists','value':'','effect':'NoExecute','seconds':300}]}
print(json.dumps({'t':0,'kind':'header','version':1,'source':'hostile'}))
print(json.dumps({'t':0,'kind':'node_added','rv':1,'node':node}))
print(json.dumps({'t':0,'kind':'pod_added','rv':2,'pod':pod}))
for i in range($1): print(json.dumps({'t':10+i*$2,'kind':'node_modified','rv':3+i,'node':node}))"
}
repeats 160 10 >repeat160.ndjson
repeats 5000 10 >repeat5000.ndjson
repeats 1000000 0 >repeat1m.ndjson
conform_case "10. 160 identical node updates 10 ms apart" repeat160.ndjson
conform_case "10. 5,000 identical node updates 10 ms apart" repeat5000.ndjson
conform_case "10. 1,000,000 identical node updates at 10 ms" repeat1m.ndjson
# The same pod, then N status writes of it (a new rv, DisruptionTarget) DT ms apart.
status_writes() {
    py "
import json
node={'name':'n1','taints':[{'key':'k','value':'v','effect':'NoExecute','time_added':None}]}
pod={'key':{'namespace':'default','name':'p'},'uid':'u1','node_name':'n1',
     'tolerations':[{'key':'k','operator':'Exists','value':'','effect':'NoExecute','seconds':300}]}
print(json.dumps({'t':0,'kind':'header','version':1,'source':'hostile'}))
print(json.dumps({'t':0,'kind':'node_added','rv':1,'node':node}))
print(json.dumps({'t':0,'kind':'pod_added','rv':2,'pod':pod}))
for i in range($1): print(json.dumps({'t':10+i*$2,'kind':'pod_modified','rv':3+i,'pod':pod,
    'terminating':False,'disruption_target':i%2==1}))"
}
status_writes 5000 10 >status5000.ndjson
for profile in v1.18 latest fixed; do
    conform_case "10. 5,000 status writes 10 ms apart, $profile" status5000.ndjson \
        --profile $profile
done
# Pods one every 10 ms of trace time, as fast as they come, for 20 s: each deleted 5 ms after
# its addition (memory follows the live pods), or never (memory grows with them).
stream() {
    py "
import json,sys
print(json.dumps({'t':0,'kind':'header','version':1,'source':'hostile'}))
print(json.dumps({'t':0,'kind':'node_added','rv':1,'node':{'name':'n1','taints':[]}}))
i=0
try:
    while True:
        p={'key':{'namespace':'default','name':f'p{i}'},'uid':f'u{i}','node_name':'n1','tolerations':[]}
        print(json.dumps({'t':10*i,'kind':'pod_added','rv':2+2*i,'pod':p}))
        if $1: print(json.dumps({'t':10*i+5,'kind':'pod_deleted','rv':3+2*i,'namespace':'default','name':f'p{i}','uid':f'u{i}'}))
        i+=1
except BrokenPipeError: pass"
}
for deleted in 1 0; do
    stream $deleted 2>/dev/null | /usr/bin/time -o time.txt -f '%e %M' prlimit --as=8589934592 \
        timeout 20 "$bin" conform - --threads 1 --progress 5 >/dev/null 2>err.txt
    read -r secs kb < <(tail -1 time.txt)
    printf '%-46s %7s s  %8s MiB  %s\n' \
        "10. conform - on a 20 s stream of $([ $deleted = 1 ] && echo short-lived || echo new) pods" \
        "$secs" "$((kb / 1024))" "$(grep 'no violation' err.txt | tail -1)"
done
case_ "12. check --budget 17" 2 "$bin" check --budget 17
cp "$OLDPWD/specs/scenarios/docs-default-300s.yaml" s.yaml
case_ "13. run s.yaml --trace s.yaml" 2 "$bin" run s.yaml --trace s.yaml
cmp -s s.yaml "$OLDPWD/specs/scenarios/docs-default-300s.yaml" && echo "13. s.yaml unchanged"
