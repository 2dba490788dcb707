#!/usr/bin/env bash
# The shared-state (PostgreSQL) figures of docs/benchmarks.md: the counter's add on one
# container with SQLite (sync = "os" and "disk") against the same add with the resources
# in PostgreSQL (--postgres), and with the load split over two containers sharing the
# database; echoVoid of the same build as the yardstick. Interleaved rounds.
# Usage: bench/postgres.sh [ROUNDS] [SECONDS]   (defaults 3 rounds of 5 s)
# Starts its own PostgreSQL (initdb in a temporary directory, as nobody when run as root,
# fsync on, synchronous_commit on) and containers on free loopback ports; stops them by PID.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/bench/lib.sh"
bench_init "$@"
PG_PID=
PIDS=()
cleanup() {
  osprey_stop
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  [ -n "$PG_PID" ] && { kill -INT "$PG_PID" 2>/dev/null || true; wait "$PG_PID" 2>/dev/null || true; }
  rm -rf "$WORK"
}
trap cleanup EXIT

PGBIN=$(dirname "$(ls /usr/lib/postgresql/*/bin/initdb | sort | tail -1)")
AS=
if [ "$(id -u)" -eq 0 ]; then chown nobody: "$WORK"; AS="setpriv --reuid=nobody --regid=nogroup --clear-groups"; fi
$AS "$PGBIN/initdb" -D "$WORK/pg" -U osprey --auth=trust -E UTF8 --locale=C >/dev/null
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
$AS "$PGBIN/postgres" -D "$WORK/pg" -p "$PORT" -h 127.0.0.1 -k "$WORK" >"$WORK/pg.log" 2>&1 &
PG_PID=$!
for _ in $(seq 1 100); do (echo >/dev/tcp/127.0.0.1/"$PORT") 2>/dev/null && break; sleep 0.1; done
DB="host=127.0.0.1 port=$PORT user=osprey dbname=postgres"

run() { # label url op connections
  "$BIN" bench wstest --url "$2" --op "$3" --connections "$4" --duration "${SECS}s" --warmup 1s \
    --json "$WORK/r.json" >/dev/null
  echo "$1 $4 $(json_field "$WORK/r.json" requests_per_second) $(json_field "$WORK/r.json" p50_us) $(json_field "$WORK/r.json" errors)" >>"$WORK/results"
}

echo "commit $(git -C "$ROOT" rev-parse --short HEAD), $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $("$PGBIN/postgres" --version)"
start_one() { # name config-text [args]
  local name=$1 conf=$2; shift 2
  mkdir -p "$WORK/$name"; printf '%b' "$conf" >"$WORK/$name.toml"
  "$BIN" serve --config "$WORK/$name.toml" --listen 127.0.0.1:0 --data "$WORK/$name" "$@" >"$WORK/$name.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 1 100); do
    url=$(grep -o 'http://127.0.0.1:[0-9]*' "$WORK/$name.log" | head -1 || true)
    [ -n "$url" ] && { eval "URL_$name=$url"; return 0; }
    sleep 0.05
  done
  cat "$WORK/$name.log"; exit 1
}
start_one os '[data]\nsync = "os"\n'
start_one disk '[data]\nsync = "disk"\n'
start_one pga '' --postgres "$DB"
start_one pgb '' --postgres "$DB"
for c in 1 16; do
  for r in $(seq 1 "$ROUNDS"); do
    run echoVoid "$URL_os/wstest" echoVoid "$c"
    run sqlite-os "$URL_os/counter" add "$c"
    run sqlite-disk "$URL_disk/counter" add "$c"
    run postgres "$URL_pga/counter" add "$c"
    if [ "$c" -eq 16 ]; then
      # The same total load split over two containers on the one database.
      "$BIN" bench wstest --url "$URL_pga/counter" --op add --connections 8 --duration "${SECS}s" \
        --warmup 1s --json "$WORK/a.json" >/dev/null &
      A=$!
      "$BIN" bench wstest --url "$URL_pgb/counter" --op add --connections 8 --duration "${SECS}s" \
        --warmup 1s --json "$WORK/b.json" >/dev/null
      wait "$A"
      rps=$(python3 -c 'import json,sys; print(sum(json.load(open(f))["requests_per_second"] for f in sys.argv[1:]))' "$WORK/a.json" "$WORK/b.json")
      echo "postgres-2-containers 16 $rps 0 0" >>"$WORK/results"
    fi
  done
done
python3 - "$WORK/results" <<'PY'
import sys, statistics as st
rows = [l.split() for l in open(sys.argv[1])]
def med(label, c, col):
    v = [float(r[col]) for r in rows if r[0] == label and r[1] == str(c)]
    return st.median(v) if v else float("nan")
print("| set-up | conns | req/s (median) | p50 us (median) | req/s vs echoVoid |")
print("|---|---:|---:|---:|---:|")
for c in (1, 16):
    base = med("echoVoid", c, 2)
    for label in ("echoVoid", "sqlite-os", "sqlite-disk", "postgres", "postgres-2-containers"):
        rps = med(label, c, 2)
        if rps != rps:
            continue
        p50 = med(label, c, 3)
        p50s = f"{p50:.0f}" if p50 else "-"
        print(f"| {label} | {c} | {rps:.0f} | {p50s} | {rps / base:.2f}x |")
errors = sum(int(r[4]) for r in rows)
print(f"\nerrors: {errors}")
PY
