"""zeep (from PyPI) reads Osprey's counter WSDL, creates a counter, adds to it, reads
its Value resource property and destroys it, sending the reference parameters of the
counter's endpoint reference as SOAP headers, as WS-Addressing's SOAP binding says.
Usage: python3 zeep_counter.py URL"""
import sys

import zeep
from lxml import etree

WSRF_R = "http://docs.oasis-open.org/wsrf/r-2"


def main(url: str) -> int:
    client = zeep.Client(f"{url}?wsdl")
    epr = client.service.createCounter()
    assert epr.Address.endswith("/counter"), epr.Address
    # ReferenceParameters is open content: zeep hands back its child elements.
    headers = list(epr.ReferenceParameters)
    assert [etree.QName(h).localname for h in headers] == ["CounterKey"], headers

    assert client.service.add(value=5, _soapheaders=headers) == 5
    assert client.service.add(value=-2, _soapheaders=headers) == 3

    values = client.service.GetResourceProperty("Value", _soapheaders=headers)
    assert [(etree.QName(v).localname, v.text) for v in values] == [("Value", "3")], values

    client.service.Destroy(_soapheaders=headers)
    try:
        client.service.add(value=1, _soapheaders=headers)
    except zeep.exceptions.Fault as f:
        # The spec's fault element is the fault's detail.
        assert f.detail is not None and f.detail[0].tag == f"{{{WSRF_R}}}ResourceUnknownFault", (
            etree.tostring(f.detail)
        )
    else:
        raise AssertionError("add on a destroyed counter did not fault")
    print("zeep counter: create, add, GetResourceProperty, Destroy, ResourceUnknownFault: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
