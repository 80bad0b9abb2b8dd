#!/usr/bin/env bash
# Writes docs/tutorial/pods-30.yaml: 30 pods on worker-1 as `kubectl get pods -o yaml` prints
# them from a real kube-apiserver (upstream/bin/controlplane, which upstream/build.sh builds).
# Their owners are real objects: the DaemonSets node-exporter and kube-proxy, the Deployment web
# (through its ReplicaSet), the StatefulSet db and the Job report. No controller runs, so the
# pods are created bound, with the owner references and the tolerations the DaemonSet
# controller would give them; the API server's DefaultTolerationSeconds admission plugin adds
# the others' 300 s tolerations, as it does on every cluster.
#
# Usage: scripts/tutorial-node.sh (needs kubectl on PATH)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v kubectl >/dev/null || { echo "scripts/tutorial-node.sh: kubectl not found" >&2; exit 2; }
[ -x upstream/bin/controlplane ] || { echo "scripts/tutorial-node.sh: run upstream/build.sh first" >&2; exit 2; }
dir=$(mktemp -d)
upstream/bin/controlplane --dir "$dir" > "$dir/out.log" 2>&1 &
cp=$!
trap 'kill $cp 2>/dev/null; wait $cp 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 300); do grep -q "^ready" "$dir/out.log" 2>/dev/null && break; sleep 1; done
export KUBECONFIG=$dir/kubeconfig
until kubectl get --raw /readyz >/dev/null 2>&1; do sleep 1; done
# The namespaces and their default service accounts (the controller manager would make those).
for ns in shop monitoring; do kubectl create namespace $ns >/dev/null; done
for ns in shop monitoring kube-system; do kubectl create serviceaccount default -n $ns >/dev/null; done
kubectl apply -f docs/tutorial/nodes.yaml >/dev/null

uid() { kubectl get "$1" -n "$2" "$3" -o jsonpath='{.metadata.uid}'; }
owner() { # kind name uid
  printf '  ownerReferences:\n  - {apiVersion: %s, kind: %s, name: %s, uid: %s, controller: true, blockOwnerDeletion: true}\n' "$1" "$2" "$3" "$4"
}
container() { printf '  containers:\n  - {name: %s, image: %s}\n' "$1" "$2"; }
daemon_tolerations() { # what the DaemonSet controller adds (daemon/util AddOrUpdateDaemonPodTolerations)
  cat <<'T'
  tolerations:
  - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute}
  - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute}
  - {key: node.kubernetes.io/disk-pressure, operator: Exists, effect: NoSchedule}
  - {key: node.kubernetes.io/memory-pressure, operator: Exists, effect: NoSchedule}
  - {key: node.kubernetes.io/pid-pressure, operator: Exists, effect: NoSchedule}
  - {key: node.kubernetes.io/unschedulable, operator: Exists, effect: NoSchedule}
T
}
workload() { # kind namespace name app image [extra spec lines]
  local kind=$1 ns=$2 name=$3 app=$4 image=$5
  kubectl apply -f - >/dev/null <<Y
apiVersion: $( [ "$kind" = Job ] && echo batch/v1 || echo apps/v1 )
kind: $kind
metadata: {name: $name, namespace: $ns}
spec:
$( [ "$kind" = Job ] || echo "  selector: {matchLabels: {app: $app}}" )
$( [ "$kind" = StatefulSet ] && echo "  serviceName: $name" )
  template:
    metadata: {labels: {app: $app}}
    spec:
      $( [ "$kind" = Job ] && echo "restartPolicy: Never" )
      containers: [{name: $app, image: $image}]
Y
}
pod() { # namespace name app owner-lines container-lines toleration-lines
  kubectl create -f - >/dev/null <<Y
apiVersion: v1
kind: Pod
metadata:
  name: $2
  namespace: $1
  labels: {app: $3}
$4
spec:
  nodeName: worker-1
$5
$6
Y
}

workload DaemonSet monitoring node-exporter node-exporter prom/node-exporter:v1.8.2
workload DaemonSet kube-system kube-proxy kube-proxy registry.k8s.io/kube-proxy:v1.37.2
workload Deployment shop web web nginx:1.27
workload StatefulSet shop db db postgres:16
workload Job shop report report busybox:1.37
# The Deployment's ReplicaSet, as the Deployment controller would name and own it.
kubectl apply -f - >/dev/null <<Y
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: web-7c9d8b6f5
  namespace: shop
  labels: {app: web, pod-template-hash: 7c9d8b6f5}
$(owner apps/v1 Deployment web "$(uid deployment shop web)")
spec:
  selector: {matchLabels: {app: web, pod-template-hash: 7c9d8b6f5}}
  template:
    metadata: {labels: {app: web, pod-template-hash: 7c9d8b6f5}}
    spec: {containers: [{name: web, image: "nginx:1.27"}]}
Y

pod monitoring node-exporter-5xq7k node-exporter \
  "$(owner apps/v1 DaemonSet node-exporter "$(uid daemonset monitoring node-exporter)")" \
  "$(container node-exporter prom/node-exporter:v1.8.2)" "$(daemon_tolerations)"
pod kube-system kube-proxy-8h2mv kube-proxy \
  "$(owner apps/v1 DaemonSet kube-proxy "$(uid daemonset kube-system kube-proxy)")" \
  "$(container kube-proxy registry.k8s.io/kube-proxy:v1.37.2)" \
  "$(daemon_tolerations | sed '1a\  - {operator: Exists}')"
rs=$(uid replicaset shop web-7c9d8b6f5)
for suffix in 2k4px 9z8wq m3n7r a1b2c d4e5f g6h7j k8l9m n2p3q r4s5t v6w7x \
              y8z9a b3c4d e5f6g h7j8k l9m2n p3q4r s5t6v w7x8y z9a2b c4d5e; do
  pod shop "web-7c9d8b6f5-$suffix" web "$(owner apps/v1 ReplicaSet web-7c9d8b6f5 "$rs")" \
    "$(container web nginx:1.27)" ""
done
sts=$(uid statefulset shop db)
for i in 0 1 2; do
  pod shop "db-$i" db "$(owner apps/v1 StatefulSet db "$sts")" "$(container postgres postgres:16)" ""
done
job=$(uid job shop report)
for suffix in 4kq2x 7mw9z b2n5r f8t3v j6h1p; do
  pod shop "report-$suffix" report "$(owner batch/v1 Job report "$job")" \
    "$(container report busybox:1.37)" ""
done
kubectl get pods -A --field-selector spec.nodeName=worker-1 -o yaml > docs/tutorial/pods-30.yaml
echo "wrote docs/tutorial/pods-30.yaml: $(grep -c '^- apiVersion: v1' docs/tutorial/pods-30.yaml) pods"
