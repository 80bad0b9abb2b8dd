#!/usr/bin/env bash
# Typechecks the Quint specification and simulates every profile × configuration module of
# profiles.qnt, writing ITF traces for the Rust replay (tests/quint_replay.rs).
#
#   specs/quint/check.sh [TRACES_PER_MODULE] [MAX_STEPS] [ITF_DIR] [MODULE_PREFIX]
#
# MODULE_PREFIX (e.g. `fixed_` or `v1_18_`) simulates only the modules whose name starts with it,
# so the profiles can run separately and each one's traces count on their own.
# Installs Quint from package-lock.json when node_modules is missing (`npm ci`: needs the
# registry once; offline afterwards). Runs Quint's TypeScript backend only (the default backend
# downloads a binary at first use).
set -euo pipefail
cd "$(dirname "$0")"
traces="${1:-20}"
steps="${2:-50}"
out="${3:-$(mktemp -d)}"
prefix="${4:-}"
if [ ! -x node_modules/.bin/quint ]; then
  npm ci --no-audit --no-fund
fi
quint=node_modules/.bin/quint
"$quint" typecheck taintmanager.qnt
"$quint" typecheck profiles.qnt
mkdir -p "$out"
modules=$(sed -n 's/^module \([a-z0-9_]*\) {$/\1/p' profiles.qnt | grep "^${prefix}")
for m in $modules; do
  "$quint" run --backend typescript --main "$m" --max-samples "$traces" --n-traces "$traces" \
    --max-steps "$steps" --out-itf "$out/${m}_{seq}.itf.json" profiles.qnt > "$out/$m.log" 2>&1 \
    || { cat "$out/$m.log"; exit 1; }
  echo "$m: $(ls "$out" | grep -c "^${m}_[0-9]*\.itf\.json$") traces in $out"
done
