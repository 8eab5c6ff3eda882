/**
 * The one sweep of event_outbox (EventOutboxRepository.sweep, run by both relays) against the real Postgres:
 * only the owner's rows under the given subject roots (a root's `_` or `%` is a character, not a pattern),
 * oldest first, only rows old enough; published rows deleted, failed ones kept with one attempt more and
 * their error; rows another sweep holds are skipped.
 */
import { randomUUID } from 'node:crypto';
import { EventOutboxRepository, type OutboxRow } from '../src/bus/event-outbox.repository';
import { type Db } from '../src/db/database';
import { openTestDb } from '../src/test-stores';

let db: Db;

beforeAll(async () => {
  db = await openTestDb({ max: 4 });
});
afterAll(() => db.destroy());

/** a fresh root per test, with a `_` in it (a LIKE wildcard when not escaped) */
const freshRoot = () => `OB_${randomUUID().replace(/-/g, '').slice(0, 8)}.decisions.`;
const rowsUnder = (root: string) =>
  db.selectFrom('event_outbox').select(['id', 'subject', 'attempts', 'last_error', 'owner']).where('subject', 'like', `${root.replace(/_/g, '\\_')}%`).orderBy('id').execute();

it('publishes the owner\'s rows under the roots, oldest first; keeps a failed one with its error', async () => {
  const root = freshRoot();
  const gateway = new EventOutboxRepository(db, 'gateway');
  const ids = [randomUUID(), randomUUID(), randomUUID()];
  for (const id of ids) await gateway.add(`${root}t.allowed`, { event_id: id }, 'bus away');
  await new EventOutboxRepository(db, 'managed').add(`${root}t.allowed`, { event_id: randomUUID() }, 'bus away'); // not the gateway's
  // the same subject with another character where the root has `_`: not under the root
  await gateway.add(`${root.replace('_', 'X')}t.allowed`, { event_id: randomUUID() }, 'bus away');

  const seen: string[] = [];
  const published = await gateway.sweep([root], { limit: 10 }, async (row: OutboxRow) => {
    seen.push(row.event.event_id);
    if (row.event.event_id === ids[1]) throw new Error('no stream');
  });
  expect(published).toBe(2);
  expect(seen).toEqual(ids);
  const left = await rowsUnder(root);
  expect(left.map((r) => [r.owner, r.attempts, r.last_error])).toEqual([
    ['gateway', 2, 'no stream'],
    ['managed', 1, 'bus away'],
  ]);
  await db.deleteFrom('event_outbox').where('subject', 'like', `%${root.slice(3)}%`).execute();
});

it('leaves rows younger than the minimum age, and rows another sweep holds', async () => {
  const root = freshRoot();
  const audit = new EventOutboxRepository(db, 'audit');
  const [old, young] = await db
    .insertInto('event_outbox')
    .values([
      { subject: `${root}t.allowed`, event: JSON.stringify({ event_id: 'old' }), attempts: 0, created_at: new Date(Date.now() - 60_000) },
      { subject: `${root}t.allowed`, event: JSON.stringify({ event_id: 'young' }), attempts: 0 },
    ])
    .returning('id')
    .execute();
  const none = async () => undefined;
  // a sweep in another replica holds the old row while this one runs
  await db.transaction().execute(async (trx) => {
    await trx.selectFrom('event_outbox').select('id').where('id', '=', old.id).forUpdate().execute();
    expect(await audit.sweep([root], { limit: 10, minAgeMs: 3000 }, none)).toBe(0);
  });
  expect(await audit.sweep([root], { limit: 10, minAgeMs: 3000 }, none)).toBe(1);
  expect((await rowsUnder(root)).map((r) => r.id)).toEqual([young.id]);
  expect(await audit.sweep([root], { limit: 10 }, none)).toBe(1);
  expect(await rowsUnder(root)).toEqual([]);
});
