#!/usr/bin/env node
/**
 * agw-verify: checks a tenant's compliance export with nothing but the export and the published
 * verifier key (and, with --rpc, a chain node). One line per check; exit 1 naming the first failure.
 *
 *   agw-verify <export.json> --vkey <vkey or file> [--rpc URL] [--witness <witness vkey or file>]... [--witness-quorum k]
 *   agw-verify --statement <note file> --vkey <vkey or file>     (an erasure statement)
 */
import fs from 'node:fs';
import { viemChainReader } from './chain-reader';
import { openNote, parseVerifierKey } from './signed-note';
import type { ComplianceExport } from './export-format';
import { verifyExport } from './verify-export';
import { parseCosignerKey } from './cosignature';
import { verifyWitnesses } from './verify-witnesses';

const USAGE = 'usage: agw-verify <export.json> --vkey <name+keyhash+base64 | file> [--rpc URL] [--witness <vkey | file>]... [--witness-quorum k]\n       agw-verify --statement <note file> --vkey <vkey | file>';

function args(argv: string[]): { file?: string; vkey?: string; rpc?: string; statement?: string; witnesses: string[]; quorum?: number } {
  const o: { file?: string; vkey?: string; rpc?: string; statement?: string; witnesses: string[]; quorum?: number } = { witnesses: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--vkey') o.vkey = argv[++i];
    else if (a === '--rpc') o.rpc = argv[++i];
    else if (a === '--statement') o.statement = argv[++i];
    else if (a === '--witness') o.witnesses.push(argv[++i]);
    else if (a === '--witness-quorum') o.quorum = Number(argv[++i]);
    else if (a === '-h' || a === '--help') {
      console.log(USAGE);
      process.exit(0);
    } else if (!o.file) o.file = a;
    else throw new Error(`unexpected argument ${a}`);
  }
  return o;
}

const readVkey = (v: string) => (fs.existsSync(v) ? fs.readFileSync(v, 'utf8').trim() : v);

async function main(): Promise<number> {
  let o;
  try {
    o = args(process.argv.slice(2));
  } catch (e) {
    console.error(`${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  if (!o.vkey || (!o.file && !o.statement)) {
    console.error(USAGE);
    return 2;
  }
  let key;
  try {
    key = parseVerifierKey(readVkey(o.vkey));
  } catch (e) {
    console.log(`FAIL verifier key: ${(e as Error).message}`);
    return 1;
  }
  if (o.statement) {
    try {
      const text = openNote(fs.readFileSync(o.statement, 'utf8'), key);
      console.log(`ok   erasure statement: signed by ${key.name}`);
      process.stdout.write(text.replace(/^/gm, '     '));
      return 0;
    } catch (e) {
      console.log(`FAIL erasure statement: ${(e as Error).message}`);
      return 1;
    }
  }
  let doc: ComplianceExport;
  try {
    doc = JSON.parse(fs.readFileSync(o.file!, 'utf8')) as ComplianceExport;
  } catch (e) {
    console.log(`FAIL export: cannot read ${o.file}: ${(e as Error).message}`);
    return 1;
  }
  const results = await verifyExport(doc, key, { chain: o.rpc ? viemChainReader(o.rpc) : undefined });
  if (o.witnesses.length) {
    let witnesses;
    try {
      witnesses = o.witnesses.map((w) => parseCosignerKey(readVkey(w)));
    } catch (e) {
      console.log(`FAIL witness key: ${(e as Error).message}`);
      return 1;
    }
    const quorum = o.quorum ?? witnesses.length;
    if (!Number.isInteger(quorum) || quorum < 1 || quorum > witnesses.length) {
      console.error(`--witness-quorum must be a whole number from 1 to the number of witnesses (${witnesses.length})`);
      return 2;
    }
    results.push(verifyWitnesses(doc, witnesses, quorum));
  }
  for (const r of results) console.log(`${r.ok ? 'ok  ' : 'FAIL'} ${r.name}: ${r.detail}`);
  const failed = results.find((r) => !r.ok);
  if (failed) {
    console.log(`verification FAILED at ${failed.name}: ${failed.detail}`);
    return 1;
  }
  console.log(`verified: tenant ${doc.package.tenant_id}, ${doc.audit_records.length} records, ${doc.evidence?.checkpoints.length ?? 0} signed checkpoints`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.log(`FAIL internal: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  },
);
