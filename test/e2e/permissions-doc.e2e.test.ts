/**
 * The permission table in docs/auth.md ("Roles") is printed by scripts/permissions-doc.mjs from the gateway's
 * own table (services/gateway/src/http/permissions.ts); this keeps the committed section equal to what the
 * built code enforces (a rule changed without regenerating the page fails here, naming the line).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

it('the permission table in docs/auth.md is what scripts/permissions-doc.mjs prints from the built gateway', () => {
  const printed = execFileSync(process.execPath, [path.join(ROOT, 'scripts/permissions-doc.mjs')], { cwd: ROOT, encoding: 'utf8' }).trimEnd();
  const doc = readFileSync(path.join(ROOT, 'docs/auth.md'), 'utf8');
  const begin = printed.split('\n')[0];
  const end = '<!-- permissions:end -->';
  const committed = doc.slice(doc.indexOf(begin), doc.indexOf(end) + end.length);
  const differ = printed.split('\n').filter((line, i) => line !== committed.split('\n')[i]);
  // regenerate with: node scripts/permissions-doc.mjs --write
  expect(differ).toEqual([]);
  expect(committed).toBe(printed);
});
