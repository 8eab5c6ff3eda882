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

/** Metric names the services declare (prom-client `name:` fields) plus what Prometheus adds itself. */
function exportedMetrics() {
  const out = execFileSync('grep', ['-rhoE', "name: '[a-z_][a-z0-9_]*'", 'services', 'packages/shared/src', '--include=*.ts'], { cwd: ROOT, encoding: 'utf8' });
  return new Set([...out.matchAll(/'([a-z0-9_]+)'/g)].map((m) => m[1]).concat(['up']));
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
      const names = [...rule.expr.matchAll(/\b([a-z_][a-z0-9_]*)(?=\s*[{[]|\s*\)|\s*[<>=]|$)/g)].map((m) => m[1]).filter((n) => /_/.test(n) || n === 'up');
      const unknown = names.filter((n) => !exported.has(n) && !['clamp_min', 'increase', 'rate', 'deriv', 'sum', 'max'].includes(n));
      expect([rule.alert, unknown]).toEqual([rule.alert, []]);
      expect(runbook).toContain(`## ${rule.alert.toLowerCase()}`);
    }
  });
});
