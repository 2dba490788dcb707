#!/usr/bin/env bash
# Instructions per request, by function, for one WS Test operation: runs `osprey serve`
# under valgrind's callgrind (which counts instructions, so the figure does not depend on
# what else the machine is doing), warms it up, zeroes the counters, sends requests over
# one connection for a few seconds with `osprey bench wstest`, and divides.
# Usage: bench/instructions.sh [OP] [SECONDS]   (default echoStruct 4; OP may also be the
# counter's add or createCounter; the container runs with its default `[data] sync = "disk"`)
# Prints the total per request and the functions with the largest inclusive share.
# KEEP=FILE keeps callgrind's profile there, for `callgrind_annotate --inclusive=yes FILE`.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OP=${1:-echoStruct}
SECS=${2:-4}
BIN=$ROOT/target/release/osprey
[ -x "$BIN" ] || cargo build --release -p osprey --manifest-path "$ROOT/Cargo.toml"
command -v valgrind >/dev/null || { echo "needs valgrind (apt-get install valgrind)"; exit 1; }
OUT=$(mktemp -d)
PORT=$((20000 + RANDOM % 20000))
# The counter's operations (add, createCounter) live at /counter; echo's at /wstest.
case $OP in add|createCounter) SVC=/counter ;; *) SVC=/wstest ;; esac
valgrind --tool=callgrind --callgrind-out-file="$OUT/cg.out" "$BIN" serve --listen "127.0.0.1:$PORT" --data "$OUT/data" >"$OUT/serve.log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null || true; rm -rf "$OUT"' EXIT
for _ in $(seq 1 200); do grep -q serving "$OUT/serve.log" && break; sleep 0.05; done
"$BIN" bench wstest --url "http://127.0.0.1:$PORT$SVC" --op "$OP" --connections 1 --duration 1s >/dev/null
callgrind_control -z "$PID" >/dev/null 2>&1
n=$("$BIN" bench wstest --url "http://127.0.0.1:$PORT$SVC" --op "$OP" --connections 1 --duration "${SECS}s" | awk '/^requests /{print $2}')
callgrind_control -d "$PID" >/dev/null 2>&1
sleep 1
if [ -n "${KEEP:-}" ]; then cp "$OUT/cg.out.1" "$KEEP"; fi
callgrind_annotate --inclusive=yes "$OUT/cg.out.1" 2>/dev/null | python3 -c '
import re, sys
n = int(sys.argv[1]); op = sys.argv[2]
want = [("whole request (hyper dispatch)", "Dispatcher<D,Bs,I,T>::poll_write"),
        ("payload decode (generated decoder)", "MessageContext::decode_payload"),
        ("envelope decode (up to the payload)", "Envelope::decode"),
        ("response payload encode", "as osprey_binding::XmlType>::encode"),
        ("envelope write", "write_envelope"),
        ("HTTP request parse (hyper)", "Http1Transaction>::parse"),
        ("allocation (mimalloc)", "mi_malloc_aligned")]
total, best = None, {}
for line in sys.stdin:
    m = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)", line)
    if not m:
        continue
    v, name = int(m.group(1).replace(",", "")), m.group(2)
    if name.startswith("PROGRAM TOTALS"):
        total = v
    for label, key in want:
        if key in name and v > best.get(label, 0):
            best[label] = v
print(f"{op}: {n} requests, {total // n:,} instructions per request")
for label, _ in want:
    # Recursive functions (echoList) count inclusive cost once per level: skip those.
    if label in best and best[label] <= total:
        print(f"  {best[label] // n:>9,}  {label}")
' "$n" "$OP"
