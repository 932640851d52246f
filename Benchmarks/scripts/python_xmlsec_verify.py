#!/usr/bin/env python3
"""Baseline for the Verification figures: python-xmlsec (PyPI `xmlsec`, the same libxmlsec1
underneath) parsing and verifying the same document, N times, with the trusted certificate
preset (no KeyInfo trust) and the Assertion's ID registered, as samlgate does.

usage: python_xmlsec_verify.py DIR N   (DIR/response.xml, DIR/cert.pem from VerifyDriver gen)
"""
import sys
import time

import xmlsec
from lxml import etree

SAML = "urn:oasis:names:tc:SAML:2.0:assertion"
DS = "http://www.w3.org/2000/09/xmldsig#"


def verify_once(data: bytes, key: "xmlsec.Key") -> None:
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)
    root = etree.fromstring(data, parser)
    assertion = root.find("{%s}Assertion" % SAML)
    xmlsec.tree.add_ids(assertion, ["ID"])
    signature = assertion.find("{%s}Signature" % DS)
    ctx = xmlsec.SignatureContext()
    ctx.key = key
    ctx.verify(signature)  # raises xmlsec.VerificationError when invalid


def main() -> None:
    directory, n = sys.argv[1], int(sys.argv[2])
    data = open(directory + "/response.xml", "rb").read()
    key = xmlsec.Key.from_file(directory + "/cert.pem", xmlsec.constants.KeyDataFormatCertPem)
    verify_once(data, key)  # warm-up, and proof that it verifies at all
    start = time.perf_counter()
    for _ in range(n):
        verify_once(data, key)
    elapsed = time.perf_counter() - start
    print("%d/%d verified, %.1f µs per verification" % (n, n, elapsed / n * 1e6))


if __name__ == "__main__":
    main()
