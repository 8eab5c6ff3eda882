/**
 * The observability files (deploy/observability): the Prometheus alerting rules pass `promtool check
 * rules` and their unit tests (`promtool test rules`: every alert fires and stays quiet as written), each
 * alert carries `for`, a severity, a summary, a description and a runbook link to its section of
 * docs/operations.md; the Grafana dashboards are valid dashboards with a Prometheus data-source variable
 * whose queries parse; and every metric a rule or a panel reads is one the services really declare (or a
 * default process metric of prom-client), so a renamed metric cannot silently disarm an alert or blank a
 * panel. The metric declarations themselves follow the Prometheus conventions (`_total` counters, a unit
 * in histogram names, no per-tenant or per-action label).
 *
 * promtool comes from the Debian `prometheus` package, installed by scripts/lib.sh (`npm start`, `npm
 * test`); when it is missing these tests fail and say so, they do not skip.
 */
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const YAML = require('yaml');

const ROOT = path.resolve(__dirname, '../../..');
const PROM_DIR = path.join(ROOT, 'deploy/observability/prometheus');
const GRAFANA_DIR = path.join(ROOT, 'deploy/observability/grafana');

function promtool(args, cwd = PROM_DIR) {
  const r = spawnSync('promtool', args, { cwd, encoding: 'utf8' });
  if (r.error) {
    throw new Error(
      `promtool is not installed (${r.error.message}). It comes from the Debian package "prometheus": ` +
        'scripts/lib.sh installs it for npm start / npm test, or run: sudo apt-get install prometheus',
    );
  }
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

// ---------------------------------------------------------------------------------------------------
// What the code declares

function sourceFiles(dir) {
  const out = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name === 'dist') continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...sourceFiles(p));
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** Every `new Counter|Gauge|Histogram|Summary({ name: '…', … labelNames: […] })` under services/ and packages/. */
function declaredMetrics() {
  const files = [
    ...fs.readdirSync(path.join(ROOT, 'services')).map((s) => path.join(ROOT, 'services', s, 'src')),
    ...fs.readdirSync(path.join(ROOT, 'packages')).map((s) => path.join(ROOT, 'packages', s, 'src')),
  ]
    .filter((d) => fs.existsSync(d))
    .flatMap(sourceFiles);
  const metrics = [];
  for (const f of files) {
    const text = fs.readFileSync(f, 'utf8');
    const starts = [...text.matchAll(/new (Counter|Gauge|Histogram|Summary)\s*(?:<[^>]*>)?\(\s*\{\s*name:\s*'([^']+)'/g)];
    starts.forEach((m, i) => {
      const body = text.slice(m.index, starts[i + 1]?.index ?? m.index + 800);
      const labels = /labelNames:\s*\[([^\]]*)\]/.exec(body)?.[1] ?? '';
      metrics.push({ type: m[1], name: m[2], labels: [...labels.matchAll(/'([^']+)'/g)].map((l) => l[1]), file: path.relative(ROOT, f) });
    });
  }
  return metrics;
}

/** prom-client's default metrics (collectDefaultMetrics in packages/shared/src/metrics.ts), from its own source. */
function defaultMetrics() {
  const main = require.resolve('prom-client', { paths: [path.join(ROOT, 'packages/shared')] });
  const dir = path.join(path.dirname(main), 'lib/metrics');
  const names = new Set();
  for (const f of fs.readdirSync(dir).filter((n) => n.endsWith('.js'))) {
    for (const m of fs.readFileSync(path.join(dir, f), 'utf8').matchAll(/'((?:process|nodejs)_[a-z0-9_]+)'/g)) names.add(m[1]);
  }
  return names;
}

/** The series names a scrape can hold: declared names (with the series a histogram or summary adds), defaults, `up`. */
function exportedSeries(declared = declaredMetrics()) {
  const names = new Set(['up']);
  for (const m of declared) {
    names.add(m.name);
    if (m.type === 'Histogram') for (const s of ['_bucket', '_count', '_sum']) names.add(m.name + s);
    if (m.type === 'Summary') for (const s of ['_count', '_sum']) names.add(m.name + s);
  }
  for (const n of defaultMetrics()) {
    names.add(n);
    for (const s of ['_bucket', '_count', '_sum']) names.add(n + s); // nodejs_gc_duration_seconds is a histogram
  }
  return names;
}

const PROMQL_KEYWORDS = new Set(['and', 'or', 'unless', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'offset', 'inf', 'nan', 'atan2']);

/** The metric names a PromQL expression reads (Grafana's `$__…` variables allowed). */
function metricsIn(expr) {
  const bare = expr
    .replace(/\$__\w+|\$\{?\w+\}?/g, '5m')
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""') // strings
    .replace(/\{[^}]*\}/g, '') // label matchers
    .replace(/\[[^\]]*\]/g, '') // ranges
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ''); // label lists
  const names = [];
  for (const m of bare.matchAll(/(?<![\w.])([a-zA-Z_:][a-zA-Z0-9_:]*)(?![\w:])(?!\s*\()/g)) {
    if (!PROMQL_KEYWORDS.has(m[1].toLowerCase()) && !/^\d/.test(m[1]) && !/^e\d+$/.test(m[1])) names.push(m[1]);
  }
  return names;
}

/** A Prometheus rule file holding the expressions as recording rules, so promtool parses each of them. */
function checkPromQL(exprs) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agw-promql-'));
  try {
    const rules = exprs.map((e, i) => ({ record: `agw_dashboard:expr_${i}`, expr: e.replace(/\$__rate_interval|\$__interval|\$__range/g, '5m') }));
    fs.writeFileSync(path.join(dir, 'exprs.yaml'), YAML.stringify({ groups: [{ name: 'dashboard-exprs', rules }] }));
    return promtool(['check', 'rules', 'exprs.yaml'], dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------------

describe('metric declarations', () => {
  const declared = declaredMetrics();

  it('are found (the scan works)', () => {
    expect(declared.length).toBeGreaterThanOrEqual(20);
    expect(declared.map((m) => m.name)).toEqual(expect.arrayContaining(['agw_decisions_total', 'agw_event_outbox_pending', 'agw_vault_hsm_up']));
  });

  it('follow the Prometheus conventions: snake_case, `_total` counters, a unit in histogram and summary names, no per-tenant label', () => {
    const problems = [];
    for (const m of declared) {
      const where = `${m.name} (${m.file})`;
      if (!/^[a-z][a-z0-9_]*$/.test(m.name)) problems.push(`${where}: not snake_case`);
      if (m.type === 'Counter' && !m.name.endsWith('_total')) problems.push(`${where}: a counter must end in _total`);
      if (m.type !== 'Counter' && m.name.endsWith('_total')) problems.push(`${where}: only counters end in _total`);
      if ((m.type === 'Histogram' || m.type === 'Summary') && !/_(seconds|ms|bytes)$/.test(m.name)) problems.push(`${where}: no unit suffix`);
      const unbounded = m.labels.filter((l) => /^(tenant|tenant_id|action_id|session_id|agent_id|subject_id|user_id|email|url)$/.test(l));
      if (unbounded.length) problems.push(`${where}: unbounded label ${unbounded.join(', ')}`);
    }
    expect(problems).toEqual([]);
  });

  it('are unique per name', () => {
    const names = declared.map((m) => m.name);
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
  });
});

describe('alerting rules (deploy/observability/prometheus/alerts.yaml)', () => {
  const doc = YAML.parse(fs.readFileSync(path.join(PROM_DIR, 'alerts.yaml'), 'utf8'));
  const rules = doc.groups.flatMap((g) => g.rules);
  const alerts = rules.filter((r) => r.alert);

  it('pass promtool check rules', () => {
    const r = promtool(['check', 'rules', 'alerts.yaml']);
    expect(r.out).toMatch(/SUCCESS/);
    expect(r.status).toBe(0);
  });

  it('pass their promtool unit tests (alerts.test.yaml)', () => {
    const r = promtool(['test', 'rules', 'alerts.test.yaml']);
    expect(r.out).toMatch(/SUCCESS/);
    expect(r.status).toBe(0);
  });

  it('load in the example Prometheus configuration of the local fleet (promtool check config)', () => {
    const r = promtool(['check', 'config', 'prometheus.local.yml']);
    expect(r.out).toMatch(/SUCCESS: 1 rule files found/);
    expect(r.status).toBe(0);
  });

  it('cover what the fleet must alert on', () => {
    expect(alerts.map((a) => a.alert)).toEqual(
      expect.arrayContaining([
        'AgwChainVerificationFailed',
        'AgwOutboxGrowing',
        'AgwAnchoringBehind',
        'AgwWebhookFailureRate',
        'AgwPolicyDownFailClosed',
        'AgwHsmUnavailable',
        'AgwManagedConsumersStalled',
        'AgwServiceDown',
      ]),
    );
  });

  it('each have `for`, a severity, a summary, a description and a runbook section in docs/operations.md', () => {
    const runbook = fs.readFileSync(path.join(ROOT, 'docs/operations.md'), 'utf8');
    const headings = new Set([...runbook.matchAll(/^#{2,3} (\S+)\s*$/gm)].map((m) => m[1].toLowerCase()));
    for (const a of alerts) {
      expect([a.alert, typeof a.for]).toEqual([a.alert, 'string']);
      expect([a.alert, a.labels?.severity]).toEqual([a.alert, expect.stringMatching(/^(critical|warning)$/)]);
      expect([a.alert, typeof a.annotations?.summary, typeof a.annotations?.description]).toEqual([a.alert, 'string', 'string']);
      expect([a.alert, a.annotations?.runbook]).toEqual([a.alert, `docs/operations.md#${a.alert.toLowerCase()}`]);
      expect([a.alert, headings.has(a.alert.toLowerCase())]).toEqual([a.alert, true]);
    }
    expect(new Set(alerts.map((a) => a.alert)).size).toBe(alerts.length);
  });

  it('each have a unit test where they fire and one where they stay quiet', () => {
    const tests = YAML.parse(fs.readFileSync(path.join(PROM_DIR, 'alerts.test.yaml'), 'utf8'));
    expect(tests.rule_files).toEqual(['alerts.yaml']);
    const cases = tests.tests.flatMap((t) => t.alert_rule_test ?? []);
    for (const a of alerts) {
      const mine = cases.filter((c) => c.alertname === a.alert);
      expect([a.alert, mine.some((c) => (c.exp_alerts ?? []).length > 0), mine.some((c) => (c.exp_alerts ?? []).length === 0)]).toEqual([a.alert, true, true]);
    }
  });

  it('read only metrics the services export', () => {
    const exported = exportedSeries();
    for (const r of rules) {
      const names = metricsIn(r.expr);
      expect([r.alert ?? r.record, names.length > 0]).toEqual([r.alert ?? r.record, true]);
      expect([r.alert ?? r.record, names.filter((n) => !exported.has(n))]).toEqual([r.alert ?? r.record, []]);
    }
  });
});

describe('Grafana dashboards (deploy/observability/grafana)', () => {
  const files = fs.readdirSync(GRAFANA_DIR).filter((f) => f.endsWith('.json'));
  const dashboards = files.map((f) => ({ file: f, d: JSON.parse(fs.readFileSync(path.join(GRAFANA_DIR, f), 'utf8')) }));
  const panelsOf = (d) => d.panels.flatMap((p) => (p.type === 'row' ? p.panels ?? [] : [p]));

  it('exist and are dashboards: uid, title, schemaVersion, a Prometheus data-source variable, panels with ids and positions', () => {
    expect(files).toContain('fleet-overview.json');
    const uids = new Set();
    for (const { file, d } of dashboards) {
      expect([file, d]).toEqual([file, expect.objectContaining({ uid: expect.stringMatching(/^[a-zA-Z0-9_-]{1,40}$/), title: expect.any(String), schemaVersion: expect.any(Number) })]);
      expect(d.schemaVersion).toBeGreaterThanOrEqual(36);
      uids.add(d.uid);
      expect(d.templating.list).toContainEqual(expect.objectContaining({ name: 'datasource', type: 'datasource', query: 'prometheus' }));
      const ids = d.panels.flatMap((p) => [p.id, ...(p.panels ?? []).map((c) => c.id)]);
      expect(new Set(ids).size).toBe(ids.length);
      for (const p of d.panels) expect([p.title, p.gridPos]).toEqual([p.title, expect.objectContaining({ x: expect.any(Number), y: expect.any(Number), w: expect.any(Number), h: expect.any(Number) })]);
      for (const p of panelsOf(d)) {
        expect([p.title, p.datasource]).toEqual([p.title, { type: 'prometheus', uid: '${datasource}' }]);
        expect([p.title, p.targets?.length > 0]).toEqual([p.title, true]);
        const refIds = p.targets.map((t) => t.refId);
        expect([p.title, new Set(refIds).size]).toEqual([p.title, refIds.length]);
      }
    }
    expect(uids.size).toBe(dashboards.length);
  });

  it('query only metrics the services export, in PromQL that parses', () => {
    const exported = exportedSeries();
    const exprs = [];
    for (const { d } of dashboards) {
      for (const p of panelsOf(d)) {
        for (const t of p.targets) {
          const names = metricsIn(t.expr);
          expect([p.title, names.length > 0]).toEqual([p.title, true]);
          expect([p.title, names.filter((n) => !exported.has(n))]).toEqual([p.title, []]);
          exprs.push(t.expr);
        }
      }
    }
    const r = checkPromQL(exprs);
    expect(r.out).toMatch(/SUCCESS/);
    expect(r.status).toBe(0);
  });

  it('the fleet overview shows what an SRE needs (decisions, step latency, chain, outbox, webhooks, anchoring, HSM, sessions, saturation)', () => {
    const d = dashboards.find((x) => x.file === 'fleet-overview.json').d;
    const read = new Set(panelsOf(d).flatMap((p) => p.targets.flatMap((t) => metricsIn(t.expr))));
    expect([...read]).toEqual(
      expect.arrayContaining([
        'agw_decisions_total',
        'agw_pipeline_step_duration_seconds_bucket',
        'agw_audit_chain_appends_total',
        'agw_event_outbox_pending',
        'webhook_attempts_total',
        'webhook_deliveries_completed_total',
        'agw_anchor_oldest_pending_tree_head_age_seconds',
        'agw_vault_hsm_errors_total',
        'agw_managed_sessions_active',
        'agw_managed_session_interrupts_total',
        'process_cpu_seconds_total',
        'process_resident_memory_bytes',
      ]),
    );
  });
});

describe('the metric-name scanner used above', () => {
  it('finds metric names and ignores functions, labels, keywords and Grafana variables', () => {
    expect(metricsIn('sum by (le, step) (rate(agw_x_bucket{step!="a b"}[$__rate_interval]))')).toEqual(['agw_x_bucket']);
    expect(metricsIn('max(a_b) > 1000 and max(deriv(c_d[10m])) > 0 unless on (job) up == 0')).toEqual(['a_b', 'c_d', 'up']);
    expect(metricsIn('time() - foo_seconds / 3600 > 1e-9')).toEqual(['foo_seconds']);
  });
});
