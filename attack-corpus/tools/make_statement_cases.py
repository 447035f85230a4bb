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


VERIFIER = {"id": "https://dsh-capsule.dev/capsule-host",
            "version": {"capsule-host": "0.1.0", "capsule-host.sha256": "cd" * 32}}


def summary(**patch):
    """A PASSED verification summary as this host writes it (RFC 13), with
    fields replaced (None deletes one)."""
    p = {"verifier": VERIFIER, "timeVerified": "2026-12-03T00:00:00Z",
         "resourceUri": "file:///work/examples/echo-capsule",
         "policy": {"uri": "file:///c.json", "digest": {"sha256": "ef" * 32}},
         "inputAttestations": [{"uri": "file:///work/statements/world.intoto.json",
                                "digest": {"sha256": "12" * 32}}],
         "verificationResult": "PASSED", "verifiedLevels": ["DSH_CAPSULE_ADMITTED_V1"]}
    for k, v in patch.items():
        if v is None:
            p.pop(k)
        else:
            p[k] = v
    return p


def statement(**patch):
    s = {"_type": "https://in-toto.io/Statement/v1",
         "subject": [{"name": "example.echo/guest.mjs", "digest": {"sha256": SHA}}],
         "predicateType": "https://slsa.dev/verification_summary/v1",
         "predicate": summary()}
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


def case(name, description, text, code, key=PUB, contains=(), files=(), argv=()):
    doc = {"description": description,
           "tmpFiles": [{"path": "envelope.json", "type": "file", "content": text},
                        {"path": "key.pub", "type": "file", "content": key}, *files],
           "argv": ["verify", "$TMP/envelope.json", "--key", "$TMP/key.pub", *argv],
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
    padded = next(e for e in (envelope(statement(predicate=summary(resourceUri="file:///" + "r" * (k + 1))))
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
    failed = statement(predicate=summary(verificationResult="FAILED", verifiedLevels=["FAILED"],
                                         failure={"code": "DESCRIBE_LIMIT", "message": "a description is too long"}))
    case("summary-failed", "A validly signed summary recording a FAILED verification is a refusal, "
         "never a pass: verify exits non-zero with the failure it records.", json.dumps(envelope(failed)),
         "VERIFICATION_FAILED", contains=("DESCRIBE_LIMIT",))
    other = statement(predicate=summary(verifier=dict(VERIFIER, id="https://example.com/another-verifier")))
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
    # Issue 47.2: every value RFC 13 defines, not only the field names.
    def bad_value(name, description, contains, **patch):
        case(name, description + " (issue 47.2: signed by the key given, it used to verify).",
             json.dumps(envelope(statement(**patch))), "STATEMENT_INVALID", contains=contains)
    for suffix, when, what in [("word", "yesterday", "a word"), ("number", 1764720000, "a number"),
                               ("no-zone", "2026-12-03T00:00:00", "a time with no zone"),
                               ("offset", "2026-12-03T01:00:00+01:00", "a time in another zone"),
                               ("no-such-day", "2026-02-30T00:00:00Z", "a day no calendar has")]:
        bad_value(f"summary-time-{suffix}", f"timeVerified is {what}, not an RFC 3339 time in UTC",
                  ["timeVerified"], predicate=summary(timeVerified=when))
    bad_value("summary-level-not-ours", "verifiedLevels names a SLSA build level this host never states",
              ["verifiedLevels"], predicate=summary(verifiedLevels=["SLSA_BUILD_LEVEL_3"]))
    bad_value("summary-level-failed-beside-passed", "verifiedLevels says FAILED beside verificationResult PASSED",
              ["verifiedLevels"], predicate=summary(verifiedLevels=["FAILED"]))
    bad_value("summary-failure-beside-passed", "a failure record beside verificationResult PASSED",
              ["failure"], predicate=summary(failure={"code": "DESCRIBE_LIMIT", "message": "x"}))
    bad_value("summary-failure-code-unknown", "a FAILED summary whose failure code is no documented code",
              ["failure.code"], predicate=summary(verificationResult="FAILED", verifiedLevels=["FAILED"],
                                                  failure={"code": "ALL_GOOD", "message": "x"}))
    bad_value("summary-resource-https", "resourceUri is an https:// URL, not the capsule's file:// URI",
              ["resourceUri"], predicate=summary(resourceUri="https://e.vil/x"))
    bad_value("summary-resource-unencoded", "resourceUri holds a raw space: not the percent-encoded form "
              "this host writes (two texts for one path)", ["resourceUri"],
              predicate=summary(resourceUri="file:///a b/c"))
    bad_value("summary-resource-dot-dot", "resourceUri's path climbs with ..", ["resourceUri"],
              predicate=summary(resourceUri="file:///work/../etc/passwd"))
    bad_value("summary-policy-digest-short", "policy.digest.sha256 is not a sha256", ["policy.digest.sha256"],
              predicate=summary(policy={"uri": "file:///c.json", "digest": {"sha256": "abc"}}))
    bad_value("summary-input-elsewhere", "inputAttestations names a file other than the world statement "
              "written beside the summary", ["inputAttestations"],
              predicate=summary(inputAttestations=[{"uri": "file:///etc/passwd", "digest": {"sha256": "12" * 32}}]))
    bad_value("summary-input-two", "inputAttestations names two statements", ["inputAttestations"],
              predicate=summary(inputAttestations=summary()["inputAttestations"] * 2))
    bad_value("summary-verifier-version-missing", "verifier.version is missing", ["verifier.version"],
              predicate=summary(verifier={"id": VERIFIER["id"]}))
    bad_value("summary-unknown-field", "a field RFC 13 does not define", ["predicate.note"],
              predicate=summary(note="trust me"))
    bad_value("summary-number-past-2-53", "a number past 2^53, which a JavaScript reader would round",
              ["2^53"], predicate=summary(policy={"uri": "file:///c.json", "digest": {"sha256": "ef" * 32},
                                                  "size": 9007199254740993}))
    bad_value("subject-name-empty", "a subject with an empty name", ["subject[0].name"],
              subject=[{"name": "", "digest": {"sha256": SHA}}])
    bad_value("subject-named-twice", "one subject name with two digests", ["named twice"],
              subject=[{"name": "example.echo/guest.mjs", "digest": {"sha256": SHA}},
                       {"name": "example.echo/guest.mjs", "digest": {"sha256": "cd" * 32}}])
    # The world statement's values (issue 47.2): digest forms, absolute
    # paths, numbers inside their bounds.
    def world(**patch):
        p = {"capsuleHost": {"version": "0.1.0", "sha256": "a0" * 32, "launcherSha256": "f8" * 32,
                             "probeSha256": "eb" * 32},
             "node": {"version": "v20.20.2", "path": "/usr/bin/node", "sha256": "62" * 32,
                      "sharedObjects": [{"dest": "/lib/x86_64-linux-gnu/libc.so.6",
                                         "path": "/usr/lib/x86_64-linux-gnu/libc.so.6", "sha256": "6b" * 32}]},
             "bwrap": {"path": "/usr/bin/bwrap", "sha256": "85" * 32},
             "cell": {"execPath": "/runtime/node", "permissionModel": True,
                      "permissionScopes": {"fs.read": "denied", "net": "allowed"}},
             "nodeFlags": {"permission": "--experimental-permission", "disableSigusr1": False, "noAddons": True},
             "cellLoaderSha256": "57" * 32, "seccompSha256": "df" * 32,
             "ceilings": {"memoryBytes": {"limit": 1073741824, "mechanism": "RLIMIT_DATA", "nodeReservedBytes": 0},
                          "threads": {"limit": None, "mechanism": "no count"},
                          "cgroup": {"mechanism": "none", "used": False}},
             "cellWorld": {"hostname": "capsule", "devWritable": False,
                           "namespaces": ["ipc", "mnt", "net", "pid", "user", "uts"]},
             "observed": {"host": {"uid": 0, "root": {"dev": 65024, "ino": "2"}}}}
        for path, value in patch.items():
            *parents, last = path.split("__")
            target = p
            for k in parents:
                target = target[k]
            target[last] = value
        return statement(predicateType="https://dsh-capsule.dev/attestation/execution-world/v1", predicate=p)
    case("world-valid-verifies", "A world statement as this host writes it verifies (the control for the "
         "world's value refusals).", json.dumps(envelope(world())), None)
    for name, description, contains, patch in [
        ("world-node-path-relative", "node.path is a relative path", "node.path", {"node__path": "bin/node"}),
        ("world-digest-uppercase", "bwrap.sha256 in uppercase hex: not the one form of a digest",
         "bwrap.sha256", {"bwrap__sha256": "85" * 31 + "AB"}),
        ("world-shared-object-dest-climbs", "a shared object's dest climbs with ..",
         "sharedObjects[0].dest", {"node__sharedObjects": [{"dest": "/lib/../etc/x", "path": "/usr/lib/x",
                                                            "sha256": "6b" * 32}]}),
        ("world-limit-negative", "a ceiling's limit is negative", "ceilings.memoryBytes.limit",
         {"ceilings__memoryBytes__limit": -1}),
        ("world-limit-fraction", "a ceiling's limit is a fraction", "fraction",
         {"ceilings__memoryBytes__limit": 1.5}),
        ("world-scope-unknown", "a permission scope is neither denied nor allowed", "permissionScopes",
         {"cell__permissionScopes": {"net": "maybe"}}),
        ("world-node-version-word", "node.version is not a Node version", "node.version",
         {"node__version": "latest"}),
        ("world-namespace-named-twice", "a namespace of the cell is named twice", "cellWorld.namespaces",
         {"cellWorld__namespaces": ["mnt", "net", "mnt"]}),
        ("world-observed-number-past-2-53", "an observed inode number past 2^53 (it must be a decimal string)",
         "2^53", {"observed": {"host": {"root": {"ino": 2 ** 60}}}}),
    ]:
        case(name, description + " (issue 47.2: signed by the key given, it used to verify).",
             json.dumps(envelope(world(**patch))), "STATEMENT_INVALID", contains=[contains])
    case("key-not-a-key", "The public key file holds no key.", text, "KEY_INVALID", key="not a key\n")
    release_cases()


TARBALL = "dsh-capsule-0.1.0 source, as make dist would pack it\n"


def release(**patch):
    """The release statement make dist writes (capsule-host sign-release)."""
    import hashlib
    p = {"product": "dsh-capsule", "version": "0.1.0", "sourceDateEpoch": 1765000000}
    for k, v in patch.items():
        if v is None:
            p.pop(k)
        else:
            p[k] = v
    return json.dumps({"_type": "https://in-toto.io/Statement/v1",
                       "subject": [{"name": "dsh-capsule-0.1.0.tar.gz",
                                    "digest": {"sha256": hashlib.sha256(TARBALL.encode()).hexdigest()}}],
                       "predicateType": "https://dsh-capsule.dev/release/v1", "predicate": p},
                      sort_keys=True, separators=(",", ":")).encode()


def release_cases():
    """verify --subject TARBALL on the release statement (issue 52)."""
    def tarball(content=TARBALL, name="dsh-capsule-0.1.0.tar.gz"):
        return {"path": name, "type": "file", "content": content}
    good = json.dumps(envelope(release()))
    case("release-valid-verifies", "The release statement over the tarball it names verifies with "
         "--subject (the control for the release cases).", good, None, files=[tarball()],
         argv=["--subject", "$TMP/dsh-capsule-0.1.0.tar.gz"])
    case("release-tarball-replaced", "A tarball whose bytes differ from the one signed, under the signed "
         "name: refused, naming both digests.", good, "SUBJECT_MISMATCH", contains=["not the file that was signed"],
         files=[tarball(TARBALL + "one more line\n")], argv=["--subject", "$TMP/dsh-capsule-0.1.0.tar.gz"])
    case("release-tarball-renamed", "The signed bytes under another name: the statement names no such "
         "subject.", good, "SUBJECT_MISMATCH", contains=["names no subject dsh-capsule-9.9.9.tar.gz"],
         files=[tarball(name="dsh-capsule-9.9.9.tar.gz")], argv=["--subject", "$TMP/dsh-capsule-9.9.9.tar.gz"])
    case("release-subject-missing-file", "--subject naming no file.", good, "USAGE",
         contains=["cannot be read"], argv=["--subject", "$TMP/absent.tar.gz"])
    case("release-with-config", "A release statement checked against a capsule config: it names a "
         "tarball, not capsules.", good, "USAGE", contains=["--subject TARBALL"],
         files=[{"path": "c.json", "type": "file", "content": "{}"}], argv=["--config", "$TMP/c.json"])
    for name, description, contains, patch in [
        ("release-field-unknown", "a field the release predicate does not have", "builder",
         {"builder": "someone"}),
        ("release-version-missing", "no version", "version", {"version": None}),
        ("release-epoch-negative", "sourceDateEpoch is negative", "sourceDateEpoch", {"sourceDateEpoch": -1}),
        ("release-epoch-text", "sourceDateEpoch is a date in words", "sourceDateEpoch",
         {"sourceDateEpoch": "yesterday"}),
    ]:
        case(name, f"A signed release statement where {description}.", json.dumps(envelope(release(**patch))),
             "STATEMENT_INVALID", contains=[contains], files=[tarball()],
             argv=["--subject", "$TMP/dsh-capsule-0.1.0.tar.gz"])


if __name__ == "__main__":
    main()
