#!/usr/bin/env bash
# Osprey and its peers side by side under one wrk load, in one sitting.
#
# Builds gSOAP, Apache CXF 4.1 and Apache Axis 1.4 WS Test servers from Osprey's own WSDL (so
# this also shows wsdl2h, CXF's wsdl2java and Axis's WSDL2Java consume it), an nginx
# fixed-reply ceiling, and Osprey (release).
# Then, for each engine in turn: start it (cold start = launch to first correct echoVoid;
# then one echoStruct on a fresh connection = first request), check all three operations
# with `osprey bench wstest` (any wrong answer or fault and the engine is not measured), and
# per operation run wrk: warm-up at 16 connections, 1 connection, 16 connections. Read RSS,
# stop it by PID. Then launch it LAUNCHES (default 5) more times for start-up medians. Writes the tables between the markers in docs/benchmarks.md.
#
# Usage: bench/peers/run.sh [ENGINE ...]   ENGINES: ceiling gsoap osprey cxf axis1 (default: all)
# Env:   WARM=10 DUR=10 (seconds per wrk run)  ROUNDS=1 (repeat the load runs, the engines
#        taken in turn each round; the table gives each figure's median over the rounds, so
#        that a noisy minute on this shared machine does not fall on one engine alone)
#        BUILD=/tmp/osprey-peers  NOBUILD=1
#        JAVA_OPTS (passed to the JVM)  NOREPORT=1 (leave docs/benchmarks.md alone)
# All load goes to 127.0.0.1; every wrk run is bounded by -d and timeout(1).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
B=${BUILD:-/tmp/osprey-peers}
WARM=${WARM:-10}
DUR=${DUR:-10}
ROUNDS=${ROUNDS:-1}
ENGINES=${*:-ceiling gsoap osprey cxf axis1}
OPS="echoVoid echoStruct echoList"
declare -A PORT=([ceiling]=18180 [gsoap]=18181 [cxf]=18182 [axis1]=18183 [osprey]=18189)
RAW=$B/raw
mkdir -p "$B" "$RAW"
OSPREY=$ROOT/target/release/osprey
. "$ROOT/bench/lib.sh"

need=()
for pkg in wrk curl gsoap libgsoap-dev nginx-light pkg-config maven; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >/dev/null
fi

# ---- build ----
if [ -z "${NOBUILD:-}" ]; then
  echo "== build osprey"
  cargo build --release --locked -p osprey --manifest-path "$ROOT/Cargo.toml" 2>&1 | tail -1
fi
"$OSPREY" wsdl echo --address "http://127.0.0.1:18080/wstest" >"$B/wstest.wsdl"
python3 "$HERE/tools.py" bodies "$B"
if [ -z "${NOBUILD:-}" ]; then
  for e in $ENGINES; do
    case $e in
      gsoap)
        echo "== build gsoap (wsdl2h + soapcpp2 from Osprey's WSDL)"
        mkdir -p "$B/gsoap"
        (cd "$B/gsoap" && wsdl2h -c -o wstest.h "$B/wstest.wsdl" >wsdl2h.log 2>&1 \
          && soapcpp2 -c -S -L -x -I/usr/share/gsoap/import wstest.h >soapcpp2.log 2>&1 \
          && gcc -O2 -Wall -I. $(pkg-config --cflags gsoap) -o server "$HERE/gsoap/server.c" soapC.c soapServer.c \
               $(pkg-config --libs gsoap) -lpthread) ;;
      cxf)
        echo "== build cxf (wsdl2java from Osprey's WSDL)"
        mvn -B -q -f "$HERE/cxf/pom.xml" -Dwsdl="$B/wstest.wsdl" -Dbuild.dir="$B/cxf" package >"$B/cxf-build.log" 2>&1 \
          || { tail -30 "$B/cxf-build.log"; echo "CXF build failed"; exit 1; } ;;
      axis1)
        echo "== build axis1 (Axis 1.4 WSDL2Java from Osprey's WSDL)"
        A=$B/axis1
        mvn -B -q -f "$HERE/axis1/pom.xml" -Dbuild.dir="$A" package >"$B/axis1-build.log" 2>&1 \
          || { tail -30 "$B/axis1-build.log"; echo "Axis build failed"; exit 1; }
        rm -rf "$A/gen" "$A/classes" "$A/webapp"
        java -cp "$A/lib/*" org.apache.axis.wsdl.WSDL2Java -s -d Application -o "$A/gen" -p osprey.peer.axis1 \
          "$B/wstest.wsdl" >>"$B/axis1-build.log" 2>&1
        cp "$HERE/axis1/src/WSTestBindingImpl.java" "$A/gen/osprey/peer/axis1/WSTestBindingImpl.java"
        mkdir -p "$A/classes" "$A/webapp/WEB-INF"
        # shellcheck disable=SC2046
        javac -nowarn -encoding UTF-8 -cp "$A/lib/*" -d "$A/classes" \
          $(find "$A/gen" -name '*.java') "$HERE/axis1/src/AxisServer.java" >>"$B/axis1-build.log" 2>&1
        python3 - "$HERE/axis1/server-config.wsdd.in" "$A/gen/osprey/peer/axis1/deploy.wsdd" "$A/webapp/WEB-INF/server-config.wsdd" <<'PY'
import re, sys
template, deploy, out = sys.argv[1:]
# The first <service> is the SOAP 1.1 port's (Axis 1.4 has no SOAP 1.2 support).
service = re.search(r"<service .*?</service>", open(deploy).read(), re.S).group(0)
service = service.replace('name="WSTestPort"', 'name="wstest"', 1)
open(out, "w").write(open(template).read().replace("<!-- SERVICE -->", service))
PY
        ;;
    esac
  done
fi

start_cmd() {
  local e=$1 port=${PORT[$1]}
  case $e in
    osprey) echo "$OSPREY serve --listen 127.0.0.1:$port" ;;
    gsoap) echo "$B/gsoap/server $port" ;;
    cxf) echo "java ${JAVA_OPTS:-} -cp $B/cxf/wstest-cxf-1.0.jar:$B/cxf/lib/* osprey.peer.Server $port" ;;
    axis1) echo "java ${JAVA_OPTS:-} -cp $B/axis1/classes:$B/axis1/lib/* osprey.peer.axis1.AxisServer $port $B/axis1/webapp" ;;
    ceiling)
      mkdir -p "$B/nginx"
      sed -e "s#@PORT@#$port#g" -e "s#@DIR@#$B/nginx#g" "$HERE/ceiling/nginx.conf.in" >"$B/nginx/nginx.conf"
      echo "nginx -p $B/nginx -c $B/nginx/nginx.conf" ;;
  esac
}

stop_pid() {
  kill "$1" 2>/dev/null || return 0
  for _ in $(seq 1 100); do [ -e "/proc/$1" ] || return 0; sleep 0.1; done
  kill -9 "$1" 2>/dev/null || true
}

run_wrk() {  # out threads conns secs op url
  wrk_soap "$1" "$2" "$3" "$4" "$B" "$5" "$6"
}

PID=
trap '[ -n "$PID" ] && stop_pid "$PID"' EXIT
rm -f "$RAW"/*.txt "$RAW"/*.meta "$RAW"/*.check "$RAW"/*.running
echo "$ENGINES" >"$RAW/order.txt"
{
  echo "- machine: $(nproc) cores, $(awk '/MemTotal/{printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(. /etc/os-release; echo "$PRETTY_NAME"), kernel $(uname -r)"
  echo "- osprey $(git -C "$ROOT" rev-parse --short HEAD), $(rustc --version)"
  echo "- wrk $(dpkg-query -W -f='${Version}' wrk), nginx-light $(dpkg-query -W -f='${Version}' nginx-light), gSOAP $(dpkg-query -W -f='${Version}' gsoap), gcc $(gcc -dumpfullversion)"
  echo "- $(java -version 2>&1 | head -1), CXF 4.1.3 (Jetty 12), Axis 1.4 (Jetty 9.4), default JVM flags${JAVA_OPTS:+ plus $JAVA_OPTS}"
  echo "- load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$RAW/versions.txt"

for round in $(seq 1 "$ROUNDS"); do
for e in $ENGINES; do
  [ "$round" -gt 1 ] && [ ! -e "$RAW/$e.running" ] && continue  # failed its check in round 1
  port=${PORT[$e]}
  url=http://127.0.0.1:$port/wstest
  echo "== $e on $url (round $round of $ROUNDS)"
  # shellcheck disable=SC2046
  any200=0; [ "$e" = ceiling ] && any200=1
  read -r PID cold first < <(ANY200=$any200 python3 "$HERE/tools.py" coldstart "$port" $(start_cmd "$e"))
  if [ "$cold" = FAIL ]; then
    echo "   did not answer"; echo "status=start-failed" >"$RAW/$e.meta"; rm -f "$RAW/$e.running"
    stop_pid "$PID"; PID=; continue
  fi
  echo "   pid $PID, cold start ${cold} ms, first echoStruct ${first} ms"
  if [ "$e" != ceiling ] && [ "$round" = 1 ]; then
    for op in $OPS; do
      if ! "$OSPREY" bench wstest --url "$url" --op "$op" --connections 1 --duration 1s >"$RAW/$e-$op.check" 2>&1; then
        echo "   $op answers are wrong:"; sed 's/^/     /' "$RAW/$e-$op.check"
        echo "status=check-failed" >"$RAW/$e.meta"; stop_pid "$PID"; PID=; continue 2
      fi
    done
  fi
  touch "$RAW/$e.running"
  for op in $OPS; do
    echo "   $op: warm-up ${WARM}s, 1 connection ${DUR}s, 16 connections ${DUR}s"
    run_wrk "$RAW/$e-$op-warm.txt" 2 16 "$WARM" "$op" "$url"
    run_wrk "$RAW/$e-$op-c1.r$round.txt" 1 1 "$DUR" "$op" "$url"
    run_wrk "$RAW/$e-$op-c16.r$round.txt" 2 16 "$DUR" "$op" "$url"
  done
  rss=$(python3 "$HERE/tools.py" rss "$PID")
  stop_pid "$PID"; PID=
  [ "$round" = "$ROUNDS" ] || continue
  # shellcheck disable=SC2046
  read -r cold first stable < <(ANY200=$any200 python3 "$HERE/tools.py" startup "${LAUNCHES:-5}" "$port" $(start_cmd "$e"))
  printf 'status=ok\ncold_ms=%s\nfirst_ms=%s\nstable_ms=%s\nrss_kib=%s\n' "$cold" "$first" "$stable" "$rss" >"$RAW/$e.meta"
  echo "   RSS $rss KiB; start-up medians: cold ${cold} ms, first ${first} ms, later ${stable} ms"
done
done
rm -f "$RAW"/*.running

python3 "$HERE/tools.py" report "$RAW" >"$RAW/report.md"
cat "$RAW/report.md"
if [ -z "${NOREPORT:-}" ]; then
  python3 - "$ROOT/docs/benchmarks.md" "$RAW/report.md" "$RAW/versions.txt" "LAUNCHES=${LAUNCHES:-5} WARM=$WARM DUR=$DUR ROUNDS=$ROUNDS bench/peers/run.sh $*" <<'PY'
import sys, datetime
doc, report, versions, cmd = sys.argv[1:5]
text = open(doc).read()
begin, end = "<!-- peers:begin -->", "<!-- peers:end -->"
block = (f"{begin}\nRun of {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC, command: `{cmd}`\n\n"
         + open(report).read() + "\n" + open(versions).read() + end)
head, rest = text.split(begin, 1)
open(doc, "w").write(head + block + rest.split(end, 1)[1])
PY
  echo "== wrote docs/benchmarks.md"
fi
