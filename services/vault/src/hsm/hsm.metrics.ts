/**
 * HSM health as Prometheus metrics, by wrapping the backend: `agw_vault_hsm_errors_total{operation}`
 * counts backend failures (a missing key or a ciphertext that does not authenticate are answers, not
 * errors), and `agw_vault_hsm_up` is 1 when the backend answers a key look-up at scrape time, 0 when it
 * does not (the alert AgwHsmUnavailable). Operation names are a fixed set; no tenant label.
 */
import { Counter, Gauge, type Registry } from '@agw/shared';
import { DecryptionFailedError, type HsmBackend, KeyMissingError } from './hsm-backend';

const PROBE_LABEL = 'agw:readiness-probe';
const PROBE_TIMEOUT_MS = 2000;

export function instrumentHsm(hsm: HsmBackend, registry: Registry): HsmBackend {
  const errors = new Counter({ name: 'agw_vault_hsm_errors_total', help: 'HSM backend operations that failed, by operation', labelNames: ['operation'], registers: [registry] });
  const operations = ['ensure_key', 'key_exists', 'encrypt', 'decrypt', 'hmac', 'destroy_key', 'sign'] as const;
  for (const operation of operations) errors.inc({ operation }, 0);
  new Gauge({
    name: 'agw_vault_hsm_up',
    help: 'Whether the HSM backend answered a key look-up at scrape time (1) or not (0)',
    registers: [registry],
    async collect() {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('HSM probe timed out')), PROBE_TIMEOUT_MS);
      });
      try {
        await Promise.race([hsm.keyExists(PROBE_LABEL), timeout]);
        this.set(1);
      } catch {
        this.set(0);
      } finally {
        clearTimeout(timer);
      }
    },
  });

  const counted =
    <A extends unknown[], R>(operation: (typeof operations)[number], fn: (...a: A) => Promise<R>) =>
    async (...a: A): Promise<R> => {
      try {
        return await fn(...a);
      } catch (e) {
        if (!(e instanceof KeyMissingError || e instanceof DecryptionFailedError)) errors.inc({ operation });
        throw e;
      }
    };
  return {
    get name() {
      return hsm.name;
    },
    ensureKey: counted('ensure_key', (label, kind) => hsm.ensureKey(label, kind)),
    keyExists: counted('key_exists', (label) => hsm.keyExists(label)),
    encrypt: counted('encrypt', (label, plaintext, aad) => hsm.encrypt(label, plaintext, aad)),
    decrypt: counted('decrypt', (label, sealed, aad) => hsm.decrypt(label, sealed, aad)),
    hmac: counted('hmac', (label, data) => hsm.hmac(label, data)),
    destroyKey: counted('destroy_key', (label) => hsm.destroyKey(label)),
    info: () => hsm.info(),
    close: () => hsm.close(),
    ...(hsm.ensureEd25519Key && hsm.signEd25519
      ? {
          ensureEd25519Key: counted('ensure_key', (label: string) => hsm.ensureEd25519Key!(label)),
          signEd25519: counted('sign', (label: string, data: Buffer) => hsm.signEd25519!(label, data)),
        }
      : {}),
  };
}
