/**
 * The contract keeps the released one working (docs/architecture.md, "Changing a contract"), and the check
 * tells a change the rule allows from one it does not, on copies of the contract changed the two ways.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { breakingChanges, buildImage } from './breaking-changes';

const PACKAGE_DIR = path.resolve(__dirname, '..');

test('the contract breaks nothing of the released one', () => {
  expect(breakingChanges()).toEqual([]);
});

describe('the check, on a contract changed after a release', () => {
  let dir: string;
  let released: string;
  const vaultProto = () => path.join(dir, 'proto', 'agw', 'vault.proto');
  const edit = (from: string, to: string) => {
    const text = readFileSync(vaultProto(), 'utf8');
    expect(text).toContain(from);
    writeFileSync(vaultProto(), text.replace(from, to));
  };

  beforeEach(() => {
    // a release of today's contract (its deprecated fields included), and a copy of it to change
    dir = mkdtempSync(path.join(tmpdir(), 'agw-contract-'));
    cpSync(path.join(PACKAGE_DIR, 'proto'), path.join(dir, 'proto'), { recursive: true });
    cpSync(path.join(PACKAGE_DIR, 'buf.yaml'), path.join(dir, 'buf.yaml'));
    released = path.join(dir, 'released.json');
    buildImage(dir, released);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('allows removing a field the release had deprecated, its number and name reserved', () => {
    edit('  string sealed_json = 1 [deprecated = true];', '  reserved 1;\n  reserved "sealed_json";');
    expect(breakingChanges(dir, released)).toEqual([]);
  });

  it('refuses removing a field the release had not deprecated', () => {
    edit('  string key_id = 3; // the tenant', '  reserved 3;\n  reserved "key_id"; // the tenant');
    expect(breakingChanges(dir, released)).toEqual([expect.objectContaining({ type: 'FIELD_NO_DELETE', message: expect.stringContaining('"key_id" on message "SealedSecret"') })]);
  });

  it('refuses giving a field another type under its number', () => {
    edit('  string alg = 4; // AES-256-GCM', '  int32 alg = 4; // AES-256-GCM');
    expect(breakingChanges(dir, released).map((c) => c.type)).toContain('FIELD_SAME_TYPE');
  });
});
