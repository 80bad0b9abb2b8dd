#!/bin/sh
# Builds upstream's code for taintcheck's real-upstream path:
#   upstream/bin/controlplane                  kube-apiserver + embedded etcd (controlplane/)
#   upstream/bin/taint-eviction-vX.Y.Z         the release's taint-eviction controller (controller/vX.Y.Z/)
# Usage: build.sh [RELEASE ...]   RELEASE: vX.Y.Z or X.Y.Z from controller/releases.txt, a minor
# X.Y (its newest patch there), or `all`. Default: the newest release and v1.18.6.
# Uses Go's default module and build caches (GOMODCACHE, GOCACHE), so rebuilds are incremental.
set -eu
need="taintcheck's real-upstream path needs Go 1.26 or newer: install it from https://go.dev/dl/ (e.g. tar -C /usr/local -xzf go1.26.*.linux-amd64.tar.gz and add /usr/local/go/bin to PATH)"
command -v go >/dev/null 2>&1 || { echo "$need" >&2; exit 2; }
minor=$(go env GOVERSION | sed -n 's/^go1\.\([0-9]*\).*/\1/p')
[ -n "$minor" ] && [ "$minor" -ge 26 ] || { echo "$need (found $(go env GOVERSION))" >&2; exit 2; }

here=$(cd "$(dirname "$0")" && pwd)
known=$(grep -v '^#' "$here/controller/releases.txt")
newest=$(echo "$known" | tail -n 1)

# resolve RELEASE: prints the vX.Y.Z it names, or fails.
resolve() {
	r=v${1#v}
	if echo "$known" | grep -qx "$r"; then echo "$r"; return; fi
	case $r in
	v1.*.*) ;;
	v1.*) m=$(echo "$known" | grep "^$r\." | sort -t. -k3 -n | tail -n 1); [ -n "$m" ] && { echo "$m"; return; } ;;
	esac
	return 1
}

releases=""
[ $# -gt 0 ] || set -- "$newest" v1.18.6
for arg in "$@"; do
	if [ "$arg" = all ]; then releases="$releases $known"; continue; fi
	r=$(resolve "$arg") || {
		echo "build.sh: unsupported release $arg; supported:" $known >&2
		exit 2
	}
	releases="$releases $r"
done

mkdir -p "$here/bin"
# build DIR OUTPUT: stamps the release into the version packages as Kubernetes' own build does
# (hack/lib/version.sh), so /version, the emulation version and user agents name the release.
build() {
	v=$(sed -n 's#^require k8s.io/kubernetes \(v[0-9.]*\)$#\1#p; s#^[[:space:]]*k8s.io/kubernetes \(v[0-9.]*\)$#\1#p' "$1/go.mod" | head -n 1)
	minor=${v#v1.}; minor=${minor%%.*}
	flags="-s -w"
	for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		flags="$flags -X $pkg.gitVersion=$v -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
	done
	start=$(date +%s)
	(cd "$1" && go build -buildvcs=false -ldflags="$flags" -o "$2" .)
	echo "built $2 in $(($(date +%s) - start)) s" >&2
}
build "$here/controlplane" "$here/bin/controlplane"
for r in $releases; do
	[ -f "$here/controller/$r/go.sum" ] || "$here/controller/gen.sh" "$r"
	build "$here/controller/$r" "$here/bin/taint-eviction-$r"
done
