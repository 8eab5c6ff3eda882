/**
 * The compliance export put together and rendered by the gateway: the audit service's part (a fixture
 * here, built as the audit service builds it: services/audit/test/compliance-evidence.int.test.ts) with the
 * anchors and the policy snapshot, in the document's order; JSON, OCSF (validated against the vendored OCSF
 * schema), OPA decision-log lines, the PDF (rendered to text with pdftotext), a section per peer that is
 * down, and the cut to EXPORT_MAX_BYTES. End to end: test/e2e provenance, evidence and ocsf-export.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type DecisionInputRow, DependencyUnavailableError } from '@agw/shared';
import { OCSF_PROFILES, OcsfSchema } from '@agw/ocsf';
import type { AnchorReference, AuditEvidence } from '@agw/verifier';
import Ajv from 'ajv';
import { evidenceSampleCall } from '../../../audit/test/support/evidence-sample';
import { ComplianceExporter } from './compliance-export';

const tenant = randomUUID();
const hex = (n: number, c: string) => c.repeat(n);
const anchorRef: AnchorReference = {
  tree_index: 0,
  tree_size: 12,
  tenant_root: 'aa'.repeat(32),
  aggregate_root: 'bb'.repeat(32),
  leaf_index: 0,
  leaf_count: 1,
  aggregate_proof: [],
  tx_hash: `0x${'cc'.repeat(32)}`,
  block_number: 7,
  anchored_at: '2026-11-29T00:00:00.000Z',
  network: 'polygon-amoy',
  chain_id: 80002,
  contract_address: `0x${'dd'.repeat(20)}`,
  explorer_tx_url: `https://amoy.polygonscan.com/tx/0x${'cc'.repeat(32)}`,
};

/** A record as the audit service presents it (presentStoredRecord: id, leaf_index, the hashed keys, the link). */
function record(i: number, over: Record<string, unknown> = {}) {
  return {
    id: i + 1,
    leaf_index: i,
    action_id: randomUUID(),
    ...evidenceSampleCall(i),
    requested_at: `2026-11-29T00:00:${String(i).padStart(2, '0')}.000Z`,
    prev_hash: i === 0 ? 'GENESIS' : hex(64, String(i % 10)),
    record_hash: hex(64, String((i + 1) % 10)),
    ...over,
  };
}

/** The audit service's part as GetEvidence answers it (keys in the document's order, no anchors, policy or chain). */
function auditPart(records = Array.from({ length: 12 }, (_, i) => record(i)), verification: Record<string, unknown> = { valid: true, record_count: 12 }): AuditEvidence {
  const head = { tree_index: 0, merkle_root: 'ee'.repeat(32), record_count: 12, records_added: 12, from_record_id: 1, to_record_id: 12, period_start: '2026-11-29T00:00:00.000Z', period_end: '2026-11-29T01:00:00.000Z' };
  return {
    package: { format_version: '1.2', standard: 'AGCS v0.9', generated_at: '2026-11-29T02:00:00.000Z', tenant_id: tenant, range: { from: '1970-01-01T00:00:00.000Z', to: '2026-11-29T02:00:00.001Z' } },
    summary: { total: records.length, by_decision: { deny: 3, allow: 9 }, by_severity: { high: 3, none: 9 }, distinct_agents: 3, distinct_tools: 2, first_at: records[0]?.requested_at ?? null, last_at: records.at(-1)?.requested_at ?? null, records_exported: records.length, truncated: false },
    audit_records: records,
    chain_verification: { ...verification, verified_at: '2026-11-29T02:00:00.000Z', scope: 'the whole chain of the tenant (GENESIS to the latest record)', algorithm: 'record_hash = SHA-256(UTF-8(JCS(content)) || UTF-8(prev_hash)); first prev_hash = "GENESIS"' },
    merkle: { algorithm: 'RFC 9162', leaf: 'record_hash', tree_heads_total: 1, latest_tree: head, trees_in_range: [head] },
    sample_inclusion_proofs: [0, 11].map((i) => ({ record_id: i + 1, record_hash: records[i]?.record_hash ?? '', leaf_index: i, leaf_hash: 'ab'.repeat(32), tree_index: 0, tree_size: 12, merkle_root: head.merkle_root, proof: ['cd'.repeat(32)], verified: true })),
    evidence: { status: 'unavailable', error: 'checkpoint signing is not configured', checkpoints: [], verifier_key: null, origin: null, tree_heads: [{ tree_index: 0, tree_size: 12, merkle_root: head.merkle_root }], consistency_proofs: [] },
  };
}

function exporter(o: { policyUp?: boolean; anchorsUp?: boolean; maxBytes?: number; part?: () => AuditEvidence; inputs?: DecisionInputRow[] } = {}) {
  return new ComplianceExporter({
    audit: { evidence: async () => ({ pkg: JSON.parse(JSON.stringify((o.part ?? auditPart)())), inputs: o.inputs ?? [] }) },
    anchors: {
      listAnchors: async (t) => {
        if (o.anchorsUp === false) throw new DependencyUnavailableError('anchor service is unreachable');
        return t === tenant ? [anchorRef] : [];
      },
    },
    policy: {
      snapshot: async () => {
        if (o.policyUp === false) throw new DependencyUnavailableError('policy engine is unreachable');
        return { status: 'ok', policy_template: 'financial', policy_config: { transaction_limit: 100 }, bundle_revision: 'rev-9' };
      },
    },
    maxBytes: o.maxBytes ?? 12 * 1024 * 1024,
  });
}

describe('compliance export (gateway)', () => {
  it('puts the audit part, the anchors and the policy snapshot together in the document’s order (the JSON the audit service used to write)', async () => {
    const out = await exporter().export(tenant, { format: 'json' });
    expect(out.contentType).toBe('application/json');
    expect(out.filename).toBe(`compliance-export-${tenant}-2026-11-29.json`);
    const a = auditPart();
    const policy = { status: 'ok', policy_template: 'financial', policy_config: { transaction_limit: 100 }, bundle_revision: 'rev-9' };
    // byte for byte: the sections in the order the format has always had, `chain` last in `evidence`
    const expected = {
      package: a.package,
      summary: a.summary,
      audit_records: JSON.parse(JSON.stringify(a.audit_records)),
      chain_verification: a.chain_verification,
      merkle: a.merkle,
      anchors: { status: 'ok', references: [anchorRef] },
      sample_inclusion_proofs: a.sample_inclusion_proofs,
      policy_snapshot: policy,
      evidence: { ...a.evidence, chain: { chain_id: 80002, contract_address: anchorRef.contract_address, network: 'polygon-amoy' } },
    };
    const pkg = JSON.parse(out.content.toString());
    expect(pkg.audit_records).toHaveLength(12);
    expect(out.content.toString()).toBe(JSON.stringify({ ...expected, audit_records: pkg.audit_records }, null, 1));
    expect(pkg.audit_records.map((r: { id: number }) => r.id)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
  });

  it('keeps exporting when the anchor or the policy service is down: that section says unavailable', async () => {
    const { pkg } = await exporter({ policyUp: false, anchorsUp: false }).build(tenant, { format: 'json' });
    expect(pkg.policy_snapshot).toEqual({ status: 'unavailable', error: 'policy engine is unreachable' });
    expect(pkg.anchors).toEqual({ status: 'unavailable', references: [], error: 'anchor service is unreachable' });
    expect(pkg.evidence?.chain).toEqual({ chain_id: null, contract_address: null, network: null });
    expect(pkg.chain_verification).toMatchObject({ valid: true });
  });

  it('exports the records as OCSF API Activity events (JSON Lines) that validate against the vendored OCSF schema', async () => {
    const out = await exporter().export(tenant, { format: 'ocsf' });
    expect(out.contentType).toBe('application/x-ndjson');
    expect(out.filename).toMatch(/\.ocsf\.jsonl$/);
    const events = out.content.toString().trim().split('\n').map((l) => JSON.parse(l));
    expect(events).toHaveLength(12);
    const validate = new Ajv({ allErrors: true, strict: false }).compile(new OcsfSchema().eventSchema('events/application/api_activity.json', [...OCSF_PROFILES]));
    for (const e of events) expect([validate(e), validate.errors]).toEqual([true, null]);
    expect(events.map((e) => e.metadata.sequence)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    expect(events.filter((e) => e.disposition_id === 2)).toHaveLength(3); // the 3 denies: Blocked
    expect(events.every((e) => e.class_uid === 6003 && e.metadata.tenant_uid === tenant && /^[0-9a-f]{64}$/.test(e.unmapped.record_hash))).toBe(true);
  });

  it('exports the policy decisions as OPA decision-log events (JSON Lines) from the replay inputs the audit service answered', async () => {
    const allowed = record(0, { decision: 'allow', violations: [], severity: 'none', method: 'search', session_id: 'sess-1' });
    const queued = record(1, { method: 'delete', decision: 'requires_human', requires_human: true, violations: ['deleting needs a human'], severity: 'medium', bundle_revision: 'rev-8', details: { upstream_connection: { mode: 'per_user', user_id: 'u-1' } } });
    const human = record(2, { action_id: queued.action_id, method: 'delete', decision: 'allow', bundle_revision: 'rev-8', details: { approval: 'approved' } });
    const constraint = record(3, { decision: 'deny', violations: ['blocked_domain'], bundle_revision: 'gateway-constraints' });
    const input = (r: ReturnType<typeof record>, over: Partial<DecisionInputRow>): DecisionInputRow =>
      ({ action_id: r.action_id, agent_id: r.agent_id, agent_type: r.agent_type, agent_version: r.agent_version, tool: r.tool, method: r.method, session_id: null, stored_params: r.params, pii_detected: false, behavioral: { action_count_1h: 1 }, decision: 'allow', violations: [], severity: 'none', bundle_revision: 'rev-9', passes: 2, evaluated_at: new Date(), ...over }) as DecisionInputRow;
    // as the audit service's JSON carries them: evaluated_at is text
    const inputs = JSON.parse(JSON.stringify([
      input(allowed, { session_id: 'sess-1', evaluated_at: new Date('2026-11-29T01:02:03.456Z') }),
      input(queued, { decision: 'requires_human', violations: ['deleting needs a human'], severity: 'medium', bundle_revision: 'rev-8', passes: 1, behavioral: null }),
    ])) as DecisionInputRow[];
    const out = await exporter({ part: () => auditPart([allowed, queued, human, constraint]), inputs }).export(tenant, { format: 'opa' });
    expect(out.contentType).toBe('application/x-ndjson');
    expect(out.filename).toMatch(/\.opa-decisions\.jsonl$/);
    const text = out.content.toString();
    expect(text.endsWith('\n')).toBe(true);
    const events = text.trim().split('\n').map((l) => JSON.parse(l));
    expect(events).toHaveLength(2);
    expect(events[0]).toEqual({
      decision_id: allowed.action_id,
      // the current revision (the snapshot's rev-9, template financial): its decision rule's path
      path: 'agw/financial/decision',
      input: { agent_id: 'agent-0', agent_type: 'assistant', agent_version: '1.0.0', tool: 'svc_web_search', method: 'search', params: { i: 0 }, pii_detected: false, session_id: 'sess-1', behavioral: { action_count_1h: 1 } },
      result: { decision: 'allow', violations: [], severity: 'none', requires_human: false, passes: 2 },
      timestamp: '2026-11-29T01:02:03.456Z',
      bundles: { gateway: { revision: 'rev-9' } },
      labels: { app: 'agw', id: tenant, version: expect.stringMatching(/^\d+\.\d+\.\d+/) },
    });
    // an earlier revision's template is not known: the root of the policy packages
    expect(events[1]).toMatchObject({
      decision_id: queued.action_id,
      path: 'agw',
      input: { method: 'delete', upstream: { connection: { mode: 'per_user', user_id: 'u-1' } } },
      result: { decision: 'requires_human', violations: ['deleting needs a human'], severity: 'medium', requires_human: true, passes: 1 },
      bundles: { gateway: { revision: 'rev-8' } },
    });
    expect(events[1].input).not.toHaveProperty('behavioral');
  });

  it('lists fewer records when the document would exceed the size limit, and says so', async () => {
    const full = (await exporter().export(tenant, { format: 'json' })).content.length;
    const out = await exporter({ maxBytes: Math.floor(full * 0.6) }).export(tenant, { format: 'json' });
    expect(out.content.length).toBeLessThanOrEqual(Math.floor(full * 0.6));
    const pkg = JSON.parse(out.content.toString());
    expect(pkg.summary.total).toBe(12);
    expect(pkg.summary.truncated).toBe(true);
    expect(pkg.audit_records.length).toBe(pkg.summary.records_exported);
    expect(pkg.audit_records.length).toBeLessThan(12);
  });

  it('renders a PDF whose pages carry text (rendered to PNG and text with poppler)', async () => {
    const out = await exporter().export(tenant, { format: 'pdf' });
    expect(out.contentType).toBe('application/pdf');
    expect(out.content.subarray(0, 5).toString()).toBe('%PDF-');
    const dir = mkdtempSync(path.join(tmpdir(), 'agw-pdf-'));
    try {
      const file = path.join(dir, 'export.pdf');
      writeFileSync(file, out.content);
      execFileSync('pdftoppm', ['-png', '-r', '40', file, path.join(dir, 'page')]);
      const pngs = readdirSync(dir).filter((f) => f.endsWith('.png'));
      expect(pngs.length).toBeGreaterThanOrEqual(2);
      expect(readFileSync(path.join(dir, pngs[0])).subarray(1, 4).toString()).toBe('PNG');
      const text = execFileSync('pdftotext', ['-layout', file, '-']).toString();
      expect(text).toContain('Compliance Export');
      expect(text).toContain('Summary statistics');
      expect(text).toContain(tenant);
      expect(text).toContain('Sample inclusion proofs');
      expect(text).toContain(`page 1 of ${pngs.length}`);
      expect(text).toContain('Record 1 (leaf 0 of tree 0, 12 leaves): verified');
      expect(text).toContain('Record 12 (leaf 11 of tree 0, 12 leaves): verified');
      expect(text).toMatch(/1–12/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names the first failing record of a broken chain in the PDF', async () => {
    const records = Array.from({ length: 12 }, (_, i) => record(i));
    const broken = { valid: false, record_count: 4, failed_at_record_id: 5, failed_at_action_id: records[4].action_id };
    const out = await exporter({ part: () => auditPart(records, broken) }).export(tenant, { format: 'pdf' });
    const dir = mkdtempSync(path.join(tmpdir(), 'agw-pdf-'));
    try {
      const file = path.join(dir, 'broken.pdf');
      writeFileSync(file, out.content);
      const text = execFileSync('pdftotext', ['-layout', file, '-']).toString();
      expect(text).toContain(`BROKEN at record 5 (action ${records[4].action_id}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
