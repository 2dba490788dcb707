#!/usr/bin/env bash
# Where an add's cost goes: server CPU per request (user + system, from /proc) and
# requests/s under the same wrk load (2 threads, 16 connections) for
#   echoVoid; echoVoid with WS-Addressing headers (To, Action, MessageID); the counter's
#   GetResourceProperty (a reference-parameter header, no write); add without and with
#   WS-Addressing headers (a durable write each).
# Usage: bench/wsrf-cpu.sh [disk|os] [SECONDS]   (needs wrk; default: os, 5 s)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SYNC=${1:-os}
SECS=${2:-5}
BIN=$ROOT/target/release/osprey
cargo build --release -q -p osprey --manifest-path "$ROOT/Cargo.toml"
command -v wrk >/dev/null || { echo "wrk is needed (apt-get install wrk)"; exit 1; }
. "$ROOT/bench/lib.sh"
WORK=$(mktemp -d)
trap 'osprey_stop; rm -rf "$WORK"' EXIT
printf '[data]\nsync = "%s"\n' "$SYNC" >"$WORK/config.toml"
osprey_start "$BIN" "$WORK/data" "$WORK/config.toml"
BASE=$OSPREY_BASE
PID=$OSPREY_PID
"$BIN" call "$BASE/counter" createCounter --save-epr "$WORK/c.xml" >/dev/null 2>&1
KEY=$(grep -o '[0-9a-f]\{32\}' "$WORK/c.xml")
S='<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/">'
A='http://www.w3.org/2005/08/addressing'
wsa() { echo "<To xmlns=\"$A\">$BASE$1</To><Action xmlns=\"$A\">$2</Action><MessageID xmlns=\"$A\">urn:uuid:0f0c0c3e-1b9e-4b8e-9a0e-5d2e0c8a7b11</MessageID>"; }
KH="<CounterKey xmlns=\"urn:osprey:counter\" xmlns:wsa=\"$A\" wsa:IsReferenceParameter=\"true\">$KEY</CounterKey>"
ADD='<add xmlns="urn:osprey:counter"><value>1</value></add>'
GRP='http://docs.oasis-open.org/wsrf/rpw-2/GetResourceProperty/GetResourcePropertyRequest'
echo "$S<s:Body><echoVoid xmlns=\"urn:wstest\"/></s:Body></s:Envelope>" >"$WORK/echoVoid.xml"
echo "$S<s:Header>$(wsa /wstest urn:wstest/echoVoid)</s:Header><s:Body><echoVoid xmlns=\"urn:wstest\"/></s:Body></s:Envelope>" >"$WORK/echoVoid+wsa.xml"
echo "$S<s:Header>$KH</s:Header><s:Body><GetResourceProperty xmlns=\"http://docs.oasis-open.org/wsrf/rp-2\" xmlns:c=\"urn:osprey:counter\">c:Value</GetResourceProperty></s:Body></s:Envelope>" >"$WORK/GetResourceProperty.xml"
echo "$S<s:Header>$KH</s:Header><s:Body>$ADD</s:Body></s:Envelope>" >"$WORK/add.xml"
echo "$S<s:Header>$(wsa /counter urn:osprey:counter/add)$KH</s:Header><s:Body>$ADD</s:Body></s:Envelope>" >"$WORK/add+wsa.xml"
ticks() { awk '{print $14 + $15}' "/proc/$PID/stat"; }
HZ=$(getconf CLK_TCK)
echo "sync = $SYNC, commit $(git -C "$ROOT" rev-parse --short HEAD), $(date -u +%Y-%m-%dT%H:%MZ)"
echo "| request | req/s | server CPU per request (us) |"
echo "|---|---:|---:|"
for r in echoVoid echoVoid+wsa GetResourceProperty add add+wsa; do
  case $r in
    echoVoid*) path=/wstest; action=urn:wstest/echoVoid ;;
    GetResourceProperty) path=/counter; action=$GRP ;;
    *) path=/counter; action=urn:osprey:counter/add ;;
  esac
  t0=$(ticks)
  out=$(BODY="$WORK/$r.xml" ACTION=$action wrk -t2 -c16 -d"${SECS}s" -s "$ROOT/bench/peers/post.lua" "$BASE$path")
  t1=$(ticks)
  if echo "$out" | grep -q Non-2xx; then echo "$r: errors: $out"; exit 1; fi
  n=$(echo "$out" | awk '/requests in/ {print $1}')
  rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
  python3 -c "print(f'| $r | {float($rps):,.0f} | {($t1 - $t0) / $HZ / $n * 1e6:.1f} |')"
done
