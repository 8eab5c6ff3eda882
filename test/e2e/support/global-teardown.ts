/**
 * Stops the e2e fleet started by global-setup, after the contract test: every response the run saw
 * (support/api.ts) is checked against the OpenAPI document the fleet serves (support/contract-check.mjs);
 * a violation fails the run. E2E_CONTRACT=off skips the check (e.g. while debugging one file).
 */
import type { ChildProcess } from 'node:child_process';
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { E2E_BASE_URL, E2E_CONTRACT_LOG } from './e2e-env';
import { stopFleetProcess } from './fleet-process';

async function fetchDocument(): Promise<string | undefined> {
  try {
    const res = await fetch(`${E2E_BASE_URL}/openapi.json`);
    return res.ok ? await res.text() : undefined;
  } catch {
    return undefined;
  }
}

export default async function globalTeardown(): Promise<void> {
  const check = process.env.E2E_CONTRACT !== 'off' && existsSync(E2E_CONTRACT_LOG);
  const doc = check ? await fetchDocument() : undefined;
  await stopFleetProcess((globalThis as { __FLEET__?: ChildProcess }).__FLEET__);
  if (!check) return;
  if (!doc) throw new Error('contract test: the fleet did not serve /api/openapi.json at the end of the run');
  const docFile = `${E2E_CONTRACT_LOG}.openapi.json`;
  writeFileSync(docFile, doc);
  const r = spawnSync(process.execPath, [path.join(__dirname, 'contract-check.mjs'), docFile, E2E_CONTRACT_LOG], { cwd: __dirname, encoding: 'utf8' });
  process.stdout.write(r.stdout ?? '');
  if (r.status !== 0) throw new Error(`contract test failed (OpenAPI document vs the responses of this run):\n${r.stderr || r.error}`);
}
