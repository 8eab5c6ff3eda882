#!/usr/bin/env node
/**
 * agw-verify: checks a tenant's compliance export with nothing but the export and the published
 * verifier key (and, with --rpc, a chain node). One line per check; exit 1 naming the first failure.
 *
 *   agw-verify <export.json> --vkey <vkey or file> [--rpc URL] [--witness <witness vkey or file>]... [--witness-quorum k]
 *   agw-verify --statement <note file> --vkey <vkey or file>     (an erasure statement)
 *   agw-verify receipt <receipt.json> --vkey <vkey or file> [--arguments args.json] [--proof proof.json] [--witness …]... [--witness-quorum k]
 */
import fs from 'node:fs';
import { viemChainReader } from './chain-reader';
import { openNote, parseVerifierKey } from './signed-note';
import type { ComplianceExport } from './export-format';
import { verifyExport } from './verify-export';
import { receiptOf, verifyReceipt } from './verify-receipt';
import { type CosignerKey, checkWitnessPolicy, parseCosignerKey } from './cosignature';
import { verifyWitnesses } from './verify-witnesses';

const USAGE =
  'usage: agw-verify <export.json> --vkey <name+keyhash+base64 | file> [--rpc URL] [--witness <vkey | file>]... [--witness-quorum k]\n' +
  '       agw-verify --statement <note file> --vkey <vkey | file>\n' +
  '       agw-verify receipt <receipt.json> --vkey <vkey | file> [--arguments args.json] [--proof proof.json] [--witness <vkey | file>]... [--witness-quorum k]';

interface Args {
  file?: string;
  vkey?: string;
  rpc?: string;
  statement?: string;
  receipt?: boolean;
  arguments?: string;
  proof?: string;
  witnesses: string[];
  quorum?: number;
}

function args(argv: string[]): Args {
  const o: Args = { witnesses: [] };
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
  let witnesses: CosignerKey[] = [];
  try {
    witnesses = o.witnesses.map((w) => parseCosignerKey(readVkey(w)));
  } catch (e) {
    console.log(`FAIL witness key: ${(e as Error).message}`);
    return 1;
  }
  const quorum = o.quorum ?? witnesses.length;
  if (witnesses.length && (!Number.isInteger(quorum) || quorum < 1 || quorum > witnesses.length)) {
    console.error(`--witness-quorum must be a whole number from 1 to the number of witnesses (${witnesses.length})`);
    return 2;
  }
  if (o.receipt) return receiptMain(o, key, witnesses, quorum);
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
  if (witnesses.length) results.push(verifyWitnesses(doc, witnesses, quorum));
  for (const r of results) console.log(`${r.ok ? 'ok  ' : 'FAIL'} ${r.name}: ${r.detail}`);
  const failed = results.find((r) => !r.ok);
  if (failed) {
    console.log(`verification FAILED at ${failed.name}: ${failed.detail}`);
    return 1;
  }
  console.log(`verified: tenant ${doc.package.tenant_id}, ${doc.audit_records.length} records, ${doc.evidence?.checkpoints.length ?? 0} signed checkpoints`);
  return 0;
}

function receiptMain(o: Args, key: ReturnType<typeof parseVerifierKey>, witnesses: CosignerKey[], quorum: number): number {
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
  // the witnesses of the checkpoint the proof leads to (its note with the cosignature lines)
  if (witnesses.length) {
    const cosigned = (input.proof as { checkpoint?: string } | undefined)?.checkpoint;
    if (!cosigned) results.push({ name: 'witnesses', ok: false, detail: 'a witness policy needs --proof with the checkpoint and its cosignatures' });
    else {
      try {
        const r = checkWitnessPolicy(cosigned, witnesses, quorum);
        results.push(
          r.ok
            ? { name: 'witnesses', ok: true, detail: `${r.cosigned.length} of ${witnesses.length} witnesses cosigned the proof's checkpoint (policy ${quorum} of ${witnesses.length}): ${r.cosigned.map((c) => c.name).join(', ')}` }
            : { name: 'witnesses', ok: false, detail: `only ${r.cosigned.length} of the ${quorum} cosignatures the policy needs on the proof's checkpoint; missing: ${r.missing.join(', ')}` },
        );
      } catch (e) {
        results.push({ name: 'witnesses', ok: false, detail: `a cosignature of the proof's checkpoint is invalid: ${(e as Error).message}` });
      }
    }
  }
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
