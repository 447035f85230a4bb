// Sigstore's own verifier (@sigstore/verify, pinned in package.json),
// offline: the public key is the only trust material, no transparency log,
// no timestamp authority. Usage: node verify.mjs FILE PUBLIC_KEY_PEM
// FILE is a Sigstore bundle, or a bare DSSE envelope (wrapped here in the
// bundle a public-key signer makes, keyed by the signature's keyid).
// Prints {"ok":true} or {"ok":false,"reason":"..."}; exits 0 either way.
import fs from 'node:fs';
import { bundleFromJSON } from '@sigstore/bundle';
import { crypto } from '@sigstore/core';
import { Verifier, toSignedEntity, toTrustMaterial } from '@sigstore/verify';

const [file, keyPath] = process.argv.slice(2);
try {
  let json = JSON.parse(fs.readFileSync(file, 'utf8'));
  if (!json.mediaType) {
    json = {
      mediaType: 'application/vnd.dev.sigstore.bundle.v0.3+json',
      verificationMaterial: { publicKey: { hint: json.signatures?.[0]?.keyid ?? '' },
                              tlogEntries: [], timestampVerificationData: { rfc3161Timestamps: [] } },
      dsseEnvelope: json,
    };
  }
  const bundle = bundleFromJSON(json);
  const publicKey = crypto.createPublicKey(fs.readFileSync(keyPath, 'utf8'));
  const trust = toTrustMaterial(
    { certificateAuthorities: [], timestampAuthorities: [], tlogs: [], ctlogs: [] },
    () => ({ publicKey, validFor: () => true }));
  const verifier = new Verifier(trust, { tlogThreshold: 0, ctlogThreshold: 0, timestampThreshold: 0 });
  verifier.verify(toSignedEntity(bundle));
  console.log(JSON.stringify({ ok: true }));
} catch (e) {
  console.log(JSON.stringify({ ok: false, reason: `${e.name}: ${e.code ?? ''} ${e.message}` }));
}
