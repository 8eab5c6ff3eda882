/**
 * The Prometheus alerting rules (deploy/observability/prometheus): valid for promtool, each rule fires
 * and stays quiet as its unit test says (`promtool test rules`), and every metric they name is one the
 * services really export (so a renamed metric cannot silently disarm an alert). promtool comes from the
 * Debian `prometheus` package, installed by scripts/lib.sh.
 */
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const YAML = require('yaml');

const ROOT = path.resolve(__dirname, '../../..');
const DIR = path.join(ROOT, 'deploy/observability/prometheus');

function promtool(...args) {
  const r = spawnSync('promtool', args, { cwd: DIR, encoding: 'utf8' });
  if (r.error) throw new Error(`promtool is not installed (apt-get install prometheus; npm test installs it through scripts/lib.sh): ${r.error.message}`);
  return r;
}

/**
 * Metric names the services declare (prom-client `name:` fields), with the series a histogram adds, the
 * process metrics of prom-client's default collection, and Prometheus's own `up`.
 */
function exportedMetrics() {
  const out = execFileSync('grep', ['-rhoE', "name: '[a-z_][a-z0-9_]*'", 'services', 'packages/shared/src', '--include=*.ts'], { cwd: ROOT, encoding: 'utf8' });
  const names = [...out.matchAll(/'([a-z0-9_]+)'/g)].map((m) => m[1]);
  return new Set([...names, ...names.flatMap((n) => [`${n}_bucket`, `${n}_count`, `${n}_sum`]), 'up', 'process_cpu_seconds_total', 'process_resident_memory_bytes']);
}

const PROMQL_FUNCTIONS = ['clamp_min', 'increase', 'rate', 'deriv', 'sum', 'max', 'histogram_quantile'];

/** The metric names a PromQL expression reads. */
function metricsIn(expr) {
  // label matchers, strings and grouping clauses (`by (label, …)`) name labels, not metrics
  const bare = expr.replace(/\{[^}]*\}/g, '{}').replace(/"[^"]*"/g, '""').replace(/\b(by|without)\s*\([^)]*\)/g, '');
  return [...bare.matchAll(/\b([a-z_][a-z0-9_]*)\b(?=\s*[{[]|\s*\)|\s*[<>=]|\s*$)/g)].map((m) => m[1]).filter((n) => !PROMQL_FUNCTIONS.includes(n) && (/_/.test(n) || n === 'up'));
}

describe('alerting rules', () => {
  it('pass promtool check rules', () => {
    const r = promtool('check', 'rules', 'alerts.yaml');
    expect(`${r.stdout}${r.stderr}`).toMatch(/SUCCESS/);
    expect(r.status).toBe(0);
  });

  it('pass their promtool unit tests (each alert fires and stays quiet)', () => {
    const r = promtool('test', 'rules', 'alerts.test.yaml');
    expect(`${r.stdout}${r.stderr}`).toMatch(/SUCCESS/);
    expect(r.status).toBe(0);
  });

  it('use only metrics the services export, and each has a runbook section', () => {
    const exported = exportedMetrics();
    const doc = YAML.parse(fs.readFileSync(path.join(DIR, 'alerts.yaml'), 'utf8'));
    const runbook = fs.readFileSync(path.join(ROOT, 'docs/operations.md'), 'utf8').toLowerCase();
    for (const rule of doc.groups.flatMap((g) => g.rules)) {
      const unknown = metricsIn(rule.expr).filter((n) => !exported.has(n));
      expect([rule.alert, unknown]).toEqual([rule.alert, []]);
      expect(runbook).toContain(`## ${rule.alert.toLowerCase()}`);
    }
  });
});

describe('the Grafana fleet dashboard', () => {
  it('is a dashboard with a Prometheus data-source variable and panels reading only exported metrics', () => {
    const d = JSON.parse(fs.readFileSync(path.join(ROOT, 'deploy/observability/grafana/fleet-overview.json'), 'utf8'));
    expect(d).toMatchObject({ uid: expect.any(String), title: expect.any(String), schemaVersion: expect.any(Number) });
    expect(d.templating.list).toContainEqual(expect.objectContaining({ name: 'datasource', type: 'datasource', query: 'prometheus' }));
    expect(d.panels.length).toBeGreaterThanOrEqual(10);
    const exported = exportedMetrics();
    for (const p of d.panels) {
      expect(p.targets.length).toBeGreaterThan(0);
      for (const t of p.targets) {
        const names = metricsIn(t.expr);
        expect([p.title, names.length > 0]).toEqual([p.title, true]);
        expect([p.title, names.filter((n) => !exported.has(n))]).toEqual([p.title, []]);
      }
    }
  });
});
