#!/usr/bin/env node
/**
 * agw-verify: checks a tenant's compliance export with nothing but the export and the published
 * verifier key (and, with --rpc, a chain node). One line per check; exit 1 naming the first failure.
 *
 *   agw-verify <export.json> --vkey <vkey or file> [--rpc URL]
 *   agw-verify --statement <note file> --vkey <vkey or file>     (an erasure statement)
 *   agw-verify receipt <receipt.json> --vkey <vkey or file> [--arguments args.json] [--proof proof.json]
 */
import fs from 'node:fs';
import { viemChainReader } from './chain-reader';
import { openNote, parseVerifierKey } from './signed-note';
import type { ComplianceExport } from './export-format';
import { verifyExport } from './verify-export';
import { receiptOf, verifyReceipt } from './verify-receipt';

const USAGE =
  'usage: agw-verify <export.json> --vkey <name+keyhash+base64 | file> [--rpc URL]\n       agw-verify --statement <note file> --vkey <vkey | file>\n' +
  '       agw-verify receipt <receipt.json> --vkey <vkey | file> [--arguments args.json] [--proof proof.json]';

interface Args {
  file?: string;
  vkey?: string;
  rpc?: string;
  statement?: string;
  receipt?: boolean;
  arguments?: string;
  proof?: string;
}

function args(argv: string[]): Args {
  const o: Args = {};
  if (argv[0] === 'receipt') {
    o.receipt = true;
    argv = argv.slice(1);
  }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--vkey') o.vkey = argv[++i];
    else if (a === '--arguments' && o.receipt) o.arguments = argv[++i];
    else if (a === '--proof' && o.receipt) o.proof = argv[++i];
    else if (a === '--rpc') o.rpc = argv[++i];
    else if (a === '--statement') o.statement = argv[++i];
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
  if (o.receipt) return receiptMain(o, key);
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
  for (const r of results) console.log(`${r.ok ? 'ok  ' : 'FAIL'} ${r.name}: ${r.detail}`);
  const failed = results.find((r) => !r.ok);
  if (failed) {
    console.log(`verification FAILED at ${failed.name}: ${failed.detail}`);
    return 1;
  }
  console.log(`verified: tenant ${doc.package.tenant_id}, ${doc.audit_records.length} records, ${doc.evidence?.checkpoints.length ?? 0} signed checkpoints`);
  return 0;
}

function receiptMain(o: Args, key: ReturnType<typeof parseVerifierKey>): number {
  const read = (what: string, file: string): unknown => {
    try {
      return JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (e) {
      throw new Error(`${what}: cannot read ${file}: ${(e as Error).message}`);
    }
  };
  let input;
  try {
    input = {
      receipt: receiptOf(read('receipt', o.file!)),
      ...(o.arguments ? { arguments: read('arguments', o.arguments) } : {}),
      ...(o.proof ? { proof: read('proof', o.proof) as Parameters<typeof verifyReceipt>[0]['proof'] } : {}),
    };
  } catch (e) {
    console.log(`FAIL receipt: ${(e as Error).message}`);
    return 1;
  }
  const { results, receipt } = verifyReceipt(input, key);
  for (const r of results) console.log(`${r.ok ? 'ok  ' : 'FAIL'} ${r.name}: ${r.detail}`);
  const failed = results.find((r) => !r.ok);
  if (failed) {
    console.log(`verification FAILED at ${failed.name}: ${failed.detail}`);
    return 1;
  }
  const not = [o.arguments ? '' : 'arguments (no --arguments)', o.proof ? '' : 'inclusion (no --proof)'].filter(Boolean);
  console.log(`verified: receipt of record ${receipt!.record} of ${receipt!.origin}${not.length ? `; not checked: ${not.join(', ')}` : ''}`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.log(`FAIL internal: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  },
);
