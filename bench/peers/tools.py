#!/usr/bin/env python3
"""Helpers for run.sh (standard library only).

  tools.py bodies DIR             writes echoVoid.xml, echoStruct.xml, echoList.xml (WS Test 1.0:
                                  item i = {i, i + 0.5, "abcdefghij"}, 20 items / 20 nodes)
  tools.py coldstart PORT CMD...  starts CMD, polls echoVoid every 2 ms until a correct answer,
                                  then times one echoStruct on a new connection; prints
                                  "PID COLD_MS FIRST_STRUCT_MS" (the process keeps running).
                                  With ANY200=1 any HTTP 200 counts (the nginx ceiling).
  tools.py startup N PORT CMD...  N launches of CMD, each: cold start, first echoStruct, then the
                                  median of 20 more echoStructs with the same client (a new
                                  connection each, like the first); prints the medians over the
                                  launches: "COLD_MS FIRST_MS STABLE_MS"
  tools.py rss PID                VmRSS in KiB of PID plus its direct children
  tools.py report RAWDIR          the markdown tables from run.sh's raw results
"""
import glob
import http.client
import os
import re
import statistics
import subprocess
import sys
import time

N = 20
ENV = '<?xml version="1.0" encoding="UTF-8"?>\n<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>{}</soapenv:Body></soapenv:Envelope>\n'


def fields(i):
    return f"<varInt>{i}</varInt><varFloat>{i}.5</varFloat><varString>abcdefghij</varString>"


def bodies():
    items = "".join(f"<item>{fields(i)}</item>" for i in range(N))
    lst = ""
    for i in reversed(range(N)):
        lst = fields(i) + (f"<next>{lst}</next>" if lst else "")
    return {
        "echoVoid": ENV.format('<echoVoid xmlns="urn:wstest"/>'),
        "echoStruct": ENV.format(f'<echoStruct xmlns="urn:wstest"><input>{items}</input></echoStruct>'),
        "echoList": ENV.format(f'<echoList xmlns="urn:wstest"><input>{lst}</input></echoList>'),
    }


def post(port, op, timeout=2.0):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request("POST", "/wstest", bodies()[op].encode(),
                  {"Content-Type": "text/xml; charset=utf-8", "SOAPAction": f'"urn:wstest/{op}"'})
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def coldstart(port, cmd):
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = t0 + 120
    while time.monotonic() < deadline:
        if p.poll() is not None:
            print(f"{p.pid} FAIL FAIL")
            return 1
        try:
            status, body = post(port, "echoVoid", 1.0)
            any200 = os.environ.get("ANY200") == "1"
            if status == 200 and (any200 or (b"echoVoidResponse" in body and b"Fault" not in body)):
                cold = (time.monotonic() - t0) * 1000
                t1 = time.monotonic()
                status, body = post(port, "echoStruct", 30.0)
                first = (time.monotonic() - t1) * 1000
                ok = status == 200 and (any200 or body.count(b"abcdefghij") == N)
                print(f"{p.pid} {cold:.1f} {first:.2f}" if ok else f"{p.pid} {cold:.1f} FAIL")
                return 0
        except OSError:
            pass
        time.sleep(0.002)
    print(f"{p.pid} FAIL FAIL")
    return 1


def startup(n, port, cmd):
    colds, firsts, stables = [], [], []
    any200 = os.environ.get("ANY200") == "1"
    for _ in range(n):
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            deadline = t0 + 120
            while time.monotonic() < deadline:
                try:
                    status, body = post(port, "echoVoid", 1.0)
                    if status == 200 and (any200 or b"echoVoidResponse" in body):
                        break
                except OSError:
                    pass
                time.sleep(0.002)
            else:
                print("FAIL FAIL FAIL")
                return 1
            colds.append((time.monotonic() - t0) * 1000)
            times = []
            for _ in range(21):
                t1 = time.monotonic()
                status, body = post(port, "echoStruct", 30.0)
                times.append((time.monotonic() - t1) * 1000)
                if status != 200:
                    print("FAIL FAIL FAIL")
                    return 1
            firsts.append(times[0])
            stables.append(sorted(times[1:])[10])
        finally:
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        time.sleep(0.2)
    med = lambda xs: sorted(xs)[len(xs) // 2]
    print(f"{med(colds):.1f} {med(firsts):.2f} {med(stables):.2f}")
    return 0


def rss(pid):
    total = 0
    pids = [pid]
    try:
        pids += subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    except OSError:
        pass
    for q in pids:
        try:
            with open(f"/proc/{q}/status") as f:
                total += next(int(l.split()[1]) for l in f if l.startswith("VmRSS"))
        except (OSError, StopIteration):
            pass
    print(total)


def wrk_stats(path):
    """requests/s, p50 ms, p99 ms, errors from one wrk --latency output."""
    try:
        text = open(path).read()
    except OSError:
        return None
    def ms(label):
        m = re.search(rf"^\s+{label}%\s+([\d.]+)(us|ms|s)\s*$", text, re.M)
        if not m:
            return None
        v = float(m.group(1))
        return v / 1000 if m.group(2) == "us" else v * 1000 if m.group(2) == "s" else v
    rps = re.search(r"Requests/sec:\s+([\d.]+)", text)
    errors = sum(int(x) for x in re.findall(r"Non-2xx or Non-3xx responses:\s+(\d+)", text))
    sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    if sock:
        errors += sum(int(x) for x in sock.groups())
    return {"rps": float(rps.group(1)) if rps else None, "p50": ms(50), "p99": ms(99), "errors": errors}


def median_stats(raw, p, op, c):
    """wrk_stats of every round of one run, each figure the median over the rounds
    (errors summed)."""
    runs = [s for s in (wrk_stats(f) for f in sorted(glob.glob(os.path.join(raw, f"{p}-{op}-c{c}.r*.txt")))) if s]
    if not runs:
        return None
    def med(key):
        vals = sorted(r[key] for r in runs if r[key] is not None)
        return statistics.median(vals) if vals else None
    return {"rps": med("rps"), "p50": med("p50"), "p99": med("p99"), "errors": sum(r["errors"] for r in runs)}


NAMES = {"osprey": "Osprey", "gsoap": "gSOAP 2.8 (C)", "cxf": "Apache CXF 4.1", "axis1": "Apache Axis 1.4", "ceiling": "nginx ceiling (fixed reply)"}
OPS = ["echoVoid", "echoStruct", "echoList"]


def fmt(v, digits=0):
    if v is None:
        return "-"
    return f"{v:,.{digits}f}"


def report(raw):
    order = open(os.path.join(raw, "order.txt")).read().split()
    meta = {"peers": {}}
    for p in order:
        try:
            kv = dict(l.strip().split("=", 1) for l in open(os.path.join(raw, f"{p}.meta")) if "=" in l)
        except OSError:
            continue
        if kv.get("status") == "ok":
            meta["peers"][p] = {"rss_kib": int(kv["rss_kib"]) if kv.get("rss_kib") else None,
                                "cold_ms": kv.get("cold_ms"), "first_ms": kv.get("first_ms"),
                                "stable_ms": kv.get("stable_ms")}
    peers = [p for p in order if p in meta["peers"]]
    stats = {(p, op, c): median_stats(raw, p, op, c) for p in peers for op in OPS for c in (1, 16)}
    rounds = max((len(glob.glob(os.path.join(raw, f"{p}-{op}-c16.r*.txt"))) for p in peers for op in OPS), default=1)
    def rps(p, op, c=16):
        s = stats.get((p, op, c))
        return s["rps"] if s else None
    out = []
    if rounds > 1:
        out.append(f"Each load figure is the median of {rounds} rounds; every round took the engines in turn.")
        out.append("")
    out.append("| engine | operation | req/s, 1 conn | req/s, 16 conn | p50 ms, 1 conn | p99 ms, 16 conn | errors |")
    out.append("|---|---|---:|---:|---:|---:|---:|")
    for p in peers:
        for i, op in enumerate(OPS):
            s1, s16 = stats[(p, op, 1)] or {}, stats[(p, op, 16)] or {}
            err = (s1.get("errors") or 0) + (s16.get("errors") or 0)
            out.append(f"| {NAMES.get(p, p) if i == 0 else ''} | {op} | {fmt(s1.get('rps'))} | {fmt(s16.get('rps'))} | "
                       f"{fmt(s1.get('p50'), 3)} | {fmt(s16.get('p99'), 2)} | {err} |")
    out.append("")
    launches = os.environ.get("LAUNCHES", "5")
    out.append(f"Start-up, medians of {launches} launches: cold start is launch to the first correct echoVoid; then one")
    out.append("echoStruct, then 20 more with the same client (Python http.client, a new connection each).")
    out.append("")
    out.append("| engine | RSS after the load runs | cold start | first echoStruct | later echoStructs | first / later |")
    out.append("|---|---:|---:|---:|---:|---:|")
    for p in peers:
        m = meta["peers"][p]
        rss_kib = m.get("rss_kib")
        try:
            ratio = f"{float(m['first_ms']) / float(m['stable_ms']):.1f}x"
        except (KeyError, TypeError, ValueError, ZeroDivisionError):
            ratio = "-"
        out.append(f"| {NAMES.get(p, p)} | {fmt(rss_kib / 1024 if rss_kib else None, 1)} MiB | {m.get('cold_ms', '-')} ms | "
                   f"{m.get('first_ms', '-')} ms | {m.get('stable_ms', '-')} ms | {ratio} |")
    if "osprey" in peers:
        out.append("")
        out.append("Osprey as a ratio of the others (requests/s at 16 connections; higher is better for Osprey):")
        out.append("")
        others = [p for p in peers if p != "osprey"]
        out.append("| operation | " + " | ".join(f"vs {NAMES.get(p, p)}" for p in others) + " |")
        out.append("|---|" + "---:|" * len(others))
        for op in OPS:
            cells = []
            for p in others:
                a, b = rps("osprey", op), rps(p, op)
                cells.append(f"{a / b:.2f}x" if a and b else "-")
            out.append(f"| {op} | " + " | ".join(cells) + " |")
    print("\n".join(out))


def main():
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "bodies":
        for op, body in bodies().items():
            with open(os.path.join(sys.argv[2], f"{op}.xml"), "w") as f:
                f.write(body)
        return 0
    if cmd == "coldstart":
        return coldstart(int(sys.argv[2]), sys.argv[3:])
    if cmd == "startup":
        return startup(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:])
    if cmd == "rss":
        rss(int(sys.argv[2]))
        return 0
    if cmd == "report":
        report(sys.argv[2])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
