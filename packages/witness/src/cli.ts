#!/usr/bin/env node
/**
 * agw-witness: run a witness of the gateway's logs on any machine.
 *
 *   agw-witness keygen --name witness.example.com/w1 --out witness.key     # prints the verifier key to publish
 *   agw-witness serve --key witness.key --state witness-state.json [--host 0.0.0.0] [--port 7380]
 *                     [--log <log verifier key>]... [--pin-prefix gateway.example.com/agw/]
 *
 * `--log` trusts one log (its origin is the key's name); `--pin-prefix` trusts every log whose origin starts
 * with the prefix, pinning its key on first contact (the gateway has one log per tenant).
 */
import fs from 'node:fs';
import { parseVerifierKey } from '@agw/verifier';
import { serveWitness } from './server';
import { Witness } from './witness';
import { newWitnessKeyFile, parseWitnessKeyFile } from './witness-key';
import { FileWitnessStore } from './witness-store';

const args = process.argv.slice(2);
const opt = (n: string) => {
  const i = args.indexOf(`--${n}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const all = (n: string) => args.flatMap((a, i) => (a === `--${n}` && args[i + 1] ? [args[i + 1]] : []));
const usage = () => {
  process.stderr.write('usage: agw-witness keygen --name <name> --out <file> | serve --key <file> --state <file> [--host H] [--port P] [--log <vkey>]... [--pin-prefix <origin prefix>]\n');
  process.exit(2);
};

async function main() {
  const cmd = args[0];
  if (cmd === 'keygen') {
    const name = opt('name');
    const out = opt('out');
    if (!name || !out) usage();
    if (!fs.existsSync(out!)) fs.writeFileSync(out!, newWitnessKeyFile(name!), { mode: 0o600 });
    process.stdout.write(`${parseWitnessKeyFile(fs.readFileSync(out!, 'utf8')).vkey}\n`);
    return;
  }
  if (cmd !== 'serve') usage();
  const keyFile = opt('key');
  const stateFile = opt('state');
  if (!keyFile || !stateFile) usage();
  const key = parseWitnessKeyFile(fs.readFileSync(keyFile!, 'utf8'));
  const logs = new Map<string, ReturnType<typeof parseVerifierKey>[]>();
  for (const v of all('log')) {
    const k = parseVerifierKey(v);
    logs.set(k.name, [...(logs.get(k.name) ?? []), k]);
  }
  const witness = new Witness({ key, store: new FileWitnessStore(stateFile!), logs, pinPrefix: opt('pin-prefix') });
  const running = await serveWitness(witness, { host: opt('host') ?? '127.0.0.1', port: Number(opt('port') ?? 7380) });
  process.stdout.write(`agw-witness ${key.vkey} listening on ${running.url} (${logs.size} configured logs${opt('pin-prefix') ? `, pinning logs under ${opt('pin-prefix')}` : ''})\n`);
  const stop = () => void running.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((e: unknown) => {
  process.stderr.write(`agw-witness: ${(e as Error).message}\n`);
  process.exit(1);
});
