/**
 * A self-signed certificate for an HTTPS webhook receiver in the test process, made for this run and
 * written to the CA file the e2e webhook service trusts (WEBHOOK_CA_FILE, re-read when it changes).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { E2E_WEBHOOK_CA_FILE } from './e2e-env';

export function trustedReceiverCert(): { cert: string; key: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'agw-e2e-webhook-'));
  try {
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
      '-subj', '/CN=agw-e2e-webhook-receiver', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
      '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'),
    ], { stdio: 'pipe' });
    const cert = { cert: readFileSync(path.join(dir, 'cert.pem'), 'utf8'), key: readFileSync(path.join(dir, 'key.pem'), 'utf8') };
    mkdirSync(path.dirname(E2E_WEBHOOK_CA_FILE), { recursive: true });
    writeFileSync(E2E_WEBHOOK_CA_FILE, cert.cert);
    return cert;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
