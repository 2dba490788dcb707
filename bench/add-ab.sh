#!/usr/bin/env bash
# Interleaved A/B of two `osprey` builds on the counter's add against echoVoid at 16
# connections (`[data] sync = "os"`): for each round, for each build, start a container on
# fresh state, run `osprey bench wstest` for echoVoid then add (SECS seconds each, after a
# 1 s warm-up), stop it. Prints each run's add/echoVoid throughput, then the medians.
# Usage: bench/add-ab.sh BIN_A BIN_B [ROUNDS] [SECS]   (default 3 rounds of 5 s)
# The load generator is the release build of this tree. Load goes to 127.0.0.1 only.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/bench/lib.sh"
[ $# -ge 2 ] || { echo "usage: bench/add-ab.sh BIN_A BIN_B [ROUNDS] [SECS]" >&2; exit 2; }
A=$1 B=$2
bench_init "${3:-3}" "${4:-5}"
trap 'osprey_stop; rm -rf "$WORK"' EXIT
printf '[data]\nsync = "os"\n' >"$WORK/os.toml"
for r in $(seq 1 "$ROUNDS"); do
  for v in A B; do
    bin=$A; [ "$v" = B ] && bin=$B
    osprey_start "$bin" "$WORK/data-$v-$r" "$WORK/os.toml"
    for op in echoVoid add; do
      path=/wstest; [ "$op" = add ] && path=/counter
      "$BIN" bench wstest --url "$OSPREY_BASE$path" --op "$op" --connections 16 \
        --duration "${SECS}s" --warmup 1s --json "$WORK/$op.json" >/dev/null
    done
    osprey_stop
    python3 - "$WORK" "$v" "$r" <<'PY' | tee -a "$WORK/results"
import json, sys
w, v, r = sys.argv[1:]
e = json.load(open(f"{w}/echoVoid.json"))
a = json.load(open(f"{w}/add.json"))
errors = e["errors"] + a["errors"]
print(f"{v} {r} {e['requests_per_second']:.0f} {a['requests_per_second']:.0f} "
      f"{a['requests_per_second'] / e['requests_per_second']:.3f} {errors}")
PY
  done
done
python3 - "$WORK/results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
for v in ("A", "B"):
    sel = [r for r in rows if r[0] == v]
    print(f"{v}: add/echoVoid median {statistics.median(float(r[4]) for r in sel):.3f} "
          f"(runs: {', '.join(r[4] for r in sel)}; errors {sum(int(r[5]) for r in sel)})")
PY
