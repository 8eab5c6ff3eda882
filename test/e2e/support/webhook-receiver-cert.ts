/**
 * A self-signed certificate for an HTTPS webhook receiver in the test process, made for this run and
 * written to the CA file the e2e webhook service trusts (WEBHOOK_CA_FILE, re-read when it changes).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type SelfSignedCert, selfSignedCert } from '@agw/shared';
import { E2E_WEBHOOK_CA_FILE } from './e2e-env';

export function trustedReceiverCert(): SelfSignedCert {
  const cert = selfSignedCert({ commonName: 'agw-e2e-webhook-receiver', altNames: ['DNS:localhost', 'IP:127.0.0.1'] });
  mkdirSync(path.dirname(E2E_WEBHOOK_CA_FILE), { recursive: true });
  writeFileSync(E2E_WEBHOOK_CA_FILE, cert.cert);
  return cert;
}
