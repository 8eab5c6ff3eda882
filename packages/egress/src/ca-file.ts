/**
 * Extra trust for outbound TLS: the system roots plus an operator's CA file (a private PKI, or a test's
 * self-signed receiver), as one TLS context rebuilt when the file changes. A missing file means no extra
 * CA yet (node's defaults).
 */
import { statSync, readFileSync } from 'node:fs';
import { type SecureContext, createSecureContext, rootCertificates } from 'node:tls';

export function caFileContext(file: string | undefined): () => SecureContext | undefined {
  let cached: { mtimeMs: number; context: SecureContext } | undefined;
  return () => {
    if (!file) return undefined;
    let mtimeMs: number;
    try {
      mtimeMs = statSync(file).mtimeMs;
    } catch {
      cached = undefined;
      return undefined;
    }
    if (!cached || cached.mtimeMs !== mtimeMs) cached = { mtimeMs, context: createSecureContext({ ca: [...rootCertificates, readFileSync(file, 'utf8')] }) };
    return cached.context;
  };
}
