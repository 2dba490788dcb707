#!/usr/bin/env bash
# CPU time per request of a server and of wrk itself under `wrk -t2 -c16` for 5 s: the
# server's user + system time from /proc/PID/stat, wrk's from time(1).
# Usage: OP=echoList bench/cpu-per-request.sh COMMAND...   (COMMAND starts the server on
# 127.0.0.1:28190, serving /wstest; e.g. target/release/osprey serve --listen
# 127.0.0.1:28190 --data DIR, or /tmp/osprey-peers/gsoap/server 28190). Needs the request
# files bench/peers/run.sh writes (BUILD=/tmp/osprey-peers). The server is stopped by PID.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OP=${OP:-echoList} BUILD=${BUILD:-/tmp/osprey-peers}
"$@" >/dev/null 2>&1 & SP=$!
trap 'kill $SP 2>/dev/null' EXIT
sleep 1
tk=$(getconf CLK_TCK)
s0=$(awk '{print $14+$15}' /proc/$SP/stat)
out=$(BODY=$BUILD/$OP.xml ACTION=urn:wstest/$OP bash -c "time wrk -t2 -c16 -d5s -s $ROOT/bench/peers/post.lua http://127.0.0.1:28190/wstest" 2>&1)
s1=$(awk '{print $14+$15}' /proc/$SP/stat)
python3 - "$s0" "$s1" "$tk" <<PY
import re, sys
out = """$out"""
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out)[1])
t = lambda k: sum(int(m) * 60 + float(s) for m, s in re.findall(k + r"\s+(\d+)m([\d.]+)s", out))
n = rps * 5
server = (int(sys.argv[2]) - int(sys.argv[1])) / int(sys.argv[3])
print(f"{rps:,.0f} req/s, server {1e6 * server / n:.1f} us/request, wrk {1e6 * (t('user') + t('sys')) / n:.1f} us/request")
PY
