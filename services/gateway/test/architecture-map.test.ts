/**
 * docs/architecture.md's map of a governed call is true: every file of its table exists and defines the
 * symbol named beside it (issue "a map that tells the truth"). A file moved or a symbol renamed without the
 * map fails here. Its table of who calls whom is the services' `peers([...])` calls, and no two services
 * call each other.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
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

describe('docs/architecture.md: who calls whom', () => {
  // the peer clients (packages/shared/src/peer-clients.ts PEERS) by the service that serves them
  const SERVED_BY: Record<string, string> = { policy: 'policy', audit: 'audit', merkle: 'audit', compliance: 'audit', anchor: 'anchor', webhook: 'webhook', vault: 'vault', noteSigning: 'vault', federation: 'vault', managed: 'managed' };
  const sources = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [path.join(dir, e.name)] : []));
  const services = readdirSync(path.join(ROOT, 'services'));
  const calls = Object.fromEntries(
    services.map((svc) => {
      const peers = new Set<string>();
      for (const f of sources(path.join(ROOT, 'services', svc, 'src')))
        for (const m of readFileSync(f, 'utf8').matchAll(/peers\(\[([^\]]*)\]/g)) for (const n of m[1].matchAll(/'(\w+)'/g)) peers.add(SERVED_BY[n[1]] ?? `unknown peer ${n[1]}`);
      return [svc, [...peers].sort()];
    }),
  );
  const table = doc.slice(doc.indexOf('## Who calls whom'), doc.indexOf('\n## ', doc.indexOf('## Who calls whom') + 5));
  const documented = Object.fromEntries([...table.matchAll(/^\| (\w+) \| ([^|]+) \|$/gm)].filter((m) => m[1] !== 'service').map((m) => [m[1], m[2].trim().startsWith('none') ? [] : m[2].split(',').map((p) => p.trim().split(' ')[0]).sort()]));

  it('names the peers each service calls', () => {
    expect(documented).toEqual(calls);
  });

  it('has no two services calling each other (the vault sends its records on the AUDIT stream instead)', () => {
    const mutual = services.flatMap((a) => (calls[a] as string[]).filter((b) => a < b && (calls[b] as string[]).includes(a)).map((b) => `${a}<->${b}`));
    expect(mutual).toEqual([]);
  });
});
