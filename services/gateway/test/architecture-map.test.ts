/**
 * docs/architecture.md's map of a governed call is true: every file of its table exists and defines the
 * symbol named beside it (issue "a map that tells the truth"). A file moved or a symbol renamed without the
 * map fails here.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');
const doc = readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8');
const section = doc.slice(doc.indexOf('## One governed tool call'), doc.indexOf('\n## ', doc.indexOf('## One governed tool call') + 5));
const rows = [...section.matchAll(/^\| (\d+) \| `([^`]+)` \| `([^`]+)` \|/gm)].map((m) => ({ n: Number(m[1]), file: m[2], symbol: m[3] }));

describe('docs/architecture.md: one governed tool call, the files where its steps happen', () => {
  it('lists the path in order, numbered without gaps', () => {
    expect(rows.length).toBeGreaterThanOrEqual(20);
    expect(rows.map((r) => r.n)).toEqual(rows.map((_, i) => i + 1));
  });

  it.each(rows.map((r) => [r.n, r.file, r.symbol]))('%i: %s defines %s', (_n, file, symbol) => {
    const full = path.join(ROOT, file as string);
    expect(existsSync(full)).toBe(true);
    // a TypeScript declaration, or a registered SQL function (packages/shared/src/db/functions: the record is written by one)
    expect(readFileSync(full, 'utf8')).toMatch(new RegExp(`(class|function|const|let|interface|CREATE OR REPLACE FUNCTION)\\s+${symbol}\\b|registerFunction\\(\\{\\s*name: '${symbol}'`));
  });
});
