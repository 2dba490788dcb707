"""zeep (from PyPI) calls a service behind Osprey's WS-Security UsernameToken handler,
with zeep's own UsernameToken (PasswordDigest with nonce and Created, then PasswordText),
and checks that bad credentials and missing headers give the WS-Security faults.
Usage: python3 zeep_wsse.py URL AUDIT_LOG"""
import json
import sys

import zeep
from zeep.wsse.username import UsernameToken


def fault_code(call) -> str:
    try:
        call()
    except zeep.exceptions.Fault as f:
        return f"{f.code} {f.message}"
    raise AssertionError("expected a SOAP fault")


def main(url: str, audit: str) -> int:
    wsdl = f"{url}?wsdl"
    digest = zeep.Client(wsdl, wsse=UsernameToken("alice", "secret", use_digest=True))
    assert digest.service.echoVoid() is None
    got = digest.service.echoStruct(input={"item": [{"varInt": 7, "varFloat": 1.5, "varString": "x"}]})
    assert got[0].varInt == 7, got
    text = zeep.Client(wsdl, wsse=UsernameToken("alice", "secret"))
    assert text.service.echoVoid() is None

    wrong = zeep.Client(wsdl, wsse=UsernameToken("alice", "guess", use_digest=True))
    code = fault_code(wrong.service.echoVoid)
    assert "FailedAuthentication" in code, code
    none = zeep.Client(wsdl)
    code = fault_code(none.service.echoVoid)
    assert "InvalidSecurity" in code, code

    # The audit handler wrote one line per authenticated request, with the user.
    lines = [json.loads(l) for l in open(audit, encoding="utf-8")]
    users = [l["user"] for l in lines]
    assert users.count("alice") == 3, lines
    assert all(l["body_sha256"] and len(l["body_sha256"]) == 64 for l in lines), lines
    print("zeep wsse: OK (PasswordDigest, PasswordText, FailedAuthentication, InvalidSecurity, audit log)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
