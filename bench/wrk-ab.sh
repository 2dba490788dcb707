#!/usr/bin/env bash
# Interleaved A/B of two `osprey` builds on the WS Test operations under wrk, with gSOAP in
# the same rounds when bench/peers/run.sh has built it: for each round, each server in turn
# (A, B, gSOAP) is started, given a 1 s warm-up and then SECS seconds of `wrk -t2 -c16` per
# operation (the requests of bench/peers/post.lua), and stopped. Prints each run, then the
# medians and B's ratios to A and to gSOAP.
# Usage: bench/wrk-ab.sh BIN_A BIN_B [ROUNDS] [SECS] [OPS]
#   (default 3 rounds of 5 s, OPS "echoStruct echoList"; BUILD=/tmp/osprey-peers is where
#   bench/peers/run.sh built gSOAP and the request files)
# Load goes to 127.0.0.1 only; every wrk run is bounded by -d and timeout(1).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/bench/lib.sh"
ab_init "bench/wrk-ab.sh BIN_A BIN_B [ROUNDS] [SECS] [OPS]" "$@"
OPS=${5:-echoStruct echoList}
BUILD=${BUILD:-/tmp/osprey-peers}
command -v wrk >/dev/null || { echo "needs wrk (apt-get install wrk)" >&2; exit 1; }
GSOAP=$BUILD/gsoap/server
SERVERS="A B"
if [ -x "$GSOAP" ]; then SERVERS="A B gsoap"; else echo "no gSOAP at $GSOAP (bench/peers/run.sh gsoap builds it): A and B only" >&2; fi
GPID=
trap 'osprey_stop; [ -n "$GPID" ] && kill "$GPID" 2>/dev/null; rm -rf "$WORK"' EXIT
LOG=$WORK/runs.txt
# wrk_run URL OP SECS: requests/s, or "error" when any answer was not 2xx.
wrk_run() {
  local out=$WORK/wrk.txt
  wrk_soap "$out" 2 16 "$3" "$BUILD" "$2" "$1"
  if grep -q 'Non-2xx' "$out"; then echo error; else awk '/Requests\/sec/{print $2}' "$out"; fi
}
for r in $(seq 1 "$ROUNDS"); do
  for s in $SERVERS; do
    case $s in
      A | B)
        bin=$A; [ "$s" = B ] && bin=$B
        osprey_start "$bin" "$WORK/data-$s-$r"
        url=$OSPREY_BASE/wstest ;;
      gsoap)
        port=$((30000 + RANDOM % 20000))
        "$GSOAP" "$port" >"$WORK/gsoap.log" 2>&1 &
        GPID=$!
        for _ in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.05; done
        url=http://127.0.0.1:$port/wstest ;;
    esac
    for op in $OPS; do
      wrk_run "$url" "$op" 1 >/dev/null
      echo "$r $s $op $(wrk_run "$url" "$op" "$SECS")" | tee -a "$LOG"
    done
    if [ "$s" = gsoap ]; then kill "$GPID"; wait "$GPID" 2>/dev/null || true; GPID=; else osprey_stop; fi
  done
done
echo "columns: round server operation requests/s"
python3 - "$LOG" "$SERVERS" "$OPS" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
servers, ops = sys.argv[2].split(), sys.argv[3].split()
med = {}
for s in servers:
    for op in ops:
        v = [float(r[3]) for r in rows if r[1] == s and r[2] == op and r[3] != "error"]
        bad = sum(1 for r in rows if r[1] == s and r[2] == op and r[3] == "error")
        med[s, op] = statistics.median(v) if v else None
        print(f"{s} {op}: median {med[s, op] or 0:,.0f} req/s (runs: {', '.join(f'{x:,.0f}' for x in v)}; runs with errors: {bad})")
for op in ops:
    a, b, g = med.get(("A", op)), med.get(("B", op)), med.get(("gsoap", op))
    line = f"{op}: B/A {b / a:.3f}" if a and b else f"{op}: -"
    if g and b:
        line += f", B/gSOAP {b / g:.2f}x, A/gSOAP {a / g:.2f}x"
    print(line)
EOF
