# Shared by the bench scripts (sourced, not run).

# bench_init [ROUNDS] [SECONDS]: the round-based scripts' common start. Sets ROUNDS
# (default 3), SECS (default 5), BIN (the release `osprey`, built now) and WORK (a new
# temporary directory); expects ROOT.
bench_init() {
  ROUNDS=${1:-3}
  SECS=${2:-5}
  BIN=$ROOT/target/release/osprey
  cargo build --release -q -p osprey --manifest-path "$ROOT/Cargo.toml"
  WORK=$(mktemp -d)
}
#
# ab_init USAGE ARGS...: for the A/B scripts: fails with USAGE unless ARGS start with two
# builds; sets A and B to them, then bench_init with ARGS' third and fourth (ROUNDS, SECS).
ab_init() {
  local usage=$1
  shift
  [ $# -ge 2 ] || { echo "usage: $usage" >&2; exit 2; }
  A=$1 B=$2
  bench_init "${3:-3}" "${4:-5}"
}
#
# osprey_start BIN DATA [CONFIG]: starts `BIN serve` on a free loopback port with state in
# DATA (and CONFIG, if given); sets OSPREY_PID and OSPREY_BASE (http://127.0.0.1:PORT)
# once it serves, or prints its log and fails.
osprey_start() {
  local bin=$1 data=$2 config=${3:-}
  local log="$data.log"
  mkdir -p "$(dirname "$data")"
  if [ -n "$config" ]; then
    "$bin" serve --config "$config" --listen 127.0.0.1:0 --data "$data" >"$log" 2>&1 &
  else
    "$bin" serve --listen 127.0.0.1:0 --data "$data" >"$log" 2>&1 &
  fi
  OSPREY_PID=$!
  OSPREY_BASE=
  for _ in $(seq 1 100); do
    OSPREY_BASE=$(grep -o 'http://127.0.0.1:[0-9]*' "$log" | head -1 || true)
    [ -n "$OSPREY_BASE" ] && return 0
    sleep 0.05
  done
  cat "$log"
  echo "osprey serve did not start" >&2
  return 1
}

# osprey_stop: stops the container osprey_start started (by its PID).
osprey_stop() {
  if [ -n "${OSPREY_PID:-}" ]; then
    kill "$OSPREY_PID" 2>/dev/null || true
    wait "$OSPREY_PID" 2>/dev/null || true
    OSPREY_PID=
  fi
}

# json_field FILE KEY: the value of top-level KEY in the JSON file FILE (an `osprey bench
# ... --json` report).
json_field() {
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"
}

# wrk_soap OUT THREADS CONNS SECS BODIES OP URL: wrk POSTs the WS Test request BODIES/OP.xml
# (bench/peers/tools.py bodies writes them) to URL with SOAPAction urn:wstest/OP over
# keep-alive connections for SECS seconds; its report goes to OUT. Bounded by -d and
# timeout(1); a failed run leaves its report for the caller to read.
wrk_soap() {
  BODY="$5/$6.xml" ACTION="urn:wstest/$6" timeout $(($4 + 30)) \
    wrk -t"$2" -c"$3" -d"$4s" --timeout 5s --latency -s "$ROOT/bench/peers/post.lua" "$7" >"$1" 2>&1 || true
}
