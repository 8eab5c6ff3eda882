/**
 * The PDF form of the compliance export (pdfkit, built-in Helvetica, no external assets): a cover page,
 * summary statistics, then tables of tree heads, anchors, sample inclusion proofs and audit records.
 */
import PDFDocument from 'pdfkit';
import type { ExportPackage } from './compliance-exporter';

type Doc = PDFKit.PDFDocument;

const MARGIN = 50;
const short = (h: unknown, n = 16) => (typeof h === 'string' && h.length > n ? `${h.slice(0, n)}…` : String(h ?? ''));

function heading(doc: Doc, text: string): void {
  if (doc.y > doc.page.height - 140) doc.addPage();
  doc.moveDown(0.8).font('Helvetica-Bold').fontSize(14).fillColor('#1f2937').text(text, MARGIN).moveDown(0.3);
  doc.font('Helvetica').fontSize(9).fillColor('#111827');
}

function keyValues(doc: Doc, rows: Array<[string, unknown]>): void {
  for (const [k, v] of rows) {
    doc.font('Helvetica-Bold').fontSize(9).text(`${k}: `, MARGIN, doc.y, { continued: true }).font('Helvetica').text(String(v ?? '—'));
  }
}

/** A simple table that breaks across pages and repeats its header. */
function table(doc: Doc, columns: Array<{ title: string; width: number }>, rows: string[][]): void {
  const rowHeight = 14;
  const totalWidth = columns.reduce((s, c) => s + c.width, 0);
  const header = () => {
    const y = doc.y;
    doc.rect(MARGIN, y - 2, totalWidth, rowHeight).fill('#e5e7eb').fillColor('#111827');
    let x = MARGIN;
    doc.font('Helvetica-Bold').fontSize(8);
    for (const c of columns) {
      doc.text(c.title, x + 2, y + 1, { width: c.width - 4, lineBreak: false, ellipsis: true });
      x += c.width;
    }
    doc.y = y + rowHeight;
  };
  header();
  doc.font('Helvetica').fontSize(8);
  rows.forEach((row, i) => {
    if (doc.y > doc.page.height - MARGIN - rowHeight) {
      doc.addPage();
      header();
      doc.font('Helvetica').fontSize(8);
    }
    const y = doc.y;
    if (i % 2 === 1) doc.rect(MARGIN, y - 2, totalWidth, rowHeight).fill('#f9fafb').fillColor('#111827');
    let x = MARGIN;
    row.forEach((cell, j) => {
      doc.text(cell, x + 2, y + 1, { width: columns[j].width - 4, lineBreak: false, ellipsis: true });
      x += columns[j].width;
    });
    doc.y = y + rowHeight;
  });
  if (rows.length === 0) doc.text('(none)', MARGIN, doc.y + 2);
  doc.x = MARGIN;
}

export function renderCompliancePdf(pkg: ExportPackage): Promise<Buffer> {
  const doc = new PDFDocument({ size: 'A4', margin: MARGIN, info: { Title: `Compliance export ${pkg.package.tenant_id}`, Author: 'Agent Governance Gateway' } });
  const chunks: Buffer[] = [];
  doc.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });

  const cv = pkg.chain_verification as { valid?: boolean; record_count?: number; reason?: string; failed_at_action_id?: string };
  const latest = pkg.merkle.latest_tree as { tree_index?: number; merkle_root?: string; record_count?: number } | null;

  // Cover page
  doc.rect(0, 0, doc.page.width, 180).fill('#1f2937');
  doc.fillColor('#ffffff').font('Helvetica-Bold').fontSize(26).text('Compliance Export', MARGIN, 70);
  doc.font('Helvetica').fontSize(12).text('Agent Governance Gateway · audit evidence package', MARGIN, 110);
  doc.fillColor('#111827').fontSize(11).text('', MARGIN, 220);
  keyValues(doc, [
    ['Tenant', pkg.package.tenant_id],
    ['Period from', pkg.package.range.from],
    ['Period to', pkg.package.range.to],
    ['Generated at', pkg.package.generated_at],
    ['Standard', pkg.package.standard],
    ['Records in period', pkg.summary.total],
    ['Hash chain', cv.valid ? `VALID (${cv.record_count} records verified)` : `BROKEN at ${cv.failed_at_action_id} (${cv.reason})`],
    ['Latest Merkle root', latest ? `${latest.merkle_root} (tree ${latest.tree_index}, ${latest.record_count} records)` : 'no tree built yet'],
    ['Anchors on chain', pkg.anchors.status === 'ok' ? pkg.anchors.references.length : `unavailable (${pkg.anchors.error ?? ''})`],
  ]);
  doc.moveDown(2).fontSize(9).fillColor('#4b5563').text(
    'Every record is linked to its predecessor by SHA-256 (hash chain). Hourly, the chain is summarised by an RFC 9162 Merkle tree head; ' +
      'tree heads of all tenants are aggregated into one root written to a public blockchain. Inclusion proofs in this document can be ' +
      'checked with any RFC 9162 verifier; the anchor transactions can be checked on the explorer links given.',
    MARGIN,
    doc.y,
    { width: doc.page.width - 2 * MARGIN },
  );

  // Summary statistics
  doc.addPage();
  heading(doc, 'Summary statistics');
  keyValues(doc, [
    ['Total records in period', pkg.summary.total],
    ['Records exported', `${pkg.summary.records_exported}${pkg.summary.truncated ? ' (truncated)' : ''}`],
    ['First record', pkg.summary.first_at],
    ['Last record', pkg.summary.last_at],
    ['Distinct agents', pkg.summary.distinct_agents],
    ['Distinct tools', pkg.summary.distinct_tools],
  ]);
  heading(doc, 'Decisions');
  table(
    doc,
    [
      { title: 'Decision', width: 200 },
      { title: 'Records', width: 100 },
    ],
    Object.entries(pkg.summary.by_decision).map(([k, v]) => [k, String(v)]),
  );
  heading(doc, 'Severities');
  table(
    doc,
    [
      { title: 'Severity', width: 200 },
      { title: 'Records', width: 100 },
    ],
    Object.entries(pkg.summary.by_severity).map(([k, v]) => [k, String(v)]),
  );
  heading(doc, 'Hash chain verification');
  keyValues(doc, [
    ['Result', cv.valid ? 'valid' : 'broken'],
    ['Records verified', cv.record_count],
    ['Algorithm', pkg.chain_verification.algorithm],
  ]);
  heading(doc, 'Policy snapshot');
  const policy = pkg.policy_snapshot as Record<string, unknown>;
  keyValues(doc, [
    ['Template', policy.policy_template ?? policy.status],
    ['Bundle revision', policy.bundle_revision],
    ['Overrides', JSON.stringify(policy.policy_config ?? {})],
  ]);

  heading(doc, 'Merkle tree heads');
  doc.text(pkg.merkle.algorithm, MARGIN).moveDown(0.3);
  table(
    doc,
    [
      { title: 'Tree', width: 35 },
      { title: 'Merkle root', width: 190 },
      { title: 'Records', width: 50 },
      { title: 'Record ids', width: 80 },
      { title: 'Period end', width: 140 },
    ],
    pkg.merkle.trees_in_range.map((t) => [String(t.tree_index), String(t.merkle_root), String(t.record_count), `${t.from_record_id}–${t.to_record_id}`, String(t.period_end)]),
  );

  heading(doc, 'Anchor references');
  table(
    doc,
    [
      { title: 'Tree', width: 35 },
      { title: 'Network', width: 70 },
      { title: 'Block', width: 50 },
      { title: 'Transaction', width: 130 },
      { title: 'Aggregate root', width: 110 },
      { title: 'Explorer', width: 100 },
    ],
    pkg.anchors.references.map((a) => [String(a.tree_index), a.network, String(a.block_number), short(a.tx_hash, 24), short(a.aggregate_root, 18), a.explorer_tx_url || '(local chain)']),
  );

  heading(doc, 'Sample inclusion proofs');
  for (const p of pkg.sample_inclusion_proofs) {
    keyValues(doc, [
      ['Record', `${p.record_id} (leaf ${p.leaf_index}) ${p.record_hash}`],
      ['Tree', `${p.tree_index} of ${p.tree_size} leaves, root ${p.merkle_root}`],
      ['Verified', p.verified ? 'yes' : 'NO'],
    ]);
    doc.font('Courier').fontSize(7).text((p.proof as string[]).join('\n') || '(empty proof: single-leaf tree)', MARGIN + 10).font('Helvetica').fontSize(9).moveDown(0.5);
  }
  if (pkg.sample_inclusion_proofs.length === 0) doc.text('(no record of the period is in a tree yet)', MARGIN);

  heading(doc, 'Audit records');
  table(
    doc,
    [
      { title: 'Id', width: 40 },
      { title: 'Requested at', width: 110 },
      { title: 'Agent', width: 70 },
      { title: 'Tool / method', width: 110 },
      { title: 'Decision', width: 60 },
      { title: 'Severity', width: 45 },
      { title: 'Record hash', width: 60 },
    ],
    pkg.audit_records.map((r) => [String(r.id), String(r.requested_at), String(r.agent_id), `${r.tool}.${r.method}`, String(r.decision), String(r.severity), short(r.record_hash, 10)]),
  );

  doc.end();
  return done;
}
