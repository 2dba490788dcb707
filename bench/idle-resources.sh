#!/usr/bin/env bash
# Memory of idle WS-Resources: fills one container with COUNT counters (default
# 1,000,000) through its SOAP interface (createCounter, 16 connections), then reports the
# container's resident set size and the bytes each resource costs, and checks the first
# and the last counters still answer.
# Usage: bench/idle-resources.sh [COUNT]     (builds target/release/osprey if missing)
# Starts `osprey serve` on a free loopback port (state in a temporary directory) and
# stops it by PID on exit.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
COUNT=${1:-1000000}
BIN=$ROOT/target/release/osprey
[ -x "$BIN" ] || cargo build --release -p osprey --manifest-path "$ROOT/Cargo.toml"
WORK=$(mktemp -d)
PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; wait "$PID" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

"$BIN" serve --listen 127.0.0.1:0 --data "$WORK/data" >"$WORK/serve.log" 2>&1 &
PID=$!
URL=
for _ in $(seq 1 100); do
  URL=$(grep -o 'http://127.0.0.1:[0-9]*/counter' "$WORK/serve.log" | head -1 || true)
  [ -n "$URL" ] && break
  sleep 0.05
done
[ -n "$URL" ] || { cat "$WORK/serve.log"; exit 1; }
rss() { awk '/^VmRSS/ {print $2}' "/proc/$PID/status"; }
before=$(rss)
"$BIN" call "$URL" createCounter --save-epr "$WORK/first.xml" >/dev/null
created=1
while [ "$created" -lt "$COUNT" ]; do
  "$BIN" bench wstest --url "$URL" --op createCounter --connections 16 --duration 10s \
    --json "$WORK/run.json" >/dev/null
  n=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["requests"])' "$WORK/run.json")
  created=$((created + n))
  echo "created $created counters, server RSS $(( $(rss) / 1024 )) MiB"
done
"$BIN" call "$URL" createCounter --save-epr "$WORK/last.xml" >/dev/null
created=$((created + 1))
sleep 1
after=$(rss)
for epr in first last; do
  "$BIN" call "$URL" add --epr "$WORK/$epr.xml" --param value=1 | grep -q '<value>1</value>' \
    || { echo "the $epr counter does not answer"; exit 1; }
done
echo "counters: $created (at least $COUNT)"
echo "RSS before: $((before / 1024)) MiB, after: $((after / 1024)) MiB"
echo "per resource: $(( (after - before) * 1024 / created )) bytes"
