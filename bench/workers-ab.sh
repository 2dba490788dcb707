#!/usr/bin/env bash
# Interleaved A/B of `[server] workers` values: for each round, for each value, start
# `osprey serve` with that many workers, run wrk (-t2 -c16, SECS seconds) per operation, stop
# it. Interleaving spreads the machine's drift over all variants; compare medians.
# Usage: bench/workers-ab.sh [ROUNDS] [SECS] [WORKERS...]   (default 3 4 1 2)
# Needs wrk and the request bodies that bench/peers/run.sh writes (BUILD, default
# /tmp/osprey-peers); load goes to 127.0.0.1 only, every run bounded by -d and timeout.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${1:-3}
SECS=${2:-4}
shift $(( $# > 2 ? 2 : $# ))
VARIANTS=${*:-1 2}
B=${BUILD:-/tmp/osprey-peers}
[ -f "$B/echoStruct.xml" ] || python3 "$ROOT/bench/peers/tools.py" bodies "$B"
BIN=$ROOT/target/release/osprey
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
for round in $(seq 1 "$ROUNDS"); do
  for w in $VARIANTS; do
    printf '[server]\nworkers = %s\n' "$w" >"$TMP/w.toml"
    "$BIN" serve --config "$TMP/w.toml" --listen 127.0.0.1:18401 >/dev/null 2>&1 &
    pid=$!
    sleep 0.3
    for op in echoVoid echoStruct echoList; do
      rps=$(BODY="$B/$op.xml" ACTION="urn:wstest/$op" timeout $((SECS + 20)) \
        wrk -t2 -c16 -d"${SECS}s" -s "$ROOT/bench/peers/post.lua" http://127.0.0.1:18401/wstest 2>&1 \
        | awk '/Requests\/sec/{print $2}')
      echo "round $round workers=$w $op ${rps:-FAILED}"
    done
    kill "$pid"; wait "$pid" 2>/dev/null || true
  done
done
