#!/usr/bin/env bash
# Interleaved A/B of two `osprey` builds on the lifecycle experiment (`osprey bench
# lifecycle`, default 50 containers x 5 clients x 5 counters): for each round, build A's
# run then build B's, each with its own binary for containers and clients. Prints, per
# run, the mean create and subscribe latencies and the set-up totals of cases 1, 2 and
# the stabilised case (ms) and the ratio case 1 / stabilised; then each build's ratios.
# Usage: bench/lifecycle-ab.sh BIN_A BIN_B [ROUNDS]   (default 4 rounds)
# Containers listen on 127.0.0.1 only.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/bench/lib.sh"
ab_init "bench/lifecycle-ab.sh BIN_A BIN_B [ROUNDS]" "$1" "$2" "${3:-4}"
trap 'rm -rf "$WORK"' EXIT
A=$(realpath "$A") B=$(realpath "$B")
for r in $(seq 1 "$ROUNDS"); do
  for v in A B; do
    bin=$A; [ "$v" = B ] && bin=$B
    (cd "$WORK" && "$bin" bench lifecycle --out "$WORK/$v-$r" >/dev/null 2>&1)
    python3 - "$WORK/$v-$r.json" "$v" <<'PY' | tee -a "$WORK/runs"
import json, sys
d = json.load(open(sys.argv[1]))
rows = dict(d["table1"])
mean = lambda step: [c["mean"] if c else 0.0 for c in rows[step]]
total = [c["mean"] for c in d["table1_total"]]
print(sys.argv[2], "create %.3f %.3f %.3f" % tuple(mean("create")),
      "subscribe %.3f %.3f %.3f" % tuple(mean("subscribe")),
      "total %.3f %.3f %.3f" % tuple(total), "ratio %.2f" % (total[0] / total[2]))
PY
  done
done
for v in A B; do
  echo "$v ratios: $(awk -v v="$v" '$1 == v {printf "%s ", $NF}' "$WORK/runs")"
done
