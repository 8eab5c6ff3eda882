/** Picks the key backend from config: PKCS#11 (preparing the local SoftHSM2 token first) or Vault Transit. */
import type { VaultConfig } from '../config';
import type { HsmBackend } from './hsm-backend';
import { Pkcs11Hsm } from './pkcs11-hsm';
import { isSoftHsmLibrary, prepareSoftHsm } from './softhsm-token';
import { VaultTransitHsm } from './vault-transit-hsm';

export type HsmConfig = Pick<
  VaultConfig,
  'backend' | 'pkcs11Library' | 'pkcs11TokenLabel' | 'pkcs11Pin' | 'pkcs11SoPin' | 'softhsmInit' | 'softhsmConf' | 'transitAddr' | 'transitToken' | 'transitMount'
>;

export function createHsm(c: HsmConfig): HsmBackend {
  if (c.backend === 'transit') return new VaultTransitHsm({ endpoint: c.transitAddr!, token: c.transitToken!, mount: c.transitMount });
  if (c.softhsmInit && isSoftHsmLibrary(c.pkcs11Library)) {
    prepareSoftHsm({ confPath: c.softhsmConf, tokenLabel: c.pkcs11TokenLabel, pin: c.pkcs11Pin, soPin: c.pkcs11SoPin });
  }
  return Pkcs11Hsm.open({ library: c.pkcs11Library, tokenLabel: c.pkcs11TokenLabel, pin: c.pkcs11Pin });
}
