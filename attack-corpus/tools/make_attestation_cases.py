#!/usr/bin/env python3
"""Writes attack-corpus/cases/verify/*.json: envelopes and bundles that
`capsule-host verify` must refuse, each with its code, signed (where the
case needs a valid signature) by the test-only key attest-test.key with
OpenSSL (Ed25519 over the DSSE PAE, or over the raw payload for the case
that signs the wrong bytes). Run it again after changing a case here; the
output is deterministic (Ed25519 signatures are)."""
import base64
import json
import subprocess
import tempfile
from pathlib import Path

TOOLS = Path(__file__).resolve().parent
OUT = TOOLS.parent / "cases" / "verify"
KEY = TOOLS / "attest-test.key"
PUB = (TOOLS / "attest-test.pub").read_text()
OTHER_PUB = (TOOLS / "attest-other.pub").read_text()
TYPE = "application/vnd.in-toto+json"
SHA = "ab" * 32


def keyid(pem):
    """OpenSSH's SHA256 fingerprint of the key (what `ssh-keygen -l` prints)."""
    import base64
    import hashlib
    from cryptography.hazmat.primitives import serialization
    key = serialization.load_pem_public_key(pem.encode())
    ssh = key.public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).split()[1]
    return "SHA256:" + base64.b64encode(hashlib.sha256(base64.b64decode(ssh)).digest()).decode().rstrip("=")


def der_digest(pem):
    """The key id statements carried before 2026-12: hex SHA-256 of the SPKI DER."""
    import hashlib
    der = subprocess.run(["openssl", "pkey", "-pubin", "-outform", "DER"], input=pem.encode(),
                         capture_output=True, check=True).stdout
    return hashlib.sha256(der).hexdigest()


KEYID = keyid(PUB)


def pae(ptype, body):
    return b"DSSEv1 %d %s %d %s" % (len(ptype), ptype.encode(), len(body), body)


def sign(data):
    with tempfile.NamedTemporaryFile() as f:
        f.write(data)
        f.flush()
        return subprocess.run(["openssl", "pkeyutl", "-sign", "-inkey", str(KEY), "-rawin", "-in", f.name],
                              capture_output=True, check=True).stdout


def b64(data):
    return base64.b64encode(data).decode()


def statement(**patch):
    s = {"_type": "https://in-toto.io/Statement/v1",
         "subject": [{"name": "example.echo/guest.mjs", "digest": {"sha256": SHA}}],
         "predicateType": "https://slsa.dev/verification_summary/v1",
         "predicate": {"verifier": {"id": "https://dsh-capsule.dev/capsule-host"},
                       "timeVerified": "2026-12-03T00:00:00Z", "policy": {"uri": "file:///c.json"},
                       "verificationResult": "PASSED"}}
    for k, v in patch.items():
        if v is None:
            s.pop(k)
        else:
            s[k] = v
    return json.dumps(s, sort_keys=True, separators=(",", ":")).encode()


ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def stray_bits(text):
    """The same bytes' encoding with an unused low bit set in the digit
    before the padding (the statement is padded so that there is one)."""
    body = text.rstrip("=")
    assert len(body) < len(text), "the statement's encoding has no padding"
    i = ALPHABET.index(body[-1])
    return body[:-1] + ALPHABET[i | 1] + text[len(body):]


def envelope(payload, ptype=TYPE, sig=None, sigs=None):
    sig = sign(pae(ptype, payload)) if sig is None else sig
    return {"payload": b64(payload), "payloadType": ptype,
            "signatures": sigs if sigs is not None else [{"keyid": KEYID, "sig": b64(sig)}]}


def case(name, description, text, code, key=PUB, contains=()):
    doc = {"description": description,
           "tmpFiles": [{"path": "envelope.json", "type": "file", "content": text},
                        {"path": "key.pub", "type": "file", "content": key}],
           "argv": ["verify", "$TMP/envelope.json", "--key", "$TMP/key.pub"],
           "expect": {"code": code} if code else {"ok": True}}
    if contains:
        doc["expect"]["messageContains"] = list(contains)
    (OUT / f"{name}.json").write_text(json.dumps(doc, indent=2) + "\n")


def main():
    OUT.mkdir(exist_ok=True)
    good = envelope(statement())
    text = json.dumps(good)
    case("valid-summary-verifies", "A verification summary signed by the key given verifies (the control "
         "for every refusal below).", text, None)
    case("truncated-envelope", "An envelope cut short in transit is not JSON.", text[: len(text) // 2],
         "ENVELOPE_INVALID")
    case("duplicate-key", "An envelope with payload twice (JSON a lax reader resolves either way).",
         text.replace('"payloadType"', '"payload": "e30=", "payloadType"', 1), "ENVELOPE_INVALID")
    noncanon = dict(good, payload=good["payload"].rstrip("=") + "Q=" if good["payload"].endswith("==") else good["payload"][:-1] + "B")
    noncanon["payload"] = good["payload"].replace("=", "") if "=" in good["payload"] else good["payload"] + "\n"
    case("payload-not-canonical-base64", "The payload in base64 without its padding (or with a line "
         "break): two texts for the same bytes are not accepted.", json.dumps(noncanon), "ENVELOPE_INVALID",
         contains=["canonical base64"])
    padded = next(e for e in (envelope(statement(predicate={
        "verifier": {"id": "https://dsh-capsule.dev/capsule-host"}, "timeVerified": "2026-12-03T00:00:00Z",
        "policy": {"uri": "file:///c.json"}, "verificationResult": "PASSED", "resourceUri": "r" * k}))
        for k in range(3)) if e["payload"].endswith("="))
    stray = stray_bits(padded["payload"])
    case("payload-base64-stray-bits", "The payload's last base64 digit with unused low bits set: it decodes "
         "to the signed bytes in a lax reader, but is not their canonical encoding.",
         json.dumps(dict(padded, payload=stray)), "ENVELOPE_INVALID", contains=["canonical base64"])
    two = dict(good, signatures=[{"keyid": KEYID, "sig": b64(b"\x00" * 64)}] + good["signatures"])
    case("signature-list-reordered", "A second, bad signature placed first: one signer signs once.",
         json.dumps(two), "ENVELOPE_INVALID", contains=["exactly one signature"])
    dup = dict(good, signatures=good["signatures"] * 2)
    case("signature-list-duplicated", "The good signature twice: not counted as two.", json.dumps(dup),
         "ENVELOPE_INVALID", contains=["exactly one signature"])
    case("payload-type-changed", "payloadType changed to a plain JSON type after signing.",
         json.dumps(dict(good, payloadType="application/json")), "ENVELOPE_PAYLOAD_TYPE")
    tampered = dict(good, payload=b64(statement(predicate={"verifier": {"id": "x"}, "timeVerified": "t",
                                                          "policy": {}, "verificationResult": "PASSED"})))
    case("payload-tampered", "The statement replaced after signing, the signature kept.",
         json.dumps(tampered), "SIGNATURE_INVALID")
    case("wrong-key", "A good envelope checked against another key.", text, "SIGNATURE_INVALID", key=OTHER_PUB)
    failed = statement(predicate={"verifier": {"id": "https://dsh-capsule.dev/capsule-host"},
                                  "timeVerified": "2026-12-03T00:00:00Z", "policy": {"uri": "file:///c.json"},
                                  "verificationResult": "FAILED", "verifiedLevels": [],
                                  "failure": {"code": "DESCRIBE_LIMIT", "message": "a description is too long"}})
    case("summary-failed", "A validly signed summary recording a FAILED verification is a refusal, "
         "never a pass: verify exits non-zero with the failure it records.", json.dumps(envelope(failed)),
         "VERIFICATION_FAILED", contains=("DESCRIBE_LIMIT",))
    other = statement(predicate={"verifier": {"id": "https://example.com/another-verifier"},
                                 "timeVerified": "2026-12-03T00:00:00Z", "policy": {"uri": "file:///c.json"},
                                 "verificationResult": "PASSED"})
    case("summary-of-another-verifier", "A validly signed PASSED summary naming another verifier is not "
         "this host's word.", json.dumps(envelope(other)), "STATEMENT_INVALID", contains=("another-verifier",))
    case("keyid-of-another-key", "A good signature under another key's id: the id is a hint, but one "
         "that names another key is refused before the signature is tried.",
         json.dumps(dict(good, signatures=[dict(good["signatures"][0], keyid=keyid(OTHER_PUB))])),
         "SIGNATURE_INVALID")
    case("keyid-legacy-der-digest-verifies", "A statement written before 2026-12 carries the hex SHA-256 "
         "of the key's SPKI DER as its keyid: still the given key's id, so it verifies.",
         json.dumps(dict(good, signatures=[dict(good["signatures"][0], keyid=der_digest(PUB))])), None)
    case("keyid-empty-verifies", "DSSE makes keyid optional: an empty one names no key, and the "
         "signature is checked with the key given.",
         json.dumps(dict(good, signatures=[dict(good["signatures"][0], keyid="")])), None)
    raw = envelope(statement(), sig=sign(statement()))
    case("signature-over-raw-payload", "Signed over the payload itself instead of DSSE's PAE (which binds "
         "the payload type).", json.dumps(raw), "SIGNATURE_INVALID")
    case("statement-without-subject", "A signed statement that names no subject.",
         json.dumps(envelope(statement(subject=[]))), "STATEMENT_INVALID")
    case("statement-other-type", "A signed document that is not an in-toto Statement v1.",
         json.dumps(envelope(statement(_type="https://in-toto.io/Statement/v0.1"))), "STATEMENT_INVALID")
    case("predicate-version-unknown", "A signed statement of a predicate version this host does not state.",
         json.dumps(envelope(statement(predicateType="https://slsa.dev/verification_summary/v2"))),
         "PREDICATE_UNSUPPORTED")
    # A Sigstore bundle's verificationMaterial: this host checks a key hint
    # and nothing else, so anything else there is refused, never accepted
    # unread (issue 36.1).
    def bundle(**material):
        vm = {"publicKey": {"hint": KEYID}, "tlogEntries": [],
              "timestampVerificationData": {"rfc3161Timestamps": []}}
        vm.update(material)
        return json.dumps({"mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
                           "verificationMaterial": vm, "dsseEnvelope": good})
    case("bundle-valid-verifies", "The same signed summary in the Sigstore bundle form this host writes "
         "verifies (the control for the bundle refusals).", bundle(), None)
    case("bundle-public-key-unknown-field", "A bundle whose publicKey carries a field besides the hint.",
         bundle(publicKey={"hint": KEYID, "rawBytes": "AAAA"}), "ENVELOPE_INVALID", contains=["unknown field"])
    case("bundle-public-key-not-an-object", "A bundle whose publicKey is a number.",
         bundle(publicKey=42), "ENVELOPE_INVALID", contains=["publicKey must be a JSON object"])
    # proto3's JSON omits an empty string: Sigstore's encoders write a key
    # with no hint as {} (issue 47.10: refusing it refused valid bundles).
    case("bundle-public-key-without-hint-verifies", "A bundle whose publicKey carries no hint, as "
         "Sigstore's own encoders write one (proto3 JSON omits an empty string): no hint names no key, "
         "and the signature is checked with the key given.", bundle(publicKey={}), None)
    case("bundle-without-hint-or-keyid-verifies", "No hint and an empty keyid: nothing names a key, "
         "the signature is checked with the key given.",
         json.dumps({"mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
                     "verificationMaterial": {"publicKey": {}},
                     "dsseEnvelope": dict(good, signatures=[dict(good["signatures"][0], keyid="")])}), None)
    case("bundle-without-hint-wrong-key", "No hint does not make a signature by another key pass.",
         bundle(publicKey={}), "SIGNATURE_INVALID", key=OTHER_PUB)
    case("bundle-hint-not-a-string", "A bundle whose key hint is a number.",
         bundle(publicKey={"hint": 12345}), "ENVELOPE_INVALID", contains=["hint"])
    case("bundle-tlog-entry-unchecked", "A bundle that claims a transparency-log entry, which this host "
         "cannot check.", bundle(tlogEntries=[{"logIndex": "1", "kindVersion": {"kind": "dsse"}}]),
         "ENVELOPE_INVALID", contains=["transparency-log"])
    case("bundle-timestamp-data-junk", "A bundle whose timestampVerificationData is a string.",
         bundle(timestampVerificationData="junk"), "ENVELOPE_INVALID", contains=["timestampVerificationData"])
    case("bundle-timestamp-unchecked", "A bundle that claims an RFC 3161 timestamp, which this host cannot "
         "check.", bundle(timestampVerificationData={"rfc3161Timestamps": [{"signedTimestamp": "AAAA"}]}),
         "ENVELOPE_INVALID", contains=["timestamps"])
    case("key-not-a-key", "The public key file holds no key.", text, "KEY_INVALID", key="not a key\n")


if __name__ == "__main__":
    main()
