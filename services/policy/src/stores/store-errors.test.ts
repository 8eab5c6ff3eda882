/** Integration: an unreachable Postgres becomes a DependencyUnavailableError (real socket, closed port). */
import { randomUUID } from 'node:crypto';
import { DependencyUnavailableError, InputError, createDb } from '@agw/shared';
import { TenantPolicyRepository } from '../bundles/tenant-policy.repository';
import { isConnectionError, postgres } from './store-errors';

test('Postgres down -> DependencyUnavailableError; other errors unchanged', async () => {
  const db = createDb('postgres://postgres@127.0.0.1:1/agw_test');
  try {
    await expect(postgres(() => new TenantPolicyRepository(db).get(randomUUID()))).rejects.toBeInstanceOf(DependencyUnavailableError);
  } finally {
    await db.destroy();
  }
  await expect(postgres(async () => Promise.reject(InputError.at(['x'], 'bad')))).rejects.toBeInstanceOf(InputError);
  expect(isConnectionError(new Error('syntax error at or near'))).toBe(false);
});
