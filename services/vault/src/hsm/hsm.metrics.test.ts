import { Registry } from '@agw/shared';
import { DecryptionFailedError, type HsmBackend, KeyMissingError } from './hsm-backend';
import { instrumentHsm } from './hsm.metrics';

function fakeHsm(over: Partial<HsmBackend> = {}): HsmBackend {
  return {
    name: 'pkcs11',
    ensureKey: async () => false,
    keyExists: async () => true,
    encrypt: async () => ({ alg: 'AES-256-GCM', iv: '', ct: '', tag: '' }),
    decrypt: async () => Buffer.from('x'),
    hmac: async () => Buffer.alloc(32),
    destroyKey: async () => 1,
    info: () => ({ backend: 'pkcs11', tokenLabel: 't', library: 'l', ready: true }),
    close: async () => undefined,
    ...over,
  };
}

async function value(registry: Registry, name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
  const m = (await registry.getMetricsAsJSON()).find((x) => x.name === name);
  return m?.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))?.value;
}

describe('instrumentHsm', () => {
  it('passes calls through and counts backend failures per operation, not missing keys or failed authentication', async () => {
    const registry = new Registry();
    const hsm = instrumentHsm(
      fakeHsm({
        decrypt: async (label) => {
          throw label === 'gone' ? new KeyMissingError(label) : label === 'bad' ? new DecryptionFailedError(label) : new Error('CKR_DEVICE_ERROR');
        },
      }),
      registry,
    );
    expect(hsm.name).toBe('pkcs11');
    expect(await hsm.hmac('k', Buffer.from('d'))).toHaveLength(32);
    const sealed = { alg: 'AES-256-GCM', iv: '', ct: '', tag: '' };
    await expect(hsm.decrypt('gone', sealed, Buffer.alloc(0))).rejects.toBeInstanceOf(KeyMissingError);
    await expect(hsm.decrypt('bad', sealed, Buffer.alloc(0))).rejects.toBeInstanceOf(DecryptionFailedError);
    await expect(hsm.decrypt('k', sealed, Buffer.alloc(0))).rejects.toThrow('CKR_DEVICE_ERROR');
    expect(await value(registry, 'agw_vault_hsm_errors_total', { operation: 'decrypt' })).toBe(1);
    expect(await value(registry, 'agw_vault_hsm_errors_total', { operation: 'encrypt' })).toBe(0);
  });

  it('reports the HSM up when a key look-up answers and down when it fails', async () => {
    const up = new Registry();
    instrumentHsm(fakeHsm(), up);
    expect(await value(up, 'agw_vault_hsm_up')).toBe(1);
    const down = new Registry();
    instrumentHsm(fakeHsm({ keyExists: async () => Promise.reject(new Error('CKR_TOKEN_NOT_PRESENT')) }), down);
    expect(await value(down, 'agw_vault_hsm_up')).toBe(0);
  });
});
