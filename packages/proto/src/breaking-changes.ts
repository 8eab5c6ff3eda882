/**
 * What in the contract (proto/) would break the release before it (docs/architecture.md, "Changing a
 * contract"): `buf breaking` (its FILE rules) against the image of the released contract
 * (contract/released.json, written by `pnpm --filter @agw/proto contract:release` when a release is cut). The
 * one change it reports that the rule allows is the deletion of a field the released contract had already
 * deprecated (its number and name reserved from then on): that field was written beside its replacement for
 * one release. Not part of the package's runtime (the index does not export it); its test runs it.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

/** A change `buf breaking` reports, as its JSON error format gives it. */
export interface BreakingChange {
  path: string;
  start_line: number;
  type: string;
  message: string;
}

interface ImageField {
  name: string;
  number: number;
  options?: { deprecated?: boolean };
}
interface ImageMessage {
  name: string;
  field?: ImageField[];
  nestedType?: ImageMessage[];
}
interface Image {
  file: Array<{ package?: string; messageType?: ImageMessage[] }>;
}

const PACKAGE_DIR = path.resolve(__dirname, '..');
const BUF = path.join(PACKAGE_DIR, 'node_modules', '.bin', 'buf');

/** Every message of an image by its full name (`agw.vault.v1.SealedSecret`, nested ones `Outer.Inner`). */
function messagesOf(image: Image): Map<string, ImageMessage> {
  const out = new Map<string, ImageMessage>();
  const walk = (prefix: string, m: ImageMessage) => {
    const name = `${prefix}.${m.name}`;
    out.set(name, m);
    for (const n of m.nestedType ?? []) walk(name, n);
  };
  for (const f of image.file) for (const m of f.messageType ?? []) walk(f.package ?? '', m);
  return out;
}

/** Whether a FIELD_NO_DELETE names a field the released image deprecated. */
function deletesADeprecatedField(change: BreakingChange, released: Map<string, ImageMessage>): boolean {
  if (change.type !== 'FIELD_NO_DELETE') return false;
  const m = /field "(\d+)" with name "([^"]+)" on message "([^"]+)"/.exec(change.message);
  if (!m) return false;
  const [, number, name, message] = m;
  const candidates = [...released].filter(([full]) => full === message || full.endsWith(`.${message}`)).map(([, msg]) => msg);
  return candidates.some((msg) => (msg.field ?? []).some((f) => f.number === Number(number) && f.name === name && f.options?.deprecated === true));
}

/**
 * The breaking changes of the contract in `dir` (a directory holding buf.yaml and proto/) against the image
 * `released` (JSON), less the deletions of deprecated fields.
 */
export function breakingChanges(dir = PACKAGE_DIR, released = path.join(PACKAGE_DIR, 'contract', 'released.json')): BreakingChange[] {
  const r = spawnSync(BUF, ['breaking', '--against', released, '--error-format', 'json'], { cwd: dir, encoding: 'utf8' });
  if (r.status !== 0 && r.status !== 100) throw new Error(`buf breaking failed (${r.status}): ${r.stderr || r.stdout}`);
  const changes = r.stdout
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as BreakingChange);
  const image = messagesOf(JSON.parse(readFileSync(released, 'utf8')) as Image);
  return changes.filter((c) => !deletesADeprecatedField(c, image));
}

/** The image of the contract in `dir`, as `contract:release` writes it (no source info). */
export function buildImage(dir: string, out: string): void {
  const r = spawnSync(BUF, ['build', '--exclude-source-info', '-o', out], { cwd: dir, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`buf build failed (${r.status}): ${r.stderr}`);
}
