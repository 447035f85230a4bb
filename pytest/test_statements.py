"""Attestations a reviewer can verify (issue 27): capsule-host keygen, attest
--statement (an in-toto Statement v1 of the execution world, a SLSA
Verification Summary per capsule, DSSE envelopes signed with OpenSSL and
the same as Sigstore bundles), and verify. What we sign is checked by a
verifier this project did not write, Sigstore's @sigstore/verify (pinned in
pytest/sigstore-verify, run offline with the public key as the only trust
material), and every tampered variant is refused by ours and by theirs,
each with its reason."""
import base64
import json
import os
import re
import stat
import subprocess

import pytest
from pathlib import Path

from capsule_lab import REPO, cell_processes, npm_ci_once
from serve_driver import Serve
from test_serve import wait_for_log

VERIFIER = REPO / "pytest" / "sigstore-verify"


@pytest.fixture(scope="session")
def sigstore():
    """Installs the pinned @sigstore/verify and the Node its engines ask for
    (npm registry; a failure fails the test, it never skips)."""
    modules = npm_ci_once(VERIFIER, "@sigstore/verify", ".bin/node")
    node = modules / ".bin" / "node"

    def verify(path, public_key):
        p = subprocess.run([str(node), str(VERIFIER / "verify.mjs"), str(path), str(public_key)],
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        return json.loads(p.stdout)
    return verify


def keygen(lab, algorithm="ed25519", name="gate"):
    res = lab.run("keygen", "--out", lab.tmp / name, "--algorithm", algorithm)
    assert res.rc == 0, res
    return lab.tmp / f"{name}.key", lab.tmp / f"{name}.pub", res


def numbers_past_2_53(v, path=""):
    """Paths of the numbers in v that a JavaScript reader would round."""
    if isinstance(v, bool):
        return []
    if isinstance(v, int):
        return [path] if abs(v) > 2 ** 53 else []
    if isinstance(v, dict):
        return [p for k, x in v.items() for p in numbers_past_2_53(x, f"{path}.{k}")]
    if isinstance(v, list):
        return [p for i, x in enumerate(v) for p in numbers_past_2_53(x, f"{path}[{i}]")]
    return []


def ssh_keygen_fingerprint(lab, pub):
    """The key's SHA256 fingerprint as OpenSSH's ssh-keygen -l prints it
    (the SPKI PEM converted to OpenSSH form with python3-cryptography)."""
    from cryptography.hazmat.primitives import serialization
    ssh = serialization.load_pem_public_key(pub.read_bytes()).public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    line = lab.tmp / f"{pub.stem}.ssh"
    line.write_bytes(ssh + b"\n")
    return subprocess.run(["ssh-keygen", "-l", "-E", "sha256", "-f", str(line)],
                          capture_output=True, text=True, check=True).stdout.split()[1]


def attest(lab, config=None, key=None, env=None):
    out = lab.tmp / "statements"
    args = ["attest", *(["--config", config] if config else []), "--statement", out]
    res = lab.run(*args, *(["--key", key] if key else []), env=env)
    return res, out


@pytest.mark.parametrize("algorithm", ["ed25519", "ecdsa-p256"])
def test_keygen_writes_a_private_key_0600_and_never_prints_it(lab, algorithm):
    key, pub, res = keygen(lab, algorithm)
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert "PRIVATE KEY" in key.read_text() and "PUBLIC KEY" in pub.read_text()
    assert "PRIVATE" not in res.stdout + res.stderr
    assert res.json["algorithm"] == algorithm and re.fullmatch(r"SHA256:[A-Za-z0-9+/]{43}", res.json["keyid"])
    again = lab.run("keygen", "--out", lab.tmp / "gate")
    assert again.json["error"]["code"] == "KEY_INVALID" and key.read_text() == key.read_text()


@pytest.mark.parametrize("algorithm", ["ed25519", "ecdsa-p256"])
def test_signed_statements_verify_with_ours_and_with_sigstores(lab, sigstore, algorithm):
    key, pub, _ = keygen(lab, algorithm)
    _, _, entry = lab.capsule(guest="echo")
    config = lab.config([entry])
    res, out = attest(lab, config, key)
    assert res.rc == 0, res
    cap_id = json.loads((lab.tmp / "capsule1" / "capsule.json").read_text())["id"]
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(f"{s}.{k}.json" for s in ("world", f"vsa-{cap_id}")
                           for k in ("intoto", "dsse", "sigstore")), names
    world = json.loads((out / "world.intoto.json").read_text())
    vsa = json.loads((out / f"vsa-{cap_id}.intoto.json").read_text())
    assert world["_type"] == "https://in-toto.io/Statement/v1"
    assert world["predicateType"] == "https://dsh-capsule.dev/attestation/execution-world/v1"
    assert {s["name"] for s in world["subject"]} == {f"{cap_id}/guest.mjs", f"{cap_id}/capsule.json"}
    assert vsa["predicate"]["verificationResult"] == "PASSED"
    world_digest = __import__("hashlib").sha256((out / "world.intoto.json").read_bytes()).hexdigest()
    assert vsa["predicate"]["inputAttestations"] == [{"uri": f"file://{out.resolve()}/world.intoto.json",
                                                      "digest": {"sha256": world_digest}}]
    assert vsa["predicate"]["verifiedLevels"] == ["DSH_CAPSULE_ADMITTED_V1"]
    canonical = json.dumps(json.loads(config.read_text()), sort_keys=True, separators=(",", ":"),
                           ensure_ascii=False)  # RFC 8785 for a config's ASCII keys and integers
    assert vsa["predicate"]["policy"]["digest"]["sha256"] == __import__("hashlib").sha256(
        canonical.encode()).hexdigest()
    for f in sorted(out.glob("*.dsse.json")) + sorted(out.glob("*.sigstore.json")):
        ours = lab.run("verify", f, "--key", pub, "--config", config)
        assert ours.rc == 0 and ours.json["verified"], (f.name, ours)
        assert sigstore(f, pub) == {"ok": True}, f.name
    assert lab.leftovers() == []


@pytest.mark.parametrize("algorithm", ["ed25519", "ecdsa-p256"])
def test_keyid_is_the_ssh_fingerprint_go_verifiers_match(lab, algorithm):
    """Issue 34: the keyid was the hex SHA-256 of the key's DER. Go's DSSE
    verifier (go-securesystemslib, under sigstore-go and cosign) computes a
    given key's id as ssh.FingerprintSHA256 and skips any signature whose
    non-empty keyid differs: our valid signature was never tried there
    ("Found: 0"). The id is now that fingerprint, the one `ssh-keygen -l`
    (OpenSSH, the reference) prints for the key, in the keygen report, the
    envelope and the bundle's hint alike. (No Go toolchain or DSSE module
    with that rule reaches this machine offline; OpenSSH computes the
    fingerprint Go compares.)"""
    key, pub, made = keygen(lab, algorithm)
    printed = ssh_keygen_fingerprint(lab, pub)
    assert made.json["keyid"] == printed, (made.json["keyid"], printed)
    _, _, entry = lab.capsule(guest="echo")
    res, out = attest(lab, lab.config([entry]), key)
    assert res.rc == 0, res
    env = json.loads((out / "world.dsse.json").read_text())
    bundle = json.loads((out / "world.sigstore.json").read_text())
    assert [s["keyid"] for s in env["signatures"]] == [printed]
    assert bundle["verificationMaterial"]["publicKey"] == {"hint": printed}
    assert bundle["dsseEnvelope"]["signatures"][0]["keyid"] == printed
    assert lab.run("verify", out / "world.dsse.json", "--key", pub).json["keyid"] == printed


def test_statement_fields_conform_to_slsa_vsa_and_survive_a_javascript_reader(lab):
    """Issue 34's field conformance: a FAILED summary names its result in
    verifiedLevels (SLSA's SlsaResult "FAILED", it was []); a summary with
    no world attested has no inputAttestations (it was []); every uri is an
    absolute file:// URI, percent-encoded (a space or '#' in a path broke
    them); and no number in a statement is past 2^53, where a JavaScript
    reader (actions/attest, @sigstore/*) rounds it (mtimeNs was)."""
    from urllib.parse import unquote, urlparse
    key, pub, _ = keygen(lab)
    odd = lab.tmp / "a dir #1 %20"
    odd.mkdir()
    _, _, entry = lab.capsule(guest="echo")
    config = odd / "caps ules.json"
    config.write_text(lab.config([entry]).read_text())
    res, out = attest(lab, config, key)
    assert res.rc == 0, res
    world = json.loads((out / "world.intoto.json").read_text())
    [vsa] = [json.loads(p.read_text()) for p in out.glob("vsa-*.intoto.json")]
    uri = vsa["predicate"]["policy"]["uri"]
    assert uri.startswith("file:///") and " " not in uri and "#" not in uri, uri
    assert unquote(urlparse(uri).path) == str(config.resolve()), uri
    for u in (vsa["predicate"]["resourceUri"], vsa["predicate"]["inputAttestations"][0]["uri"]):
        assert u.startswith("file:///") and Path(unquote(urlparse(u).path)).exists(), u

    assert numbers_past_2_53(world) == [] and numbers_past_2_53(vsa) == [], numbers_past_2_53(world)
    assert isinstance(world["predicate"]["observed"]["identities"]["node"]["mtimeNs"], str)
    assert set(world["predicate"]["observed"]["kernelAbi"]) == {"i386", "x32"}  # said, not assumed

    # A capsule refused before its world: FAILED, named, no input attestation.
    _, _, bad = lab.capsule(guest="echo", integrity="short")
    out2 = lab.tmp / "refused"
    res = lab.run("attest", "--config", lab.config([bad]), "--statement", out2, "--key", key)
    assert res.rc == 1, res
    [failed] = [json.loads(p.read_text()) for p in out2.glob("vsa-*.intoto.json")]
    assert failed["predicate"]["verifiedLevels"] == ["FAILED"], failed["predicate"]
    assert "inputAttestations" not in failed["predicate"], failed["predicate"]


def slsa_and_in_toto_field_rules(statement):
    """What in-toto Statement v1 and SLSA VSA v1 require of the fields this
    host writes; returns the broken rules (empty: conforms)."""
    from urllib.parse import urlparse
    broken = []
    if statement.get("_type") != "https://in-toto.io/Statement/v1":
        broken.append("_type")
    for s in statement.get("subject", []):
        if not s.get("name") or not re.fullmatch(r"[0-9a-f]{64}", s.get("digest", {}).get("sha256", "")):
            broken.append(f"subject {s}")
    if not statement.get("subject"):
        broken.append("no subject")

    def absolute_file_uri(u):
        parsed = urlparse(u)
        return parsed.scheme == "file" and parsed.path.startswith("/") and " " not in u and "#" not in u

    if numbers_past_2_53(statement):
        broken.append("a number past 2^53")
    if statement.get("predicateType") != "https://slsa.dev/verification_summary/v1":
        return broken
    p = statement["predicate"]
    if not p.get("verifier", {}).get("id"):
        broken.append("verifier.id")
    if not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", p.get("timeVerified", "")):
        broken.append("timeVerified")
    for u in [p.get("resourceUri"), p.get("policy", {}).get("uri")] + [a.get("uri") for a in p.get("inputAttestations", [])]:
        if not u or not absolute_file_uri(u):
            broken.append(f"uri {u}")
    if "inputAttestations" in p and not p["inputAttestations"]:
        broken.append("inputAttestations [] (absent, or named)")
    result = p.get("verificationResult")
    levels = p.get("verifiedLevels")
    if result not in ("PASSED", "FAILED") or not levels or (("FAILED" in levels) != (result == "FAILED")):
        broken.append(f"verificationResult {result} / verifiedLevels {levels}")
    if any(lv.startswith("SLSA_") for lv in levels or []):
        broken.append("a custom level named SLSA_")
    return broken


@pytest.mark.parametrize("algorithm", ["ed25519", "ecdsa-p256"])
def test_every_statement_kind_with_every_offline_consumer(lab, sigstore, algorithm, capsys):
    """Issue 34's interop table: every statement kind the host writes (the
    world, a PASSED and a FAILED summary), as envelope and as bundle, by
    every independent consumer that runs offline here: our verify,
    @sigstore/verify 4.1.3 with @sigstore/bundle's schema (bundleFromJSON),
    the key id Go's DSSE verifier matches (OpenSSH's fingerprint, by
    ssh-keygen), and the in-toto / SLSA VSA field rules."""
    key, pub, made = keygen(lab, algorithm)
    fingerprint = ssh_keygen_fingerprint(lab, pub)
    _, _, ok_entry = lab.capsule(guest="echo", manifest={"id": "corpus.passes"})
    passed_dir = lab.tmp / "passed"
    res = lab.run("attest", "--config", lab.config([ok_entry]), "--statement", passed_dir, "--key", key)
    assert res.rc == 0, res
    _, _, bad_entry = lab.capsule(guest="echo", manifest={"id": "corpus.refused"})
    failed_dir = lab.tmp / "failed"
    res = lab.run("attest", "--config", lab.config([bad_entry], maxDescriptionBytes=8), "--statement",
                  failed_dir, "--key", key)
    assert res.rc == 1 and res.json["error"]["code"] == "DESCRIBE_LIMIT", res
    kinds = {"world": passed_dir / "world", "summary PASSED": passed_dir / "vsa-corpus.passes",
             "summary FAILED": failed_dir / "vsa-corpus.refused"}
    rows = []
    for kind, stem in kinds.items():
        statement = json.loads(Path(f"{stem}.intoto.json").read_text())
        broken = slsa_and_in_toto_field_rules(statement)
        assert broken == [], (kind, broken)
        for container in ("dsse", "sigstore"):
            f = Path(f"{stem}.{container}.json")
            doc = json.loads(f.read_text())
            keyid = (doc.get("dsseEnvelope") or doc)["signatures"][0]["keyid"]
            ours = lab.run("verify", f, "--key", pub)
            want_ours = "VERIFICATION_FAILED" if kind == "summary FAILED" else None
            assert ours.code == want_ours, (kind, container, ours)
            assert sigstore(f, pub) == {"ok": True}, (kind, container)
            assert keyid == fingerprint, (kind, container, keyid)
            if container == "sigstore":
                assert doc["verificationMaterial"]["publicKey"] == {"hint": fingerprint}
            rows.append((kind, container, "accept" if want_ours is None else "refuse: VERIFICATION_FAILED",
                         "accept", "accept", "conforms"))
    with capsys.disabled():
        print(f"\n{algorithm}: statement | container | capsule-host verify | @sigstore/verify+bundle | "
              f"Go keyid rule | in-toto/SLSA fields")
        for r in rows:
            print(" | ".join(r))


def sign_raw(key, data, algorithm):
    """A signature over data itself (not over DSSE's PAE), with OpenSSL."""
    message = key.parent / "raw-payload"
    message.write_bytes(data)  # pkeyutl -rawin reads a file, not a pipe
    args = (["openssl", "pkeyutl", "-sign", "-rawin", "-inkey", str(key), "-in", str(message)]
            if algorithm == "ed25519" else ["openssl", "dgst", "-sha256", "-sign", str(key), str(message)])
    return subprocess.run(args, capture_output=True, check=True).stdout


def resign(envelope, statement, key):
    """envelope again over statement (encoded as this host encodes a
    payload), signed with the Ed25519 key, its payloadType and keyid kept:
    what a signer holding the key could have signed instead."""
    from cryptography.hazmat.primitives.serialization import load_pem_private_key
    payload = json.dumps(statement, sort_keys=True, separators=(",", ":")).encode()
    ptype = envelope["payloadType"].encode()
    pae = b"DSSEv1 %d %s %d %s" % (len(ptype), ptype, len(payload), payload)
    sig = load_pem_private_key(key.read_bytes(), None).sign(pae)
    return dict(envelope, payload=base64.b64encode(payload).decode(),
                signatures=[dict(envelope["signatures"][0], sig=base64.b64encode(sig).decode())])


def tamper(envelope, variant, key, other_pub):
    """The variant of a signed envelope, and the public key to check it with."""
    env = json.loads(json.dumps(envelope))
    payload = base64.b64decode(env["payload"])
    if variant == "payload":
        env["payload"] = base64.b64encode(payload.replace(b'"PASSED"', b'"FAILED"')).decode()
    elif variant == "payloadType":
        env["payloadType"] = "application/json"
    elif variant == "rawSignature":
        env["signatures"][0]["sig"] = base64.b64encode(sign_raw(key, payload, "ed25519")).decode()
    elif variant == "reordered":
        bad = {"keyid": env["signatures"][0]["keyid"], "sig": base64.b64encode(b"\1" * 64).decode()}
        env["signatures"] = [bad, env["signatures"][0]]
    elif variant == "duplicated":
        env["signatures"] = env["signatures"] * 2
    return env, other_pub if variant == "wrongKey" else None


@pytest.mark.parametrize("variant,code", [("payload", "SIGNATURE_INVALID"),
                                          ("payloadType", "ENVELOPE_PAYLOAD_TYPE"),
                                          ("wrongKey", "SIGNATURE_INVALID"),
                                          ("rawSignature", "SIGNATURE_INVALID"),
                                          ("reordered", "ENVELOPE_INVALID"),
                                          ("duplicated", "ENVELOPE_INVALID")])
def test_tampered_variants_are_refused_by_ours_and_by_sigstores(lab, sigstore, variant, code):
    key, pub, _ = keygen(lab)
    _, other_pub, _ = keygen(lab, name="other")
    _, _, entry = lab.capsule(guest="echo")
    res, out = attest(lab, lab.config([entry]), key)
    assert res.rc == 0, res
    vsa = next(out.glob("vsa-*.dsse.json"))
    env, check_key = tamper(json.loads(vsa.read_text()), variant, key, other_pub)
    check_key = check_key or pub
    for form in ("dsse", "sigstore"):
        doc = env if form == "dsse" else {
            "mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
            "verificationMaterial": {"publicKey": {"hint": env["signatures"][0]["keyid"]},
                                     "tlogEntries": [], "timestampVerificationData": {"rfc3161Timestamps": []}},
            "dsseEnvelope": env}
        f = lab.tmp / f"tampered.{form}.json"
        f.write_text(json.dumps(doc))
        ours = lab.run("verify", f, "--key", check_key)
        assert ours.rc == 1 and ours.json["error"]["code"] == code, (form, ours)
        theirs = sigstore(f, check_key)
        assert theirs["ok"] is False and theirs["reason"], (form, theirs)


def test_a_bundle_whose_key_has_no_hint_verifies_with_ours_and_with_sigstores(lab, sigstore):
    """Issue 47.10: proto3's JSON omits an empty string, so Sigstore's own
    encoders write a key with no hint as "publicKey": {}. Sigstore's
    verifier accepts that bundle; ours refused it. Both accept it now, and
    both still refuse it under another key."""
    key, pub, _ = keygen(lab)
    _, other_pub, _ = keygen(lab, name="other")
    _, _, entry = lab.capsule(guest="echo")
    res, out = attest(lab, lab.config([entry]), key)
    assert res.rc == 0, res
    bundle = json.loads(next(out.glob("vsa-*.sigstore.json")).read_text())
    bundle["verificationMaterial"]["publicKey"] = {}
    f = lab.tmp / "no-hint.sigstore.json"
    f.write_text(json.dumps(bundle))
    assert sigstore(f, pub) == {"ok": True}
    ours = lab.run("verify", f, "--key", pub)
    assert ours.rc == 0 and ours.json["verified"] is True, ours
    assert sigstore(f, other_pub)["ok"] is False
    assert lab.run("verify", f, "--key", other_pub).json["error"]["code"] == "SIGNATURE_INVALID"


def test_a_summary_holds_for_its_policy_however_the_config_is_formatted(lab, sigstore):
    """Issue 48.7: verify --config compared the config file's bytes, so
    reformatting a config broke every summary written under it. The digest
    is now of the policy's RFC 8785 canonical form; a summary that names
    the bytes' digest (written before) still verifies against those bytes;
    a changed policy is still POLICY_DRIFT."""
    key, pub, _ = keygen(lab)
    _, _, entry = lab.capsule(guest="echo")
    config = lab.config([entry])
    res, out = attest(lab, config, key)
    assert res.rc == 0, res
    summary = next(out.glob("vsa-*.dsse.json"))
    doc = json.loads(config.read_text())
    config.write_text(json.dumps(dict(reversed(list(doc.items()))), indent=7) + "\n\n")
    ok = lab.run("verify", summary, "--key", pub, "--config", config)
    assert ok.rc == 0 and ok.json["verified"], ok
    # A summary written before (its policy digest the file's bytes'),
    # signed again here with the same key: it verifies against those bytes.
    import hashlib
    env = json.loads(summary.read_text())
    statement = json.loads(base64.b64decode(env["payload"]))
    statement["predicate"]["policy"]["digest"]["sha256"] = hashlib.sha256(config.read_bytes()).hexdigest()
    older = lab.tmp / "older.dsse.json"
    older.write_text(json.dumps(resign(env, statement, key)))
    again = lab.run("verify", older, "--key", pub, "--config", config)
    assert again.rc == 0 and again.json["verified"], again
    doc["maxDescriptionBytes"] = 4000
    config.write_text(json.dumps(doc))
    assert lab.run("verify", summary, "--key", pub, "--config", config).code == "POLICY_DRIFT"
    assert lab.run("verify", older, "--key", pub, "--config", config).code == "POLICY_DRIFT"


def test_unsigned_statements_say_so(lab):
    res, out = attest(lab)
    assert res.rc == 0, res
    assert sorted(p.name for p in out.iterdir()) == ["world.intoto.json"]
    assert "NOT signed" in res.stderr and '"signed":false' in res.stderr
    world = json.loads((out / "world.intoto.json").read_text())
    assert world["subject"][0]["name"] == "capsule-host"


def test_the_key_can_come_from_the_environment(lab, sigstore):
    key, pub, _ = keygen(lab)
    res, out = attest(lab, env={"CAPSULE_ATTEST_KEY": key.read_text()})
    assert res.rc == 0 and '"signed":true' in res.stderr, res
    assert sigstore(out / "world.sigstore.json", pub) == {"ok": True}
    assert lab.run("verify", out / "world.dsse.json", "--key", pub).rc == 0


def test_a_failed_activation_states_a_failed_summary_with_its_code(lab, sigstore):
    key, pub, _ = keygen(lab)
    _, _, entry = lab.capsule(guest="echo", integrity="short")
    res, out = attest(lab, lab.config([entry]), key)
    assert res.rc == 1 and res.json["error"]["code"] == "MANIFEST_INVALID", res
    [vsa] = list(out.glob("vsa-*.intoto.json"))
    p = json.loads(vsa.read_text())["predicate"]
    assert p["verificationResult"] == "FAILED" and p["failure"]["code"] == "MANIFEST_INVALID"
    assert not (out / "world.intoto.json").exists()  # no world was attested
    assert sigstore(next(out.glob("vsa-*.sigstore.json")), pub) == {"ok": True}
    # Issue 34: verify said "verified": true (exit 0) for the host's own
    # FAILED summary; a CI step reading its status passed a refused capsule.
    for f in sorted(out.glob("vsa-*.dsse.json")) + sorted(out.glob("vsa-*.sigstore.json")):
        res = lab.run("verify", f, "--key", pub)
        assert res.rc != 0 and res.json["error"]["code"] == "VERIFICATION_FAILED", (f.name, res)
        assert "MANIFEST_INVALID" in res.json["error"]["message"]


@pytest.mark.parametrize("code,limits,policy", [
    ("DESCRIBE_LIMIT", {"maxDescriptionBytes": 8}, None),
    ("POLICY_ID_MISMATCH", {}, {"capsuleId": "corpus.other"}),
], ids=["describe-limit", "policy-mismatch"])
def test_verify_exits_non_zero_on_a_summary_of_a_refused_capsule(lab, code, limits, policy):
    """Issue 34, as reported: activate with maxDescriptionBytes 8, state it
    signed, verify the summary: exit 0 and "verified": true before. Now
    VERIFICATION_FAILED, quoting the refusal the summary records. A summary
    of an early failure (a policy that names another capsule) names only
    subjects whose digests were read, so it reads as a statement, and fails
    the same way (issue 34: its capsule.json once had an empty sha256)."""
    key, pub, _ = keygen(lab)
    _, _, entry = lab.capsule(guest="echo", policy=policy)
    res, out = attest(lab, lab.config([entry], **limits), key)
    assert res.rc == 1 and res.json["error"]["code"] == code, res
    [vsa] = list(out.glob("vsa-*.dsse.json"))
    statement = json.loads(base64.b64decode(json.loads(vsa.read_text())["payload"]))
    assert statement["predicate"]["verificationResult"] == "FAILED"
    assert all(re.fullmatch(r"[0-9a-f]{64}", s["digest"]["sha256"]) for s in statement["subject"]), statement
    for f in (vsa, vsa.with_name(vsa.name.replace(".dsse.", ".sigstore."))):
        got = lab.run("verify", f, "--key", pub)
        assert got.rc == 1 and got.json["error"]["code"] == "VERIFICATION_FAILED", got
        assert code in got.json["error"]["message"]


def test_an_encrypted_key_is_refused_without_a_prompt_even_on_a_terminal(lab):
    """With a controlling terminal, OpenSSL's default asks for the passphrase
    there and waits forever (issue 36.6): attest must instead refuse the key
    at once, print no prompt, and write nothing."""
    import pty
    import select
    import time
    key = lab.tmp / "encrypted.key"
    subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-aes-256-cbc", "-pass", "pass:x",
                    "-out", str(key)], check=True, capture_output=True)
    key.chmod(0o600)
    out = lab.tmp / "statements"
    from capsule_lab import BIN
    pid, fd = pty.fork()
    if pid == 0:  # the child's controlling terminal is the pty
        os.execve(str(BIN / "capsule-host"), ["capsule-host", "attest", "--statement", str(out),
                                              "--key", str(key)],
                  {"PATH": os.environ["PATH"], "TMPDIR": str(lab.stage)})
    text, deadline = b"", time.monotonic() + 20
    while time.monotonic() < deadline:
        if select.select([fd], [], [], 0.2)[0]:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            text += chunk
        elif os.waitpid(pid, os.WNOHANG)[0]:
            break
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        raise AssertionError(f"capsule-host waited on the terminal: {text!r}")
    os.close(fd)
    assert b"KEY_INVALID" in text and b"is encrypted" in text, text
    assert b"pass phrase" not in text.lower() and b"passphrase:" not in text.lower(), text
    assert not out.exists() and lab.leftovers() == []


@pytest.mark.parametrize("bad_id", ["x/../../escaped", "id\nwith\x1b[31mescape", ".hidden"])
def test_a_refused_manifest_id_never_names_a_file(lab, sigstore, bad_id):
    """A manifest id the host refuses (MANIFEST_INVALID) was used as the
    summary's file name: `x/../../escaped` wrote escaped.* outside DIR
    (issue 36.4). The summary is named from validated data (the policy's
    capsuleId), stays inside DIR and still states the failure, with only
    subjects whose digests were read."""
    key, pub, _ = keygen(lab)
    root, _, entry = lab.capsule(guest="echo")
    manifest = json.loads((root / "capsule.json").read_text())
    policy_id = entry["policy"]["capsuleId"]
    manifest["id"] = bad_id
    (root / "capsule.json").write_text(json.dumps(manifest))
    out = lab.tmp / "a" / "b" / "statements"
    out.parent.mkdir(parents=True)
    config = lab.config([entry])
    before = {p for p in lab.tmp.rglob("*")}
    res = lab.run("attest", "--config", config, "--statement", out, "--key", key)
    assert res.rc == 1 and res.json["error"]["code"] == "MANIFEST_INVALID", res
    new = {p for p in lab.tmp.rglob("*")} - before
    assert all(p == out or p.parent == out for p in new), sorted(map(str, new))
    assert sorted(p.name for p in out.iterdir()) == [f"vsa-{policy_id}.{k}.json" for k in ("dsse", "intoto", "sigstore")]
    statement = json.loads((out / f"vsa-{policy_id}.intoto.json").read_text())
    assert statement["predicate"]["verificationResult"] == "FAILED"
    # The id was refused before integrity was read: the manifest's bytes are
    # the one subject whose digest is known.
    assert statement["subject"] == [{"name": f"{policy_id}/capsule.json", "digest": {
        "sha256": __import__("hashlib").sha256((root / "capsule.json").read_bytes()).hexdigest()}}]
    assert sigstore(out / f"vsa-{policy_id}.sigstore.json", pub) == {"ok": True}


def test_an_envelope_past_the_size_bound_is_refused_unread(lab):
    _, pub, _ = keygen(lab)
    huge = lab.tmp / "huge.json"
    huge.write_text('{"payload":"' + "A" * (5 << 20) + '"}')
    res = lab.run("verify", huge, "--key", pub)
    assert res.json["error"]["code"] == "ENVELOPE_INVALID" and "4194304" in res.json["error"]["message"]


def test_call_states_its_activation_before_the_call(lab):
    key, pub, _ = keygen(lab)
    _, _, entry = lab.capsule(guest="echo")
    config = lab.config([entry])
    out = lab.tmp / "statements"
    res = lab.run("call", "--config", config, "corpus_echo", "--input", '{"text": "x"}',
                  "--statement", out, "--key", key)
    assert res.rc == 0 and res.json["result"]["isError"] is False, res
    assert lab.run("verify", next(out.glob("vsa-*.dsse.json")), "--key", pub, "--config", config).rc == 0
    assert lab.leftovers() == []


def test_serve_restates_the_world_when_its_snapshot_is_adopted(lab, sigstore):
    """serve --statement wrote the world at activation, while the startup
    snapshot was still building; once adopted, the world and every summary
    are written again (whole files renamed into place, nothing else left in
    the directory) saying the snapshot is in use, with its digest, and the
    restated envelopes verify with ours and with Sigstore's."""
    key, pub, _ = keygen(lab)
    _, _, entry = lab.capsule(guest="echo")
    config = lab.config([entry])
    out = lab.tmp / "statements"
    s = Serve(lab, config, extra_args=["--statement", out, "--key", key])
    s.initialize()
    wait_for_log(s, "world restated after the snapshot")
    log = s.stderr_path.read_text()
    snapshot_sha = log.split("startup snapshot in use (", 1)[1].split(")", 1)[0]
    assert log.count("capsule-host: statements: ") == 2, log
    world = json.loads((out / "world.intoto.json").read_text())
    state = world["predicate"]["observed"]["startupSnapshot"]
    assert state["state"] == "in use" and state["sha256"] == snapshot_sha, state
    cap_id = json.loads((lab.tmp / "capsule1" / "capsule.json").read_text())["id"]
    vsa = json.loads((out / f"vsa-{cap_id}.intoto.json").read_text())
    world_digest = __import__("hashlib").sha256((out / "world.intoto.json").read_bytes()).hexdigest()
    assert vsa["predicate"]["inputAttestations"][0]["digest"]["sha256"] == world_digest
    assert sorted(p.name for p in out.iterdir()) == sorted(
        f"{stem}.{kind}.json" for stem in ("world", f"vsa-{cap_id}") for kind in ("intoto", "dsse", "sigstore"))
    for f in sorted(out.glob("*.dsse.json")) + sorted(out.glob("*.sigstore.json")):
        ours = lab.run("verify", f, "--key", pub, "--config", config)
        assert ours.rc == 0 and ours.json["verified"], (f.name, ours)
        assert sigstore(f, pub) == {"ok": True}, f.name
    assert s.close() == 0
    assert lab.leftovers() == [] and cell_processes() == []


def test_the_world_states_the_namespaces_each_cell_holds_and_verify_compares_them(lab):
    """Issue 51: cellWorld.namespaces, a world field added as one schema row
    and its source. It names the kinds of namespace the cell was measured
    not to share with the host; a world signed with one fewer (a cell that
    shared the host's network) is not this world."""
    key, pub, _ = keygen(lab)
    _, _, entry = lab.capsule(guest="echo")
    config = lab.config([entry])
    res, out = attest(lab, config, key)
    assert res.rc == 0, res
    statement = json.loads((out / "world.intoto.json").read_text())
    world = statement["predicate"]
    assert world["cellWorld"]["namespaces"] == ["ipc", "mnt", "net", "pid", "user", "uts"]
    assert world["cellWorld"]["namespaces"] == sorted(world["observed"]["cellNamespaces"])
    same = lab.run("verify", out / "world.dsse.json", "--key", pub, "--config", config)
    assert same.rc == 0, same
    world["cellWorld"]["namespaces"].remove("net")
    forged = lab.tmp / "shared-net.dsse.json"
    forged.write_text(json.dumps(resign(json.loads((out / "world.dsse.json").read_text()), statement, key)))
    res = lab.run("verify", forged, "--key", pub, "--config", config)
    assert res.rc == 1 and res.json["error"]["code"] == "WORLD_DRIFT", res
    assert "cellWorld.namespaces" in res.json["error"]["message"], res
