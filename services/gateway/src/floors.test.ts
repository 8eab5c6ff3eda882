/**
 * The gateway's floors: the HTTP layer (`http/`, `openapi/`, the route files and the composition in
 * `features/`, `deps.ts`, `app.ts`, `gateway.ts`, `main.ts`) stands on the domain modules, never the other way. A
 * domain module that imports from the HTTP layer is an arrow running up a floor; this test names it.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

const SRC = __dirname;
const HTTP_LAYER = [/^http\//, /^openapi\//, /^features\//, /^(app|deps|gateway|main)\.ts$/, /\.routes\.ts$/];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sources(full);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !e.name.endsWith('.d.ts') ? [full] : [];
  });
}

const rel = (f: string) => path.relative(SRC, f).split(path.sep).join('/');
const inHttpLayer = (file: string) => HTTP_LAYER.some((r) => r.test(file));

/** The in-source modules `file` imports (relative specifiers), as paths below src/ without extension. */
function importsOf(file: string): string[] {
  const text = readFileSync(path.join(SRC, file), 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/^\s*(?:import|export)\b[^'"]*?from\s+'(\.{1,2}\/[^']+)'/gm)) {
    out.push(rel(path.resolve(path.dirname(path.join(SRC, file)), m[1])));
  }
  return out;
}

describe('gateway floors', () => {
  const files = sources(SRC).map(rel);

  it('finds the source tree (the test reads what it guards)', () => {
    expect(files).toContain('transparency/public-dashboard.ts');
    expect(files).toContain('openapi/schema.ts');
  });

  it('no domain module imports from the HTTP layer', () => {
    const up = files
      .filter((f) => !inHttpLayer(f))
      .flatMap((f) => importsOf(f).filter((i) => inHttpLayer(`${i}.ts`)).map((i) => `${f} -> ${i}`));
    expect(up).toEqual([]);
  });
});
