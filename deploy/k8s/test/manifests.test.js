/**
 * deploy/k8s is a Kustomize base with two overlays (dev, production) and components (autoscaling,
 * prometheus-operator, tracing). Each overlay is rendered offline with `kubectl kustomize` (kustomize v5
 * inside kubectl) exactly as `kubectl apply -k` would, and every rendered object is validated against its
 * schema: the Kubernetes API's (kubernetes-models: Deployment, Service, HPA v2, PDB, NetworkPolicy, ...)
 * and the Prometheus Operator's CRD (ServiceMonitor). Then the fleet's invariants are checked on what
 * would be applied: probes on the ops port, secrets only by reference, the production profile, only the
 * gateway public, the network policies, the autoscaling signals, the scrape targets.
 *
 * kubectl comes with the machine image (Debian package kubectl) ; when it is missing these tests fail and
 * say so, they do not skip.
 */
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const YAML = require('yaml');
const { Deployment } = require('kubernetes-models/apps/v1/Deployment');
const { Service } = require('kubernetes-models/v1/Service');
const { ConfigMap } = require('kubernetes-models/v1/ConfigMap');
const { Namespace } = require('kubernetes-models/v1/Namespace');
const { Job } = require('kubernetes-models/batch/v1/Job');
const { PodDisruptionBudget } = require('kubernetes-models/policy/v1/PodDisruptionBudget');
const { HorizontalPodAutoscaler } = require('kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler');
const { Ingress } = require('kubernetes-models/networking.k8s.io/v1/Ingress');
const { NetworkPolicy } = require('kubernetes-models/networking.k8s.io/v1/NetworkPolicy');
const { ServiceMonitor } = require('@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor');

const dir = path.resolve(__dirname, '..');
const ROOT = path.resolve(dir, '../..');
const models = { Deployment, Service, ConfigMap, Namespace, Job, PodDisruptionBudget, HorizontalPodAutoscaler, Ingress, NetworkPolicy, ServiceMonitor };
const SERVICES = ['gateway', 'policy', 'audit', 'vault', 'webhook', 'anchor', 'managed'];
const PART_OF = { 'app.kubernetes.io/part-of': 'agent-governance-gateway' };

/** `kubectl kustomize <dir>`: the objects `kubectl apply -k <dir>` would apply. */
function render(rel) {
  const r = spawnSync('kubectl', ['kustomize', path.join(dir, rel)], { encoding: 'utf8' });
  if (r.error) throw new Error(`kubectl is not installed (${r.error.message}): deploy/k8s is rendered with "kubectl kustomize" (kubectl 1.27+, Debian package kubectl)`);
  if (r.status !== 0) throw new Error(`kubectl kustomize ${rel} failed:\n${r.stderr}`);
  return YAML.parseAllDocuments(r.stdout).map((d) => d.toJSON()).filter(Boolean);
}

const rendered = { dev: render('overlays/dev'), production: render('overlays/production') };
const find = (objs, kind, name) => objs.find((o) => o.kind === kind && o.metadata.name === name);
const all = (objs, kind) => objs.filter((o) => o.kind === kind);
const labelsMatch = (selector, labels) => Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v) && (selector.matchExpressions ?? []).every((e) => (e.operator === 'In' ? e.values.includes(labels[e.key]) : true));

describe.each(Object.keys(rendered))('overlay %s (kubectl kustomize)', (overlay) => {
  const objs = rendered[overlay];

  it('renders only objects of known kinds, each valid against its schema, all in the agw namespace', () => {
    expect(objs.length).toBeGreaterThan(25);
    for (const obj of objs) {
      const Model = models[obj.kind];
      expect({ kind: obj.kind, known: Boolean(Model) }).toEqual({ kind: obj.kind, known: true });
      expect(() => new Model(obj).validate()).not.toThrow();
      if (obj.kind !== 'Namespace') expect(`${obj.kind}/${obj.metadata.name} in ${obj.metadata.namespace}`).toBe(`${obj.kind}/${obj.metadata.name} in agw`);
    }
  });

  it('deploys every service with probes on its ops port, a Service with an ops port, a PodDisruptionBudget, one image', () => {
    const images = new Set();
    for (const name of SERVICES) {
      const dep = find(objs, 'Deployment', name);
      expect(dep).toBeDefined();
      expect(dep.spec.template.metadata.labels).toMatchObject({ 'app.kubernetes.io/name': name, ...PART_OF });
      const c = dep.spec.template.spec.containers[0];
      images.add(c.image);
      expect(c.command).toEqual(['node', `services/${name}/dist/main.js`]);
      expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'ops' });
      expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'ops' });
      expect(c.resources.requests).toEqual({ cpu: expect.any(String), memory: expect.any(String) });
      expect(c.envFrom).toEqual([{ configMapRef: { name: 'agw-config' } }]);
      const svc = find(objs, 'Service', name);
      expect(svc.spec.ports.map((p) => p.name)).toContain('ops');
      expect(svc.metadata.labels).toMatchObject(PART_OF);
      const pdb = find(objs, 'PodDisruptionBudget', name);
      expect(pdb.spec.selector.matchLabels).toEqual({ 'app.kubernetes.io/name': name });
    }
    expect(images).toEqual(new Set([overlay === 'production' ? 'ghcr.io/agw/fleet:0.1.0' : 'ghcr.io/agw/fleet:main']));
    expect(find(objs, 'Job', 'agw-migrate').spec.template.spec.containers[0].image).toBe([...images][0]);
  });

  it('points every gRPC client at a headless Service of its peer (dns:///, round_robin over every pod)', () => {
    const { grpcTarget } = require(path.join(ROOT, 'packages/shared/dist/grpc.js'));
    const cfg = find(objs, 'ConfigMap', 'agw-config').data;
    for (const name of SERVICES.filter((s) => s !== 'gateway')) {
      const url = cfg[`${name.toUpperCase()}_GRPC_URL`];
      const m = /^dns:\/\/\/([a-z-]+)\.agw\.svc\.cluster\.local:(\d+)$/.exec(url);
      expect({ name, url, ok: Boolean(m) }).toEqual({ name, url, ok: true });
      expect(grpcTarget(url)).toBe(url);
      const svc = find(objs, 'Service', m[1]);
      expect(svc.spec).toMatchObject({ clusterIP: 'None', selector: { 'app.kubernetes.io/name': name } });
      const container = find(objs, 'Deployment', name).spec.template.spec.containers[0];
      const grpcPort = container.ports.find((p) => p.name === 'grpc').containerPort;
      expect(svc.spec.ports).toEqual([{ name: 'grpc', port: grpcPort, targetPort: 'grpc' }]);
      expect(Number(m[2])).toBe(grpcPort);
    }
  });

  it('references secrets instead of carrying them, and runs the production profile without the tamper demo', () => {
    expect(all(objs, 'Secret')).toEqual([]);
    for (const o of [...all(objs, 'Deployment'), ...all(objs, 'Job')]) {
      for (const c of o.spec.template.spec.containers) {
        for (const e of c.env ?? []) {
          if (/PIN|SECRET|KEY|PASSWORD|DATABASE_URL|RPC_URL/.test(e.name)) expect({ name: e.name, from: Object.keys(e.valueFrom ?? {}) }).toEqual({ name: e.name, from: ['secretKeyRef'] });
        }
      }
    }
    const cfg = find(objs, 'ConfigMap', 'agw-config').data;
    expect(cfg.AGW_PROFILE).toBe('production');
    expect(cfg.AUDIT_TAMPER_DEMO).toBe('false');
    expect(Object.keys(cfg).filter((k) => /SECRET|PASSWORD|PIN|TOKEN/.test(k))).toEqual([]);
  });

  it('routes what MCP clients and humans need through the Ingress: the API, the OAuth discovery documents, the console and its consent page', () => {
    const [ingress] = all(objs, 'Ingress');
    // the longest Prefix path that matches, as the Ingress API defines the match (whole path segments)
    const route = (url) =>
      ingress.spec.rules
        .flatMap((r) => r.http.paths)
        .filter((p) => p.pathType === 'Prefix' && (p.path === '/' || url === p.path || url.startsWith(p.path.replace(/\/$/, '') + '/')))
        .sort((a, b) => b.path.length - a.path.length)[0];
    for (const url of [
      '/api/mcp/server',
      '/.well-known/oauth-protected-resource/api/mcp/server',
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-authorization-server',
      '/.well-known/oauth-authorization-server/api/oauth',
      '/oauth/consent/0123456789abcdef',
      '/assets/index-abc123.js',
      '/',
    ]) {
      const p = route(url);
      expect({ url, backend: p?.backend.service }).toEqual({ url, backend: { name: 'gateway', port: { name: 'http' } } });
    }
    expect(find(objs, 'Service', 'gateway').spec.ports.map((p) => p.name)).toContain('http');
  });

  it('admits the gateway\'s HTTP port only from the ingress controller, whose appended address it trusts (TRUST_PROXY=1)', () => {
    const gatewayPublic = find(objs, 'NetworkPolicy', 'gateway-public');
    expect(gatewayPublic.spec.ingress).toEqual([
      { from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } }], ports: [{ protocol: 'TCP', port: 'http' }] },
    ]);
    const env = Object.fromEntries(find(objs, 'Deployment', 'gateway').spec.template.spec.containers[0].env.map((e) => [e.name, e.value]));
    expect(env.TRUST_PROXY).toBe('1');
  });

  it('exposes only the gateway publicly, and only its HTTP port to everyone', () => {
    const ingress = all(objs, 'Ingress');
    expect(ingress).toHaveLength(1);
    const backends = ingress[0].spec.rules.flatMap((r) => r.http.paths.map((p) => p.backend.service.name));
    expect([...new Set(backends)]).toEqual(['gateway']);
    const policies = all(objs, 'NetworkPolicy');
    const deny = find(objs, 'NetworkPolicy', 'default-deny');
    expect(deny.spec).toEqual({ podSelector: {}, policyTypes: ['Ingress', 'Egress'] });
    // every ingress rule that admits any source (no `from`) applies to the gateway's http port only
    for (const p of policies) {
      for (const rule of p.spec.ingress ?? []) {
        if (rule.from?.length) continue;
        for (const name of SERVICES) {
          const labels = find(objs, 'Deployment', name).spec.template.metadata.labels;
          if (labelsMatch(p.spec.podSelector, labels)) expect({ policy: p.metadata.name, service: name, ports: rule.ports }).toEqual({ policy: p.metadata.name, service: 'gateway', ports: [{ protocol: 'TCP', port: 'http' }] });
        }
      }
    }
    // the gRPC services accept their gRPC port only from the fleet's own pods
    const grpc = find(objs, 'NetworkPolicy', 'grpc-from-fleet');
    for (const name of SERVICES.filter((s) => s !== 'gateway')) expect(labelsMatch(grpc.spec.podSelector, find(objs, 'Deployment', name).spec.template.metadata.labels)).toBe(true);
    expect(grpc.spec.ingress).toEqual([{ from: [{ podSelector: { matchLabels: PART_OF } }], ports: [{ protocol: 'TCP', port: 'grpc' }] }]);
    // egress: the stores in agw-data, the fleet's gRPC ports, DNS; HTTPS to public addresses only for the services that call out
    const stores = find(objs, 'NetworkPolicy', 'egress-fleet-and-stores').spec.egress;
    expect(stores.flatMap((r) => r.ports.map((p) => p.port))).toEqual(expect.arrayContaining([53, 50051, 5432, 6379, 4222]));
    const https = find(objs, 'NetworkPolicy', 'egress-https-public');
    expect(https.spec.podSelector.matchExpressions[0].values.sort()).toEqual(['anchor', 'gateway', 'managed', 'vault', 'webhook']);
    expect(https.spec.egress[0].to[0].ipBlock.except).toEqual(expect.arrayContaining(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16']));
    // IPv6: global unicast only, less 6to4, Teredo and the other IETF ranges, documentation
    expect(https.spec.egress[0].to[1].ipBlock).toEqual({ cidr: '2000::/3', except: ['2001::/23', '2001:db8::/32', '2002::/16', '3fff::/20'] });
    expect(find(objs, 'NetworkPolicy', 'egress-vault-hsm').spec.podSelector.matchLabels).toEqual({ 'app.kubernetes.io/name': 'vault' });
  });
});

describe('overlay values', () => {
  const replicas = (objs) => Object.fromEntries(all(objs, 'Deployment').map((d) => [d.metadata.name, d.spec.replicas]));

  it('dev: one replica of each service, small requests, no autoscaler, no Prometheus Operator objects, traces off', () => {
    const objs = rendered.dev;
    expect(new Set(Object.values(replicas(objs)))).toEqual(new Set([1]));
    expect(find(objs, 'Deployment', 'gateway').spec.template.spec.containers[0].resources.requests).toEqual({ cpu: '50m', memory: '128Mi' });
    expect(all(objs, 'HorizontalPodAutoscaler')).toEqual([]);
    expect(all(objs, 'ServiceMonitor')).toEqual([]);
    expect(Object.keys(find(objs, 'ConfigMap', 'agw-config').data).filter((k) => k.startsWith('OTEL_'))).toEqual([]);
  });

  it('production: replicas, resources, HPAs on CPU and on in-flight requests (a metric the gateway declares)', () => {
    const objs = rendered.production;
    expect(replicas(objs)).toEqual({ gateway: 3, policy: 3, audit: 2, vault: 2, webhook: 2, anchor: 2, managed: 2 });
    expect(find(objs, 'Deployment', 'gateway').spec.template.spec.containers[0].resources.requests).toEqual({ cpu: '500m', memory: '512Mi' });
    const hpa = find(objs, 'HorizontalPodAutoscaler', 'gateway');
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'gateway' });
    expect(hpa.spec).toMatchObject({ minReplicas: 3, maxReplicas: 30 });
    expect(hpa.spec.metrics.find((m) => m.type === 'Resource').resource.name).toBe('cpu');
    const inFlight = hpa.spec.metrics.find((m) => m.type === 'Pods').pods.metric.name;
    expect(inFlight).toBe('agw_http_requests_in_flight');
    const declared = fs.readFileSync(path.join(ROOT, 'services/gateway/src/metrics.ts'), 'utf8');
    expect(declared).toMatch(new RegExp(`new Gauge\\(\\{ name: '${inFlight}'`));
    const adapter = YAML.parse(fs.readFileSync(path.join(dir, 'dependencies/prometheus-adapter-values.yaml'), 'utf8'));
    expect(adapter.rules.custom.map((r) => r.name.as)).toContain(inFlight);
    expect(find(objs, 'HorizontalPodAutoscaler', 'policy').spec.scaleTargetRef.name).toBe('policy');
    for (const d of all(objs, 'Deployment')) expect(d.spec.template.spec.topologySpreadConstraints[0].matchLabelKeys).toEqual(['app.kubernetes.io/name']);
  });

  it('production: one ServiceMonitor scrapes the ops port of every service, with the job names the alerts use', () => {
    const objs = rendered.production;
    const [sm] = all(objs, 'ServiceMonitor');
    expect(all(objs, 'ServiceMonitor')).toHaveLength(1);
    for (const name of SERVICES) expect(labelsMatch(sm.spec.selector, find(objs, 'Service', name).metadata.labels)).toBe(true);
    expect(sm.spec.endpoints).toEqual([expect.objectContaining({ port: 'ops', path: '/metrics' })]);
    expect(sm.spec.endpoints[0].relabelings).toEqual([{ sourceLabels: ['__meta_kubernetes_service_label_app_kubernetes_io_name'], targetLabel: 'job', replacement: 'agw-$1' }]);
    const alerts = fs.readFileSync(path.join(ROOT, 'deploy/observability/prometheus/alerts.yaml'), 'utf8');
    expect(alerts).toMatch(/job=~"agw-\.\*"/);
  });

  it('production: traces exported over OTLP to the collector, sampled, and allowed through the network policy', () => {
    const objs = rendered.production;
    const cfg = find(objs, 'ConfigMap', 'agw-config').data;
    expect(cfg).toMatchObject({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector.monitoring.svc:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf', OTEL_TRACES_SAMPLER: 'parentbased_traceidratio' });
    expect(find(objs, 'NetworkPolicy', 'egress-otlp-collector').spec.egress[0].ports).toEqual([{ protocol: 'TCP', port: 4318 }]);
  });
});

describe('external dependencies (deploy/k8s/dependencies)', () => {
  it('NATS: the NATS Helm chart as a 3-node cluster with JetStream on persistent volumes', () => {
    const v = YAML.parse(fs.readFileSync(path.join(dir, 'dependencies/nats-values.yaml'), 'utf8'));
    expect(v.config.cluster).toEqual({ enabled: true, replicas: 3 });
    expect(v.config.jetstream).toMatchObject({ enabled: true, fileStore: { enabled: true, pvc: { enabled: true } } });
    // the Go runtime sized to the pod, not the node (docs/performance.md, "NATS: GOMAXPROCS")
    expect(v.container.env).toEqual({ GOMAXPROCS: '1', GOMEMLIMIT: '1800MiB' });
  });

  it('Postgres: a CloudNativePG Cluster of 3 instances with backups; the fleet gets it only through the agw-secrets database-url', () => {
    const c = YAML.parse(fs.readFileSync(path.join(dir, 'dependencies/postgres-cnpg.yaml'), 'utf8'));
    expect(c).toMatchObject({ apiVersion: 'postgresql.cnpg.io/v1', kind: 'Cluster', metadata: { namespace: 'agw-data' }, spec: { instances: 3, bootstrap: { initdb: { database: 'agw' } } } });
    expect(c.spec.backup.barmanObjectStore.destinationPath).toMatch(/^s3:\/\//);
    for (const objs of Object.values(rendered)) expect(find(objs, 'ConfigMap', 'agw-config').data.DATABASE_URL).toBeUndefined();
  });
});

describe('the image (Dockerfile)', () => {
  it('is built on the Node.js release of .node-version, the runtime every script and figure of the project uses', () => {
    const want = fs.readFileSync(path.join(ROOT, '.node-version'), 'utf8').trim();
    const dockerfile = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
    expect(want).toMatch(/^\d+\.\d+\.\d+$/);
    expect(dockerfile).toContain(`ARG NODE_VERSION=${want}\n`);
    const froms = dockerfile.split('\n').filter((l) => l.startsWith('FROM '));
    expect(froms.length).toBeGreaterThan(0);
    for (const from of froms) expect(from).toMatch(/^FROM node:\$\{NODE_VERSION\}-bookworm-slim\b/);
  });

  it('runs every service with the V8 flags the local fleet uses (scripts/node-flags.json)', () => {
    const flags = JSON.parse(fs.readFileSync(path.join(ROOT, 'scripts/node-flags.json'), 'utf8'));
    expect(flags.length).toBeGreaterThan(0);
    const dockerfile = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
    expect(dockerfile).toContain(`NODE_OPTIONS="${flags.join(' ')}"`);
  });
});
