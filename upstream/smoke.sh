#!/bin/sh
# Smoke test of upstream/bin: one control plane, then for each release (default: the newest and
# v1.18.6) a namespace with its `default` ServiceAccount (no kube-controller-manager runs to
# create it, and the ServiceAccount admission plugin requires it), a Node, a Pod bound to it and
# tolerating nothing; the release's controller starts, the node gets a NoExecute taint, and the
# pod must be evicted (deletionTimestamp set: no kubelet finishes the deletion) within 30 s, with
# the TaintManagerEviction Event written, the DisruptionTarget condition patched (1.26+), and the
# controller's requests in audit.log. Exit 0: all passed; 1: a check failed; 2: missing tools.
# Usage: smoke.sh [--keep DIR] [RELEASE ...] (binaries from build.sh; RELEASE as vX.Y.Z).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
keep=""
if [ "${1:-}" = --keep ]; then keep=${2:?--keep DIR}; shift 2; fi
for tool in curl jq; do
	command -v $tool >/dev/null 2>&1 || { echo "smoke.sh: needs $tool" >&2; exit 2; }
done
[ $# -gt 0 ] || set -- "$(grep -v '^#' "$here/controller/releases.txt" | tail -n 1)" v1.18.6
for r in "$@"; do
	[ -x "$here/bin/taint-eviction-$r" ] || { echo "smoke.sh: no $here/bin/taint-eviction-$r: run upstream/build.sh $r" >&2; exit 2; }
done
[ -x "$here/bin/controlplane" ] || { echo "smoke.sh: no $here/bin/controlplane: run upstream/build.sh" >&2; exit 2; }

if [ -n "$keep" ]; then mkdir -p "$keep"; dir=$(cd "$keep" && pwd); else dir=$(mktemp -d); fi
cp_pid="" ctl_pid=""
cleanup() {
	[ -z "$ctl_pid" ] || kill "$ctl_pid" 2>/dev/null || true
	[ -z "$cp_pid" ] || { kill "$cp_pid" 2>/dev/null || true; wait "$cp_pid" 2>/dev/null || true; }
	[ -n "$keep" ] || rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail() {
	echo "smoke.sh: FAIL: $*" >&2
	for log in "$dir"/controller-*.log "$dir/controlplane.log"; do
		[ -f "$log" ] && { echo "--- tail $log" >&2; tail -n 20 "$log" >&2; }
	done
	exit 1
}

elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
start=$(date +%s.%N)
mkfifo "$dir/stdout"
"$here/bin/controlplane" --dir "$dir/cp" > "$dir/stdout" &
cp_pid=$!
read -r word server < "$dir/stdout" || fail "control plane exited before ready (see $dir/cp/controlplane.log)"
[ "$word" = ready ] || fail "control plane printed '$word $server'"
echo "control plane ready at $server in $(elapsed "$start") s"
token=$(cat "$dir/cp/token")
api() { # METHOD PATH [BODY [CONTENT-TYPE]]
	curl -sS --cacert "$dir/cp/ca.crt" -H "Authorization: Bearer $token" -X "$1" \
		-H "Content-Type: ${4:-application/json}" ${3:+--data "$3"} "$server$2"
}

for r in "$@"; do
	s=$(echo "$r" | tr . -)   # v1-37-2
	ns=smoke-$s node=node-$s pod=pod-$s
	api POST /api/v1/namespaces "{\"metadata\":{\"name\":\"$ns\"}}" | jq -e '.kind=="Namespace"' >/dev/null || fail "create namespace $ns"
	api POST /api/v1/namespaces/$ns/serviceaccounts '{"metadata":{"name":"default"}}' | jq -e '.kind=="ServiceAccount"' >/dev/null || fail "create serviceaccount"
	api POST /api/v1/nodes "{\"metadata\":{\"name\":\"$node\"}}" | jq -e '.kind=="Node"' >/dev/null || fail "create node $node"
	api POST /api/v1/namespaces/$ns/pods "{\"metadata\":{\"name\":\"$pod\"},\"spec\":{\"nodeName\":\"$node\",\"containers\":[{\"name\":\"c\",\"image\":\"busybox\"}]}}" \
		| jq -e '.kind=="Pod"' >/dev/null || fail "create pod $pod"

	log=$dir/controller-$r.log
	"$here/bin/taint-eviction-$r" --kubeconfig "$dir/cp/kubeconfig" -v=2 > "$dir/controller-$r.out" 2> "$log" &
	ctl_pid=$!
	i=0
	until grep -qx "ready taint-eviction-$r" "$dir/controller-$r.out"; do
		i=$((i + 1)); [ $i -le 300 ] || fail "$r: controller not running after 30 s"
		kill -0 $ctl_pid 2>/dev/null || fail "$r: controller exited"
		sleep 0.1
	done
	tainted=$(date +%s.%N)
	api PATCH /api/v1/nodes/$node '{"spec":{"taints":[{"key":"taintcheck.io/smoke","effect":"NoExecute"}]}}' application/merge-patch+json \
		| jq -e '.spec.taints | length > 0' >/dev/null || fail "$r: taint node"
	i=0
	until api GET /api/v1/namespaces/$ns/pods/$pod | jq -e '.metadata.deletionTimestamp != null or .code == 404' >/dev/null; do
		i=$((i + 1)); [ $i -le 300 ] || fail "$r: pod $ns/$pod not evicted 30 s after the taint"
		sleep 0.1
	done
	echo "$r: pod evicted $(elapsed "$tainted") s after the taint"
	minor=$(echo "$r" | cut -d. -f2)
	if [ "$minor" -ge 26 ]; then
		api GET /api/v1/namespaces/$ns/pods/$pod | jq -e '[.status.conditions[]? | select(.type=="DisruptionTarget" and .reason=="DeletionByTaintManager")] | length == 1' >/dev/null \
			|| fail "$r: no DisruptionTarget condition on $ns/$pod"
	fi
	i=0
	until api GET /api/v1/namespaces/$ns/events | jq -e "[.items[] | select(.reason==\"TaintManagerEviction\" and .involvedObject.name==\"$pod\")] | length > 0" >/dev/null; do
		i=$((i + 1)); [ $i -le 100 ] || fail "$r: no TaintManagerEviction event in $ns"
		sleep 0.1
	done
	kill -TERM $ctl_pid
	wait $ctl_pid || fail "$r: controller exited with $? on SIGTERM"
	ctl_pid=""
	# No kubelet finishes the deletion: finish it, so the next release's controller starts clean.
	api DELETE "/api/v1/namespaces/$ns/pods/$pod?gracePeriodSeconds=0" >/dev/null
	api DELETE /api/v1/nodes/$node >/dev/null
done

kill -TERM $cp_pid
wait $cp_pid || fail "control plane exited with $? on SIGTERM"
cp_pid=""
audit=$dir/cp/audit.log
for r in "$@"; do
	s=$(echo "$r" | tr . -)
	# The controller's requests on its pod, as "verb resource/subresource" lines.
	requests=$(jq -r --arg ns "smoke-$s" --arg pod "pod-$s" --arg agent "taint-eviction-$r/" \
		'select(.objectRef.namespace==$ns and (.userAgent | startswith($agent)) and (.objectRef.name==$pod or .objectRef.resource=="events"))
		| "\(.verb) \(.objectRef.resource)\(if .objectRef.subresource then "/" + .objectRef.subresource else "" end)"' "$audit")
	echo "$requests" | grep -qx "delete pods" || fail "$r: audit.log has no DELETE of pod-$s by the controller"
	echo "$requests" | grep -qx "create events" || fail "$r: audit.log has no Event created by the controller"
	if [ "$(echo "$r" | cut -d. -f2)" -ge 26 ]; then
		echo "$requests" | grep -qx "patch pods/status" || fail "$r: audit.log has no PATCH of pod-$s/status by the controller"
	fi
	echo "$r: audit.log has the controller's" $(echo "$requests" | sort -u | tr '\n' ',' | sed 's/,$//; s/,/, /g')
done
echo "smoke: ok ($*); audit.log $(wc -l < "$audit") entries${keep:+, kept in $dir}"
