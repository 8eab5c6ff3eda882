/**
 * Test support beside the started vault (support/start-vault.ts): the test config on the SoftHSM2 token
 * `agw-test`, a second PKCS#11 session on that token, and federations of their own over a started vault's stores.
 */
import { createLogger } from '@agw/shared';
import * as pkcs11js from 'pkcs11js';
import { type VaultConfig, loadVaultConfig } from '../src/config';
import { type FederationWiring, createFederation } from '../src/federation/create-federation';
import type { QuarantineRecorder } from '../src/federation/federation';
import type { VaultApi } from '../src/vault.service';

export function testConfig() {
  return loadVaultConfig({ ...process.env, PKCS11_TOKEN_LABEL: 'agw-test', VAULT_HSM_BACKEND: 'pkcs11', AGW_PROFILE: 'local', LOG_LEVEL: 'silent' });
}

/**
 * Runs `fn` in a second PKCS#11 session on the `agw-test` token, as any other application would open one,
 * to inspect (or, with `write`, add) objects behind the backend's back. PKCS#11 login state is per
 * process, so a backend created in this process has logged the session in already.
 */
export function withTestToken<T>(fn: (p11: pkcs11js.PKCS11, session: Buffer, slot: Buffer) => T, o: { write?: boolean } = {}): T {
  const c = testConfig();
  const p11 = new pkcs11js.PKCS11();
  p11.load(c.pkcs11Library);
  try {
    p11.C_Initialize();
  } catch (e) {
    if (!/ALREADY_INITIALIZED/.test(String(e))) throw e; // initialised by the backend in this process
  }
  const slot = p11.C_GetSlotList(true).find((s) => p11.C_GetTokenInfo(s).label.trim() === c.pkcs11TokenLabel)!;
  const session = p11.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION | (o.write ? pkcs11js.CKF_RW_SESSION : 0));
  try {
    return fn(p11, session, slot);
  } finally {
    p11.C_CloseSession(session);
  }
}

/**
 * The vault's federation over a started vault's (`api`) database and keyring, as vault.service.ts
 * wires it: the test config with 5 s call and connect timeouts, `config` on top; quarantines and changes are dropped
 * unless given. For tests that need several federations with different limits in one file.
 */
export function testFederation(v: Pick<VaultApi, 'db' | 'keyring'>, o: { config?: Partial<VaultConfig>; quarantines?: QuarantineRecorder['record']; changed?: (tenantId: string) => void } = {}): FederationWiring {
  return createFederation({
    config: { ...testConfig(), federationCallTimeoutMs: 5000, federationConnectTimeoutMs: 5000, ...o.config },
    db: v.db,
    keyring: v.keyring,
    quarantines: { record: o.quarantines ?? (async () => undefined) },
    changed: o.changed ?? (() => undefined),
    logger: createLogger('vault-federation-test', 'silent'),
  });
}
