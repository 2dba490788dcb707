#!/usr/bin/env bash
# The WSRF speed figures of docs/benchmarks.md, in one sitting on one build:
#   - the counter's add against echoVoid, same container, interleaved rounds, at 1 and 16
#     connections, with [data] sync = "disk" and sync = "os";
#   - the lifecycle experiment (default 50 containers), timed.
# Usage: bench/wsrf.sh [ROUNDS] [SECONDS]   (defaults 3 rounds of 5 s per measurement)
# The lifecycle experiment's tables, CSV, JSON and charts go to $OUT (default
# target/wsrf); copy the charts into docs/ together with its tables.
# Containers listen on free loopback ports, keep state in a temporary directory and are
# stopped by PID.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/bench/lib.sh"
bench_init "$@"
trap 'osprey_stop; rm -rf "$WORK"' EXIT


echo "commit $(git -C "$ROOT" rev-parse --short HEAD), $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores"
for sync in disk os; do
  printf '[data]\nsync = "%s"\n' "$sync" >"$WORK/$sync.toml"
  osprey_start "$BIN" "$WORK/data-$sync" "$WORK/$sync.toml"
  BASE=$OSPREY_BASE
  for c in 1 16; do
    for r in $(seq 1 "$ROUNDS"); do
      for op in echoVoid add; do
        path=/wstest; [ "$op" = add ] && path=/counter
        "$BIN" bench wstest --url "$BASE$path" --op "$op" --connections "$c" --duration "${SECS}s" \
          --warmup 1s --json "$WORK/r.json" >/dev/null
        echo "$sync $c $r $op $(json_field "$WORK/r.json" requests_per_second) $(json_field "$WORK/r.json" p50_us) $(json_field "$WORK/r.json" errors)" >>"$WORK/results"
      done
    done
  done
  osprey_stop
done
python3 - "$WORK/results" <<'PY'
import sys, statistics as st
rows = [l.split() for l in open(sys.argv[1])]
print("| sync | connections | echoVoid req/s | add req/s | add/echoVoid throughput | echoVoid p50 (us) | add p50 (us) | add/echoVoid p50 |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for sync in ("disk", "os"):
    for c in ("1", "16"):
        sel = lambda op, i: [float(r[i]) for r in rows if r[0] == sync and r[1] == c and r[3] == op]
        ev, ad = st.median(sel("echoVoid", 4)), st.median(sel("add", 4))
        evp, adp = st.median(sel("echoVoid", 5)), st.median(sel("add", 5))
        errors = sum(int(r[6]) for r in rows)
        print(f"| {sync} | {c} | {ev:,.0f} | {ad:,.0f} | {ad/ev:.2f}x | {evp:.1f} | {adp:.1f} | {adp/evp:.2f}x |")
print(f"\n(medians of {len(rows)//8} interleaved rounds per cell; errors: {errors})")
PY
echo
start=$(date +%s.%N)
OUT=${OUT:-$ROOT/target/wsrf}
mkdir -p "$OUT"
(cd "$WORK" && "$BIN" bench lifecycle --out "$OUT/lifecycle" 2>/dev/null)
end=$(date +%s.%N)
echo
echo "lifecycle experiment: $(python3 -c "print(f'{$end - $start:.1f}')") s wall clock"
echo "lifecycle tables, CSV, JSON and charts: $OUT/lifecycle.*"
