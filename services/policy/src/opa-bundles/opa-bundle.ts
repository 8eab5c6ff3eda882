/**
 * An OPA bundle as a tenant's pipeline publishes it (docs/policy.md, "OPA bundles"): a `.tar.gz` with
 * `.manifest`, `data.json`, `*.rego` and `.signatures.json`, read and checked as OPA's bundle plugin
 * checks a signed bundle (OPA docs, management-bundles "Signing"):
 *
 * 1. `.signatures.json` must be there (`{"signatures": ["<JWS compact>"]}`, one signature): an unsigned
 *    bundle is refused, since the tenant registered a key.
 * 2. The JWS verifies with the tenant's public key (PEM SPKI; RS/PS/ES 256-512 or EdDSA, the `alg` of the
 *    JWS header); a `scope` in the payload must equal the registered one.
 * 3. The payload's `files` name exactly the bundle's files (`.signatures.json` aside), and each file's hash
 *    matches: raw bytes for policies, and for JSON files (`data.json`, `.manifest`) the hash of the parsed
 *    value with object keys ordered (compact JSON, as Go's encoder writes it), so whitespace does not count.
 *    Hash algorithms: SHA-256, SHA-384, SHA-512 (MD5 and SHA-1, which OPA also names, are refused).
 * 4. The policy is the one module of `package agw.custom` (the tenant's custom policy contract) outside the
 *    `*_test.rego` files; the tests are the `test_*` rules of every module, run as `opa test` runs them
 *    (`@agw/rego` runTests), and must all pass. `data.json`'s `config` object is the policy's `data.config`.
 *
 * The bundle's digest is the SHA-256 of the `.tar.gz` bytes; its revision is the `.manifest`'s.
 */
import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { type RegoModule, runTests } from '@agw/rego';
import { compactVerify, decodeProtectedHeader, importSPKI } from 'jose';
import { extract } from 'tar-stream';

export type RefusalReason = 'malformed' | 'unsigned' | 'bad_signature' | 'files_mismatch' | 'hash_mismatch' | 'no_policy' | 'tests_failed';

/** A bundle that must not be activated; the live policy stays. */
export class BundleRefusedError extends Error {
  constructor(
    readonly reason: RefusalReason,
    message: string,
    readonly failingTests: string[] = [],
  ) {
    super(message);
  }
}

export interface OpaBundle {
  /** `.manifest` revision ("" when the manifest has none) */
  revision: string;
  /** SHA-256 (hex) of the .tar.gz as fetched */
  digest: string;
  /** the policy module: path in the bundle and source */
  policy: RegoModule;
  /** `data.json`'s `config` object ({} when absent) */
  config: Record<string, unknown>;
  /** the tests that ran (all passed) */
  tests: string[];
  /** `kid` of the JWS header, when given */
  keyId: string;
}

const SIGNATURE_ALGS = new Set(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA']);
const HASHES: Record<string, string> = { 'SHA-256': 'sha256', 'SHA-384': 'sha384', 'SHA-512': 'sha512' };

/** The files of a .tar.gz (regular files only; paths without a leading "/" or "./"). */
export async function untar(gz: Buffer, maxBytes: number): Promise<Map<string, Buffer>> {
  let tar: Buffer;
  try {
    tar = gunzipSync(gz, { maxOutputLength: maxBytes });
  } catch (e) {
    throw new BundleRefusedError('malformed', `not a gzip file within ${maxBytes} bytes: ${(e as Error).message}`);
  }
  const files = new Map<string, Buffer>();
  const ex = extract();
  const done = new Promise<void>((resolve, reject) => {
    ex.on('entry', (header, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: unknown) => chunks.push(c as Buffer));
      stream.on('end', () => {
        if (header.type === 'file') {
          const name = header.name.replace(/^(\.\/|\/)+/, '');
          if (name.split('/').includes('..')) return reject(new BundleRefusedError('malformed', `file name ${header.name} leaves the bundle`));
          files.set(name, Buffer.concat(chunks));
        }
        next();
      });
      stream.resume();
    });
    ex.on('finish', resolve);
    ex.on('error', (e: Error) => reject(new BundleRefusedError('malformed', `not a tar archive: ${e.message}`)));
  });
  ex.end(tar);
  await done;
  return files;
}

/** Compact JSON with object keys ordered and <, >, & escaped, as Go's encoder writes the parsed value. */
export function canonicalBundleJson(v: unknown): string {
  const walk = (x: unknown): string => {
    if (Array.isArray(x)) return `[${x.map(walk).join(',')}]`;
    if (x && typeof x === 'object') {
      const o = x as Record<string, unknown>;
      return `{${Object.keys(o)
        .sort()
        .map((k) => `${str(k)}:${walk(o[k])}`)
        .join(',')}}`;
    }
    return typeof x === 'string' ? str(x) : JSON.stringify(x);
  };
  const str = (s: string) => JSON.stringify(s).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
  return walk(v);
}

/** The hash OPA's signer records for a file: structured (JSON) files by their canonical form, others raw. */
export function bundleFileHash(name: string, bytes: Buffer, algorithm: string): string {
  const h = HASHES[algorithm];
  if (!h) throw new BundleRefusedError('hash_mismatch', `${name}: hash algorithm ${algorithm} is not accepted (SHA-256, SHA-384, SHA-512)`);
  const structured = name.endsWith('.json') || name === '.manifest' || name.endsWith('/.manifest');
  let content: Buffer | string = bytes;
  if (structured) {
    try {
      content = canonicalBundleJson(JSON.parse(bytes.toString('utf8')));
    } catch {
      throw new BundleRefusedError('malformed', `${name} is not JSON`);
    }
  }
  return createHash(h).update(content).digest('hex');
}

/** Steps 1-3: the signature and every file's hash. Answers the JWS key id. */
export async function verifyBundleSignature(files: Map<string, Buffer>, publicKeyPem: string, scope?: string): Promise<string> {
  const sigFile = files.get('.signatures.json');
  if (!sigFile) throw new BundleRefusedError('unsigned', 'the bundle has no .signatures.json: unsigned bundles are refused');
  let jws: string;
  try {
    const parsed = JSON.parse(sigFile.toString('utf8')) as { signatures?: unknown };
    if (!Array.isArray(parsed.signatures) || parsed.signatures.length !== 1 || typeof parsed.signatures[0] !== 'string') throw new Error('one signature expected');
    jws = parsed.signatures[0];
  } catch (e) {
    throw new BundleRefusedError('bad_signature', `.signatures.json: ${(e as Error).message}`);
  }
  let header;
  try {
    header = decodeProtectedHeader(jws);
  } catch {
    throw new BundleRefusedError('bad_signature', '.signatures.json: not a JWS');
  }
  const alg = String(header.alg ?? '');
  if (!SIGNATURE_ALGS.has(alg)) throw new BundleRefusedError('bad_signature', `signature algorithm ${alg || '(none)'} is not accepted`);
  let payload: { files?: Array<{ name: string; hash: string; algorithm: string }>; scope?: string };
  try {
    const key = await importSPKI(publicKeyPem, alg);
    const { payload: bytes } = await compactVerify(jws, key, { algorithms: [alg] });
    payload = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch (e) {
    throw new BundleRefusedError('bad_signature', `the signature does not verify with the registered key: ${(e as Error).message}`);
  }
  if ((payload.scope ?? undefined) !== (scope || undefined)) throw new BundleRefusedError('bad_signature', `the signature's scope ${JSON.stringify(payload.scope ?? null)} is not the registered one`);
  const signed = new Map((payload.files ?? []).map((f) => [f.name.replace(/^\/+/, ''), f]));
  const present = [...files.keys()].filter((n) => n !== '.signatures.json');
  const unsigned = present.filter((n) => !signed.has(n));
  const missing = [...signed.keys()].filter((n) => !files.has(n));
  if (unsigned.length || missing.length) {
    throw new BundleRefusedError('files_mismatch', `the signed files are not the bundle's files${unsigned.length ? `; not signed: ${unsigned.join(', ')}` : ''}${missing.length ? `; signed but absent: ${missing.join(', ')}` : ''}`);
  }
  for (const name of present) {
    const f = signed.get(name)!;
    if (bundleFileHash(name, files.get(name)!, f.algorithm) !== f.hash) throw new BundleRefusedError('hash_mismatch', `${name}: its content is not the signed content`);
  }
  return String(header.kid ?? '');
}

/** Reads, verifies and tests a fetched bundle; a BundleRefusedError says why it must not be activated. */
export async function openOpaBundle(gz: Buffer, o: { publicKeyPem: string; scope?: string; maxBytes: number }): Promise<OpaBundle> {
  const digest = createHash('sha256').update(gz).digest('hex');
  const files = await untar(gz, o.maxBytes);
  const keyId = await verifyBundleSignature(files, o.publicKeyPem, o.scope);
  let revision = '';
  const manifest = files.get('.manifest');
  if (manifest) {
    const m = JSON.parse(manifest.toString('utf8')) as { revision?: unknown };
    revision = typeof m.revision === 'string' ? m.revision : '';
  }
  const dataFile = files.get('data.json');
  const data = dataFile ? (JSON.parse(dataFile.toString('utf8')) as Record<string, unknown>) : {};
  const config = data.config && typeof data.config === 'object' && !Array.isArray(data.config) ? (data.config as Record<string, unknown>) : {};
  const modules: RegoModule[] = [...files].filter(([n]) => n.endsWith('.rego')).map(([name, b]) => ({ name, source: b.toString('utf8') }));
  const policies = modules.filter((m) => !m.name.endsWith('_test.rego') && /^\s*package\s+agw\.custom\s*$/m.test(m.source));
  if (policies.length !== 1) throw new BundleRefusedError('no_policy', `the bundle must hold exactly one policy module of package agw.custom outside *_test.rego (found ${policies.length})`);
  const run = runTests(modules, { data });
  const bad = run.results.filter((r) => r.outcome !== 'pass');
  if (bad.length) {
    throw new BundleRefusedError(
      'tests_failed',
      `the bundle's tests fail: ${bad.map((r) => `${r.file}:${r.row}: ${r.name}: ${r.outcome.toUpperCase()}${r.error ? ` (${r.error})` : ''}`).join('; ')}`,
      bad.map((r) => r.name),
    );
  }
  return { revision, digest, policy: policies[0]!, config, tests: run.results.map((r) => r.name), keyId };
}
