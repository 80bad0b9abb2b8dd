#!/usr/bin/env bash
# The README's picture of a counterexample in stateright's Explorer.
#
# Starts `taintcheck explore --property` on a free loopback port, takes the URL that run prints
# (the shortest counterexample, the same path `taintcheck check` prints) and has headless
# Chromium (Debian package `chromium`) screenshot that page of that run.
#
# Usage: scripts/screenshot.sh [OUT.png] [CONFIG] [PROFILE] [PROPERTY]
# Defaults: docs/explorer-counterexample.png timer-vs-cancel latest CANCEL-1
set -euo pipefail

out=${1:-docs/explorer-counterexample.png}
config=${2:-timer-vs-cancel}
profile=${3:-latest}
property=${4:-CANCEL-1}
size=${WINDOW_SIZE:-1600,1500}

root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/target/release/taintcheck"
[ -x "$bin" ] || cargo build --release --manifest-path "$root/Cargo.toml" >&2
chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium" ]; then
    echo "screenshot: chromium not found (Debian: apt-get install -y chromium)" >&2
    exit 2
fi

work=$(mktemp -d)
"$bin" explore --profile "$profile" --config "$config" --property "$property" \
    --addr 127.0.0.1:0 >"$work/url" 2>"$work/log" &
server=$!
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT

url=
for _ in $(seq 1 600); do
    url=$(head -n 1 "$work/url")
    [ -n "$url" ] && break
    kill -0 "$server" 2>/dev/null || { cat "$work/log" >&2; exit 2; }
    sleep 0.1
done
[ -n "$url" ] || { echo "screenshot: explore printed no URL" >&2; exit 2; }
case "$url" in
*'#/steps/'*) ;;
*) cat "$work/log" >&2; echo "screenshot: no counterexample to $property" >&2; exit 1 ;;
esac
port=${url#http://127.0.0.1:}
port=${port%%/*}
for _ in $(seq 1 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.1
done

mkdir -p "$(dirname "$out")"
"$chromium" --headless --no-sandbox --disable-gpu --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$work/profile" --hide-scrollbars --virtual-time-budget=10000 \
    --window-size="$size" --screenshot="$out" "$url" >&2
echo "$out: $profile / $config / $property: $url"
