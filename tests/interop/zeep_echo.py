"""zeep (from PyPI) reads Osprey's WSDL and calls all three WS Test operations,
checking the echoed values. Usage: python3 zeep_echo.py URL"""
import sys

import zeep

N = 20


def main(url: str) -> int:
    client = zeep.Client(f"{url}?wsdl")
    assert client.service.echoVoid() is None
    items = [{"varInt": i, "varFloat": i + 0.5, "varString": "abcdefghij"} for i in range(N)]
    got = client.service.echoStruct(input={"item": items})
    assert [(g.varInt, g.varFloat, g.varString) for g in got] == [
        (i["varInt"], i["varFloat"], i["varString"]) for i in items
    ], got
    head = None
    for i in reversed(range(N)):
        head = {"varInt": i, "varFloat": i + 0.5, "varString": "abcdefghij", "next": head}
    node, seen = client.service.echoList(input=head), 0
    while node is not None:
        assert (node.varInt, node.varFloat, node.varString) == (seen, seen + 0.5, "abcdefghij"), node
        node, seen = node.next, seen + 1
    assert seen == N, seen
    # A wrong type comes back as a clear SOAP fault that zeep raises as such (zeep checks
    # its own requests, so the bad one goes through its transport unvalidated).
    binding = client.service._binding
    bad = (
        '<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>'
        '<echoStruct xmlns="urn:wstest"><input><item><varInt>abc</varInt><varFloat>1</varFloat>'
        "<varString>x</varString></item></input></echoStruct></soapenv:Body></soapenv:Envelope>"
    )
    headers = {"Content-Type": "text/xml; charset=utf-8", "SOAPAction": '"urn:wstest/echoStruct"'}
    response = client.transport.post(url, bad.encode(), headers)
    try:
        binding.process_reply(client, binding.get("echoStruct"), response)
    except zeep.exceptions.Fault as f:
        assert f.code.endswith("Client.InvalidValue"), f.code
        assert "/echoStruct/input/item/varInt" in f.message, f.message
    else:
        raise AssertionError("expected a fault for varInt=abc")
    print("zeep: echoVoid, echoStruct, echoList OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
