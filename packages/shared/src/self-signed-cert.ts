/**
 * A self-signed certificate made for this run by `openssl req -x509` (an EC P-256 key): what the HTTPS servers
 * that tests stand up (webhook receivers, SIEM collectors, bundle servers) present, and what their clients trust
 * (being self-signed, the certificate is its own CA).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface SelfSignedCert {
  /** PEM */
  cert: string;
  /** PEM, unencrypted */
  key: string;
}

/** A certificate for `commonName` with the subject alternative names `altNames` (`DNS:localhost`, `IP:127.0.0.1`, …). */
export function selfSignedCert(o: { commonName: string; altNames: string[]; days?: number }): SelfSignedCert {
  const dir = mkdtempSync(path.join(tmpdir(), 'agw-cert-'));
  try {
    execFileSync(
      'openssl',
      [
        'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', String(o.days ?? 2),
        '-subj', `/CN=${o.commonName}`,
        '-addext', `subjectAltName=${o.altNames.join(',')}`,
        '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'),
      ],
      { stdio: 'pipe' },
    );
    return { cert: readFileSync(path.join(dir, 'cert.pem'), 'utf8'), key: readFileSync(path.join(dir, 'key.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
