/**
 * The PDF form of the compliance export (pdfkit, built-in Helvetica, no external assets): a cover page,
 * summary statistics, then tables of tree heads, anchors, sample inclusion proofs and audit records.
 */
import PDFDocument from 'pdfkit';
import type { ComplianceExport } from '@agw/verifier';

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

/** `text` cut (with an ellipsis) to fit `width` points in the current font. */
function fit(doc: Doc, text: string, width: number): string {
  if (doc.widthOfString(text) <= width) return text;
  let t = text;
  while (t.length > 1 && doc.widthOfString(`${t}…`) > width) t = t.slice(0, -1);
  return `${t}…`;
}

/** A column of a table: its title and its width in points. */
type Column = readonly [title: string, width: number];

/** A heading, then a table under it. */
function section(doc: Doc, title: string, columns: readonly Column[], rows: string[][]): void {
  heading(doc, title);
  table(doc, columns, rows);
}

/** A heading and a two-column table of counts (e.g. records per decision). */
function countTable(doc: Doc, title: string, label: string, counts: Record<string, number>): void {
  section(doc, title, [[label, 200], ['Records', 100]], Object.entries(counts).map(([k, v]) => [k, String(v)]));
}

/** A simple table that breaks across pages and repeats its header. Cells are cut to their column. */
function table(doc: Doc, columns: readonly Column[], rows: string[][]): void {
  const rowHeight = 14;
  const totalWidth = columns.reduce((s, [, width]) => s + width, 0);
  const header = () => {
    const y = doc.y;
    doc.rect(MARGIN, y - 2, totalWidth, rowHeight).fill('#e5e7eb').fillColor('#111827');
    let x = MARGIN;
    doc.font('Helvetica-Bold').fontSize(7);
    for (const [title, width] of columns) {
      doc.text(fit(doc, title, width - 4), x + 2, y + 1, { lineBreak: false });
      x += width;
    }
    doc.y = y + rowHeight;
  };
  header();
  doc.font('Helvetica').fontSize(7);
  rows.forEach((row, i) => {
    if (doc.y > doc.page.height - MARGIN - rowHeight) {
      doc.addPage();
      header();
      doc.font('Helvetica').fontSize(7);
    }
    const y = doc.y;
    if (i % 2 === 1) doc.rect(MARGIN, y - 2, totalWidth, rowHeight).fill('#f9fafb').fillColor('#111827');
    let x = MARGIN;
    row.forEach((cell, j) => {
      const width = columns[j][1];
      doc.text(fit(doc, cell, width - 4), x + 2, y + 1, { lineBreak: false });
      x += width;
    });
    doc.y = y + rowHeight;
  });
  if (rows.length === 0) doc.text('(none)', MARGIN, doc.y + 2);
  doc.x = MARGIN;
}

export function renderCompliancePdf(pkg: ComplianceExport): Promise<Buffer> {
  const doc = new PDFDocument({ size: 'A4', margin: MARGIN, bufferPages: true, info: { Title: `Compliance export ${pkg.package.tenant_id}`, Author: 'Agent Governance Gateway' } });
  const chunks: Buffer[] = [];
  doc.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });

  const cv = pkg.chain_verification as { valid?: boolean; record_count?: number; reason?: string; failed_at_action_id?: string; failed_at_record_id?: number };
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
    ['Hash chain', cv.valid ? `VALID (${cv.record_count} records verified)` : `BROKEN at record ${cv.failed_at_record_id} (action ${cv.failed_at_action_id}, ${cv.reason})`],
    ['Latest Merkle root', latest ? `${latest.merkle_root} (tree ${latest.tree_index}, ${latest.record_count} records)` : 'no tree built yet'],
    ['Anchors on chain', pkg.anchors.status === 'ok' ? pkg.anchors.references.length : `unavailable (${pkg.anchors.error ?? ''})`],
  ]);
  doc.moveDown(2).fontSize(9).fillColor('#4b5563').text(
    'Every record is linked to its predecessor by SHA-256 (hash chain). Hourly, the chain is summarised by an RFC 9162 Merkle tree head; ' +
      'tree heads of all tenants are aggregated into one root written to a public blockchain. Inclusion proofs in this document can be ' +
      'checked with any RFC 9162 verifier; the anchor transactions can be checked on the explorer links given. ' +
      'Record ids are this tenant\'s own: record n is the n-th record of its chain (Merkle leaf n - 1).',
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
  countTable(doc, 'Decisions', 'Decision', pkg.summary.by_decision);
  countTable(doc, 'Severities', 'Severity', pkg.summary.by_severity);
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
    [['Tree', 30], ['Merkle root', 260], ['Records', 45], ['Record ids', 70], ['Period end (UTC)', 90]],
    pkg.merkle.trees_in_range.map((t) => [String(t.tree_index), String(t.merkle_root), String(t.record_count), `${t.from_record_id}–${t.to_record_id}`, String(t.period_end).slice(0, 16).replace('T', ' ')]),
  );

  section(
    doc,
    'Anchor references',
    [['Tree', 35], ['Network', 70], ['Block', 50], ['Transaction', 130], ['Aggregate root', 110], ['Explorer', 100]],
    pkg.anchors.references.map((a) => [String(a.tree_index), a.network, String(a.block_number), short(a.tx_hash, 24), short(a.aggregate_root, 18), a.explorer_tx_url || '(local chain)']),
  );

  heading(doc, 'Sample inclusion proofs');
  for (const p of pkg.sample_inclusion_proofs) {
    if (doc.y > doc.page.height - 160) doc.addPage();
    doc.font('Helvetica-Bold').fontSize(9).text(`Record ${p.record_id} (leaf ${p.leaf_index} of tree ${p.tree_index}, ${p.tree_size} leaves): ${p.verified ? 'verified' : 'NOT VERIFIED'}`, MARGIN);
    doc.font('Courier').fontSize(7);
    doc.text(`record_hash  ${p.record_hash}`, MARGIN + 10);
    doc.text(`merkle_root  ${p.merkle_root}`, MARGIN + 10);
    const proof = p.proof as string[];
    if (proof.length === 0) doc.text('proof        (empty: single-leaf tree)', MARGIN + 10);
    proof.forEach((h, i) => doc.text(`${i === 0 ? 'proof      ' : '           '}  ${h}`, MARGIN + 10));
    doc.font('Helvetica').fontSize(9).moveDown(0.5);
  }
  if (pkg.sample_inclusion_proofs.length === 0) doc.text('(no record of the period is in a tree yet)', MARGIN);

  section(
    doc,
    'Audit records',
    [['Id', 40], ['Requested at', 110], ['Agent', 70], ['Tool / method', 110], ['Decision', 60], ['Severity', 45], ['Record hash', 60]],
    pkg.audit_records.map((r) => [String(r.id), String(r.requested_at), String(r.agent_id), `${r.tool}.${r.method}`, String(r.decision), String(r.severity), short(r.record_hash, 10)]),
  );

  // footer on every page: tenant, generation time, page x of y
  const range = doc.bufferedPageRange();
  for (let i = range.start; i < range.start + range.count; i++) {
    doc.switchToPage(i);
    const bottom = doc.page.margins.bottom;
    doc.page.margins.bottom = 0;
    doc
      .font('Helvetica')
      .fontSize(7)
      .fillColor('#6b7280')
      .text(`Compliance export · tenant ${pkg.package.tenant_id} · generated ${pkg.package.generated_at} · page ${i + 1 - range.start} of ${range.count}`, MARGIN, doc.page.height - 30, {
        width: doc.page.width - 2 * MARGIN,
        align: 'center',
        lineBreak: false,
      });
    doc.page.margins.bottom = bottom;
  }
  doc.end();
  return done;
}
