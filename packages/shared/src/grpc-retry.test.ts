/** The one retry loop of peer calls: the same call again on the failures the policy names, within its attempts and budget. */
import { DependencyUnavailableError, NotFoundError } from './errors';
import { withRetry } from './grpc-retry';

function failing(times: number, error: () => Error = () => new DependencyUnavailableError('audit service is unreachable')) {
  const f = { calls: 0, call: async () => (++f.calls <= times ? Promise.reject(error()) : 'ok') };
  return f;
}

it('sends the call again while the peer is unreachable, then answers with its result', async () => {
  const f = failing(2);
  await expect(withRetry(f.call, { budgetMs: 1000, delayMs: 1 })).resolves.toBe('ok');
  expect(f.calls).toBe(3);
});

it('does not send again a call that failed for another reason', async () => {
  const f = failing(1, () => new NotFoundError('no such record'));
  await expect(withRetry(f.call, { budgetMs: 1000, delayMs: 1 })).rejects.toThrow('no such record');
  expect(f.calls).toBe(1);
});

it('stops after its attempts, with the last error', async () => {
  const f = failing(5);
  await expect(withRetry(f.call, { attempts: 3, delayMs: 1 })).rejects.toThrow(/unreachable/);
  expect(f.calls).toBe(3);
});

it('starts no attempt whose wait would end after the budget', async () => {
  const f = failing(100);
  const t0 = Date.now();
  await expect(withRetry(f.call, { budgetMs: 120, delayMs: 50, maxDelayMs: 50 })).rejects.toThrow(/unreachable/);
  // attempts at 0, 50 and 100 ms (fewer on a slow timer); a wait to 150 would pass the budget
  expect(f.calls).toBeGreaterThanOrEqual(2);
  expect(f.calls).toBeLessThanOrEqual(3);
  expect(Date.now() - t0).toBeLessThan(120 + 200);
});

it('retries what `when` names', async () => {
  const f = failing(2, () => new NotFoundError('not yet'));
  await expect(withRetry(f.call, { attempts: 3, delayMs: 1, when: () => true })).resolves.toBe('ok');
});

it('refuses a policy without a bound', async () => {
  await expect(withRetry(failing(0).call, {})).rejects.toThrow(/attempts or a budget/);
});
