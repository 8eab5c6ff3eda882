/**
 * Signed OPA bundles for tests, built with the maintained npm libraries a pipeline without the `opa` binary
 * would use: `tar-stream` (tar) with node:zlib (gzip), and `jose` for the JWS of `.signatures.json`, in
 * OPA's layout (`{"signatures": [JWS]}`, its payload listing every file with its SHA-256; JSON files hashed
 * by content).
 */
import { gzipSync } from 'node:zlib';
import { CompactSign, type generateKeyPair } from 'jose';
import { pack } from 'tar-stream';
import { bundleFileHash } from '../opa-bundle';

export type PrivateKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

export async function tarGz(files: Record<string, string>): Promise<Buffer> {
  const p = pack();
  const chunks: Buffer[] = [];
  p.on('data', (c: unknown) => chunks.push(c as Buffer));
  const ended = new Promise<void>((r) => p.on('end', () => r()));
  for (const [name, content] of Object.entries(files)) p.entry({ name: `/${name}` }, content);
  p.finalize();
  await ended;
  return gzipSync(Buffer.concat(chunks));
}

/** `files` with a `.signatures.json` over all of them but `omit`, signed with `key` (`alg`), plus `claims`. */
export async function signed(files: Record<string, string>, key: PrivateKey, alg: string, o: { omit?: string[]; claims?: Record<string, unknown> } = {}): Promise<Record<string, string>> {
  const listed = Object.entries(files)
    .filter(([n]) => !o.omit?.includes(n))
    .map(([name, c]) => ({ name, hash: bundleFileHash(name, Buffer.from(c), 'SHA-256'), algorithm: 'SHA-256' }));
  const jws = await new CompactSign(Buffer.from(JSON.stringify({ files: listed, ...o.claims }))).setProtectedHeader({ alg, kid: 'ci-key' }).sign(key);
  return { ...files, '.signatures.json': JSON.stringify({ signatures: [jws] }) };
}
