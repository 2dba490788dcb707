"""A WS-BaseNotification consumer written without Osprey: a small Python HTTP server on a
loopback port. It creates a counter and subscribes itself to Value changes with plain
SOAP 1.1 requests, adds three times, and checks each Notify it receives against the
WS-BaseNotification 1.3 structure (Notify / NotificationMessage / SubscriptionReference,
Topic with its Dialect, ProducerReference, Message) and the WS-ResourceProperties value
change message. Usage: python3 notify_consumer.py COUNTER_URL"""
import http.server
import queue
import sys
import threading
import urllib.request

from lxml import etree

S11 = "http://schemas.xmlsoap.org/soap/envelope/"
WSA = "http://www.w3.org/2005/08/addressing"
WSNT = "http://docs.oasis-open.org/wsn/b-2"
RP = "http://docs.oasis-open.org/wsrf/rp-2"
SIMPLE = "http://docs.oasis-open.org/wsn/t-1/TopicExpression/Simple"
CNS = "urn:osprey:counter"
NS = {"s": S11, "wsa": WSA, "wsnt": WSNT, "rp": RP, "c": CNS}

received: "queue.Queue[bytes]" = queue.Queue()


class Consumer(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        received.put(body)
        self.send_response(202)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def call(url: str, action: str, body: str, headers: str = "") -> etree._Element:
    env = f'<s:Envelope xmlns:s="{S11}"><s:Header>{headers}</s:Header><s:Body>{body}</s:Body></s:Envelope>'
    req = urllib.request.Request(
        url,
        env.encode(),
        {"Content-Type": "text/xml; charset=utf-8", "SOAPAction": f'"{action}"'},
    )
    with urllib.request.urlopen(req, timeout=10) as r:
        return etree.fromstring(r.read())


def one(node, path):
    found = node.findall(path, NS)
    assert len(found) == 1, (path, etree.tostring(node))
    return found[0]


def main(url: str) -> int:
    server = http.server.HTTPServer(("127.0.0.1", 0), Consumer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    consumer = f"http://127.0.0.1:{server.server_address[1]}/consumer"

    created = call(url, "urn:osprey:counter/createCounter", f'<createCounter xmlns="{CNS}"/>')
    key = one(created, ".//wsa:ReferenceParameters/c:CounterKey")
    key_header = etree.tostring(key).decode()
    call(
        url,
        "http://docs.oasis-open.org/wsn/bw-2/NotificationProducer/SubscribeRequest",
        f'<wsnt:Subscribe xmlns:wsnt="{WSNT}" xmlns:wsa="{WSA}" xmlns:c="{CNS}">'
        f"<wsnt:ConsumerReference><wsa:Address>{consumer}</wsa:Address>"
        f"<wsa:ReferenceParameters><c:Tag>py</c:Tag></wsa:ReferenceParameters></wsnt:ConsumerReference>"
        f'<wsnt:Filter><wsnt:TopicExpression Dialect="{SIMPLE}">c:Value</wsnt:TopicExpression></wsnt:Filter>'
        f"</wsnt:Subscribe>",
        key_header,
    )
    for i in range(1, 4):
        call(url, "urn:osprey:counter/add", f'<add xmlns="{CNS}"><value>1</value></add>', key_header)

    for i in range(1, 4):
        env = etree.fromstring(received.get(timeout=10))
        header = one(env, "s:Header")
        assert one(header, "wsa:Action").text == "http://docs.oasis-open.org/wsn/bw-2/NotificationConsumer/Notify"
        assert one(header, "wsa:To").text == consumer
        tag = one(header, "c:Tag")  # the consumer's reference parameter, echoed
        assert tag.get(f"{{{WSA}}}IsReferenceParameter") == "true" and tag.text == "py"
        msg = one(env, "s:Body/wsnt:Notify/wsnt:NotificationMessage")
        one(msg, "wsnt:SubscriptionReference/wsa:Address")
        topic = one(msg, "wsnt:Topic")
        assert topic.get("Dialect") == SIMPLE, topic.attrib
        prefix, local = topic.text.split(":")
        assert (topic.nsmap[prefix], local) == (CNS, "Value"), topic.text
        producer = one(msg, "wsnt:ProducerReference")
        assert one(producer, "wsa:ReferenceParameters/c:CounterKey").text == key.text
        change = one(msg, "wsnt:Message/rp:ResourcePropertyValueChangeNotification")
        assert one(change, "rp:OldValues/c:Value").text == str(i - 1)
        assert one(change, "rp:NewValues/c:Value").text == str(i)
    server.shutdown()
    print("python consumer: 3 Notify messages, WS-BaseNotification 1.3 structure: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
