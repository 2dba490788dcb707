#!/usr/bin/env bash
# Interleaved A/B of two `osprey` builds on the counter's add against echoVoid at 16
# connections (`[data] sync = "os"`; CONNS=N and SYNC=disk change either): for each
# round, for each build, start a container on fresh state, run `osprey bench wstest` for
# echoVoid then add (SECS seconds each, after a 1 s warm-up), stop it. During the add run it also reads, over the middle of the measured
# time, the container's CPU time (user + system, /proc/PID/stat) per add and the share of
# the machine's CPU time that was idle or waiting for I/O (/proc/stat). Prints each run,
# then the medians.
# Usage: bench/add-ab.sh BIN_A BIN_B [ROUNDS] [SECS]   (default 3 rounds of 5 s; SECS >= 3)
# The load generator is the release build of this tree. Load goes to 127.0.0.1 only.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/bench/lib.sh"
ab_init "bench/add-ab.sh BIN_A BIN_B [ROUNDS] [SECS]" "$@"
[ "$SECS" -ge 3 ] || { echo "SECS must be at least 3" >&2; exit 2; }
trap 'osprey_stop; rm -rf "$WORK"' EXIT
CONNS=${CONNS:-16}
printf '[data]\nsync = "%s"\n' "${SYNC:-os}" >"$WORK/data.toml"
# cpu_sample PID: "machine_total machine_idle process_ticks" now.
cpu_sample() {
  awk '/^cpu /{t=0; for (i=2;i<=9;i++) t+=$i; printf "%d %d ", t, $5+$6}' /proc/stat
  awk '{print $14+$15}' "/proc/$1/stat"
}
for r in $(seq 1 "$ROUNDS"); do
  for v in A B; do
    bin=$A; [ "$v" = B ] && bin=$B
    osprey_start "$bin" "$WORK/data-$v-$r" "$WORK/data.toml"
    for op in echoVoid add; do
      path=/wstest; [ "$op" = add ] && path=/counter
      "$BIN" bench wstest --url "$OSPREY_BASE$path" --op "$op" --connections "$CONNS" \
        --duration "${SECS}s" --warmup 1s --json "$WORK/$op.json" >/dev/null &
      load=$!
      if [ "$op" = add ]; then
        # The counters are created before the warm-up: start sampling well inside the
        # measured time, stop well before its end.
        sleep 2
        before=$(cpu_sample "$OSPREY_PID")
        sleep $((SECS - 2))
        after=$(cpu_sample "$OSPREY_PID")
        echo "$before $after" >"$WORK/cpu"
      fi
      wait "$load"
    done
    osprey_stop
    python3 - "$WORK" "$v" "$r" "$SECS" <<'PY' | tee -a "$WORK/results"
import json, os, sys
w, v, r, secs = sys.argv[1:]
e = json.load(open(f"{w}/echoVoid.json"))
a = json.load(open(f"{w}/add.json"))
t0, i0, p0, t1, i1, p1 = map(int, open(f"{w}/cpu").read().split())
ticks = os.sysconf("SC_CLK_TCK")
adds = a["requests_per_second"] * (int(secs) - 2)
us_per_add = (p1 - p0) / ticks / adds * 1e6
idle = 100 * (i1 - i0) / max(t1 - t0, 1)
errors = e["errors"] + a["errors"]
print(f"{v} {r} {e['requests_per_second']:.0f} {a['requests_per_second']:.0f} "
      f"{a['requests_per_second'] / e['requests_per_second']:.3f} {errors} "
      f"{us_per_add:.1f} {idle:.1f}")
PY
  done
done
python3 - "$WORK/results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
print("columns: build round echoVoid/s add/s add/echoVoid errors server-us/add idle%")
for v in ("A", "B"):
    sel = [r for r in rows if r[0] == v]
    med = lambda i: statistics.median(float(r[i]) for r in sel)
    print(f"{v}: add/echoVoid median {med(4):.3f} (runs: {', '.join(r[4] for r in sel)}; "
          f"errors {sum(int(r[5]) for r in sel)}); server CPU per add {med(6):.1f} us; "
          f"machine idle during add {med(7):.1f} %")
PY
