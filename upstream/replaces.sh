#!/bin/sh
# Prints the `replace` block a module depending on k8s.io/kubernetes@$1 needs: every staging
# module that release's own go.mod replaces with ./staging/... is pointed at v0.Y.Z instead
# (kubernetes issue #79384). Reads the release's go.mod from the module cache, downloading it.
set -eu
release=${1:?usage: replaces.sh v1.Y.Z}
staging=v0.${release#v1.}
gomod=$(cd / && go mod download -json "k8s.io/kubernetes@$release" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
[ -n "$gomod" ] || { echo "replaces.sh: cannot download k8s.io/kubernetes@$release" >&2; exit 2; }
echo "replace ("
sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => \./staging/.*#\t\1 => \1 '"$staging"'#p' "$gomod"
echo ")"
