// Validates every object of deploy/k8s against the Kubernetes schemas (kubernetes-models) and checks the
// fleet's own invariants: each service has probes on its ops port, secrets only by reference, the
// production profile and no tamper demo.
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

const dir = path.resolve(__dirname, '..');
const docs = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith('.yaml'))
  .flatMap((f) => YAML.parseAllDocuments(fs.readFileSync(path.join(dir, f), 'utf8')).map((d) => ({ file: f, obj: d.toJSON() })));
const models = { Deployment, Service, ConfigMap, Namespace, Job, PodDisruptionBudget, HorizontalPodAutoscaler, Ingress, NetworkPolicy };
const SERVICES = ['gateway', 'policy', 'audit', 'vault', 'webhook', 'anchor', 'managed'];

describe('deploy/k8s', () => {
  it('holds only objects of known kinds, each valid against its schema', () => {
    expect(docs.length).toBeGreaterThan(10);
    for (const { file, obj } of docs) {
      const Model = models[obj.kind];
      expect({ file, kind: obj.kind, known: Boolean(Model) }).toEqual({ file, kind: obj.kind, known: true });
      expect(() => new Model(obj).validate()).not.toThrow();
    }
  });

  it('deploys every service with readiness and liveness probes on its ops port and a Service', () => {
    for (const name of SERVICES) {
      const dep = docs.find((d) => d.obj.kind === 'Deployment' && d.obj.metadata.name === name)?.obj;
      expect(dep).toBeDefined();
      const c = dep.spec.template.spec.containers[0];
      expect(c.command).toEqual(['node', `services/${name}/dist/main.js`]);
      expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'ops' });
      expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'ops' });
      expect(c.ports.map((p) => p.name)).toContain('ops');
      expect(docs.some((d) => d.obj.kind === 'Service' && d.obj.metadata.name === name)).toBe(true);
    }
  });

  it('references secrets instead of carrying them, and runs the production profile without the tamper demo', () => {
    const raw = fs.readdirSync(dir).filter((f) => f.endsWith('.yaml')).map((f) => fs.readFileSync(path.join(dir, f), 'utf8')).join('\n');
    expect(docs.some((d) => d.obj.kind === 'Secret')).toBe(false);
    expect(raw).not.toMatch(/PIN\s*\n\s*value:/);
    const cfg = docs.find((d) => d.obj.kind === 'ConfigMap').obj.data;
    expect(cfg.AGW_PROFILE).toBe('production');
    expect(cfg.AUDIT_TAMPER_DEMO).toBe('false');
  });

  it('exposes only the gateway publicly', () => {
    const ingress = docs.filter((d) => d.obj.kind === 'Ingress');
    expect(ingress).toHaveLength(1);
    const backends = ingress[0].obj.spec.rules.flatMap((r) => r.http.paths.map((p) => p.backend.service.name));
    expect([...new Set(backends)]).toEqual(['gateway']);
  });
});
