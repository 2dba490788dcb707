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
. "$ROOT/bench/lib.sh"
WORK=$(mktemp -d)
trap 'osprey_stop; rm -rf "$WORK"' EXIT
osprey_start "$BIN" "$WORK/data"
URL=$OSPREY_BASE/counter
rss() { awk '/^VmRSS/ {print $2}' "/proc/$OSPREY_PID/status"; }
before=$(rss)
"$BIN" call "$URL" createCounter --save-epr "$WORK/first.xml" >/dev/null
created=1
while [ "$created" -lt "$COUNT" ]; do
  "$BIN" bench wstest --url "$URL" --op createCounter --connections 16 --duration 10s \
    --json "$WORK/run.json" >/dev/null
  n=$(json_field "$WORK/run.json" requests)
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
