/**
 * docs/configuration.md is printed by scripts/config-doc.mjs from the services' own setting declarations;
 * this keeps the committed page equal to what the built code declares (a default changed in a config.ts
 * without regenerating the page fails here, naming the line).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

it('docs/configuration.md is what scripts/config-doc.mjs prints from the built services', () => {
  const printed = execFileSync(process.execPath, [path.join(ROOT, 'scripts/config-doc.mjs')], { cwd: ROOT, encoding: 'utf8' });
  const committed = readFileSync(path.join(ROOT, 'docs/configuration.md'), 'utf8');
  const differ = printed.split('\n').filter((line, i) => line !== committed.split('\n')[i]);
  // regenerate with: node scripts/config-doc.mjs > docs/configuration.md
  expect(differ).toEqual([]);
  expect(committed).toBe(printed);
});
