"""A counter create over a fresh connection against one over a kept connection, 60 of each,
interleaved, 10 ms apart: p50 of each, in ms (the fresh figure includes Python's connect).
Usage: python3 bench/fresh-connection.py PORT   (an `osprey serve` on 127.0.0.1:PORT)."""
import http.client, statistics, sys, time

PORT = int(sys.argv[1])
BODY = (b'<?xml version="1.0" encoding="UTF-8"?><soap:Envelope xmlns:soap='
        b'"http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>'
        b'<createCounter xmlns="urn:osprey:counter"/></soap:Body></soap:Envelope>')
HEADERS = {"Content-Type": "text/xml; charset=utf-8",
           "SOAPAction": '"urn:osprey:counter/createCounter"'}


def create(c):
    c.request("POST", "/counter", BODY, HEADERS)
    r = c.getresponse()
    body = r.read()
    assert r.status == 200, (r.status, body[:300])


fresh, kept = [], []
k = http.client.HTTPConnection("127.0.0.1", PORT)
create(k)
for _ in range(60):
    t = time.perf_counter()
    c = http.client.HTTPConnection("127.0.0.1", PORT)
    create(c)
    fresh.append(time.perf_counter() - t)
    c.close()
    t = time.perf_counter()
    create(k)
    kept.append(time.perf_counter() - t)
    time.sleep(0.01)
print(f"fresh connection p50 {1e3 * statistics.median(fresh):.3f} ms, "
      f"kept p50 {1e3 * statistics.median(kept):.3f} ms")
