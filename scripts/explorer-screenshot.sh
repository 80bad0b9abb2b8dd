#!/usr/bin/env bash
# Screenshot of a counterexample in stateright's Explorer, for the README.
#
# Runs `taintcheck check` to get the shortest counterexample's action-index path, serves the
# model with `taintcheck explore` on a free loopback port, and has headless Chromium (Debian
# package `chromium`) render the Explorer page of that path.
#
# Usage: scripts/explorer-screenshot.sh [OUT.png] [CONFIG] [PROFILE] [PROPERTY-PREFIX]
# Defaults: docs/explorer-counterexample.png timer-vs-cancel latest CANCEL-1
set -euo pipefail

out=${1:-docs/explorer-counterexample.png}
config=${2:-timer-vs-cancel}
profile=${3:-latest}
property=${4:-CANCEL-1}
port=${PORT:-3917}
size=${WINDOW_SIZE:-2000,1250}

root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/target/release/taintcheck"
[ -x "$bin" ] || cargo build --release --manifest-path "$root/Cargo.toml" >&2
chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium" ]; then
    echo "explorer-screenshot: chromium not found (Debian: apt-get install -y chromium)" >&2
    exit 2
fi

path=$("$bin" check --profile "$profile" --config "$config" --json |
    python3 -c '
import json, sys
prefix = sys.argv[1]
for p in json.load(sys.stdin)["properties"]:
    if p["name"].startswith(prefix) and p["counterexample"]:
        print(p["counterexample"]["action_path"]); break
else:
    sys.exit("explorer-screenshot: no counterexample for " + prefix)
' "$property")

"$bin" explore --profile "$profile" --config "$config" --addr "127.0.0.1:$port" >/dev/null 2>&1 &
server=$!
profile_dir=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; rm -rf "$profile_dir"' EXIT

for _ in $(seq 1 100); do
    python3 - "$port" <<'EOF' 2>/dev/null && break
import socket, sys
socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=0.2).close()
EOF
    sleep 0.1
done

mkdir -p "$(dirname "$out")"
"$chromium" --headless --no-sandbox --disable-gpu --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile_dir" --hide-scrollbars --virtual-time-budget=5000 \
    --window-size="$size" --screenshot="$out" \
    "http://127.0.0.1:$port/#/steps/$path" >&2
echo "$out: $profile / $config / $property, path $path"
