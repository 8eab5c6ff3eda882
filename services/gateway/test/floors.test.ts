/**
 * Every service's floors (docs/architecture.md, "Floors"): a service is composed (`main.ts`, its definition
 * `*.service.ts`; the gateway's `app.ts`, `deps.ts` and `gateway.ts`) of adapters that speak a protocol
 * (`grpc/`, `nats/`, the gateway's HTTP layer: `http/`, `openapi/`, the route files and `features/`, the narrow
 * dependencies each feature's routes declare) standing on the domain modules
 * (everything else). An import runs down a floor, or along it within one adapter; one that runs up a floor
 * (a domain module importing an adapter or the composition, an adapter importing the composition) or from
 * one adapter into another (a NATS consumer using the gRPC adapter's mapping) is named here.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');

type Floor = 'composition' | `adapter:${string}` | 'domain';

/** The floor of a module of a service (its path below the service's src/, with its extension). */
function floorOf(file: string): Floor {
  if (/^(main|[a-z-]+\.service|app|deps|gateway)\.ts$/.test(file)) return 'composition';
  const adapter = /^(grpc|nats|http|openapi|features)\//.exec(file)?.[1] ?? (/\.routes\.ts$/.test(file) ? 'http' : undefined);
  if (adapter) return `adapter:${adapter === 'grpc' || adapter === 'nats' ? adapter : 'http'}`;
  return 'domain';
}

const rank = (f: Floor) => (f === 'domain' ? 0 : f === 'composition' ? 2 : 1);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === '__tests__' ? [] : sources(full);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !e.name.endsWith('.d.ts') ? [full] : [];
  });
}

/** The in-source modules a file imports (relative specifiers), as paths below src/ with `.ts`. */
function importsOf(src: string, file: string): string[] {
  const text = readFileSync(path.join(src, file), 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/^\s*(?:import|export)\b[^'"]*?from\s+'(\.{1,2}\/[^']+)'/gm)) {
    const target = path.relative(src, path.resolve(path.dirname(path.join(src, file)), m[1])).split(path.sep).join('/');
    out.push(target.endsWith('.ts') ? target : `${target}.ts`);
  }
  return out;
}

/** Every import of `service` that runs up a floor or across adapters, as `from -> to`. */
function arrowsUp(service: string): string[] {
  const src = path.join(ROOT, 'services', service, 'src');
  const files = sources(src).map((f) => path.relative(src, f).split(path.sep).join('/'));
  return files.flatMap((f) =>
    importsOf(src, f)
      .filter((to) => {
        const [a, b] = [floorOf(f), floorOf(to)];
        return rank(b) > rank(a) || (rank(a) === 1 && rank(b) === 1 && a !== b);
      })
      .map((to) => `${f} -> ${to}`),
  );
}

const services = readdirSync(path.join(ROOT, 'services'));

describe('every service stands on its floors', () => {
  it('reads the tree it guards', () => {
    expect(services).toEqual(expect.arrayContaining(['gateway', 'policy', 'audit', 'vault', 'anchor', 'webhook', 'managed']));
    expect(floorOf('transparency/public-dashboard.ts')).toBe('domain');
    expect(floorOf('http/routes/audit.routes.ts')).toBe('adapter:http');
    expect(floorOf('openapi/schema.ts')).toBe('adapter:http');
    expect(floorOf('grpc/audit.grpc.ts')).toBe('adapter:grpc');
    expect(floorOf('vault.service.ts')).toBe('composition');
    expect(floorOf('features/audit.feature.ts')).toBe('adapter:http');
  });

  it('finds an arrow up a floor when there is one', () => {
    // what the rule is made of, on made-up pairs: up, across adapters, down, along
    const up = (a: string, b: string) => rank(floorOf(b)) > rank(floorOf(a)) || (rank(floorOf(a)) === 1 && rank(floorOf(b)) === 1 && floorOf(a) !== floorOf(b));
    expect(up('chain/audit-chain.ts', 'grpc/audit.grpc.ts')).toBe(true);
    expect(up('nats/consumer.ts', 'grpc/audit.grpc.ts')).toBe(true);
    expect(up('grpc/audit.grpc.ts', 'main.ts')).toBe(true);
    expect(up('grpc/audit.grpc.ts', 'chain/audit-chain.ts')).toBe(false);
    expect(up('http/routes/a.routes.ts', 'http/errors.ts')).toBe(false);
  });

  it.each(services)('%s: no import runs up a floor', (service) => {
    expect(arrowsUp(service)).toEqual([]);
  });
});
