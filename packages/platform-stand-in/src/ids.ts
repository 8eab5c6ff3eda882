/** Ids shaped like the real API's (`agent_…`, `env_…`, `vlt_…`, `vcrd_…`, `sesn_…`, `sevt_…`, `req_…`). */
import { randomInt } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export function newId(prefix: string): string {
  let tail = '';
  for (let i = 0; i < 24; i++) tail += ALPHABET[randomInt(ALPHABET.length)];
  return `${prefix}_01${tail}`;
}
