/**
 * A decision event whose publish fails is not lost: it waits in the Postgres outbox and the relay publishes
 * it once the stream exists again. Real NATS JetStream and real Postgres.
 */
import { randomUUID } from 'node:crypto';
import { type Bus, type Db, TEST_NATS_URL, closeTestBus, createLogger, openTestDb, sampleDecisionEvent, streams } from '@agw/shared';
import { connect } from 'nats';
import { DecisionPublisher } from '../src/events/decision-publisher';
import { EventOutboxRepository } from '../src/events/event-outbox.repository';

let db: Db;
let bus: Bus;
const prefix = `OBX${randomUUID().replace(/-/g, '').slice(0, 10)}`;

beforeAll(async () => {
  db = await openTestDb();
  const nc = await connect({ servers: TEST_NATS_URL });
  // a bus whose streams do not exist yet: every JetStream publish fails (no stream answers)
  bus = { nc, js: nc.jetstream(), prefix, close: () => nc.drain() };
});
afterAll(async () => {
  await closeTestBus(bus);
  await db.destroy();
});

const event = (tenant: string) => sampleDecisionEvent(tenant);

it('keeps an unpublishable event in the outbox and relays it once the bus takes it again', async () => {
  const outbox = new EventOutboxRepository(db, 'gateway');
  const publisher = new DecisionPublisher(bus, outbox, createLogger('test', 'silent'));
  const tenant = randomUUID();
  const e = event(tenant);
  await expect(publisher.publish(e)).resolves.toBeUndefined(); // never fails the caller
  const rows = await db.selectFrom('event_outbox').select(['subject', 'event', 'attempts']).where('subject', '=', `${prefix}.decisions.${tenant}.allowed`).execute();
  expect(rows).toHaveLength(1);
  expect(rows[0].event).toMatchObject({ action_id: e.action_id, tenant_id: tenant });
  expect(await publisher.relay()).toBe(0); // still no stream: stays

  const jsm = await bus.nc.jetstreamManager();
  const def = streams(prefix).decisions;
  await jsm.streams.add({ name: def.name, subjects: def.subjects });
  expect(await publisher.relay()).toBeGreaterThanOrEqual(1);
  expect(await db.selectFrom('event_outbox').select('id').where('subject', '=', `${prefix}.decisions.${tenant}.allowed`).execute()).toHaveLength(0);
  const msg = await jsm.streams.getMessage(def.name, { last_by_subj: `${prefix}.decisions.${tenant}.allowed` });
  expect(JSON.parse(new TextDecoder().decode(msg.data))).toMatchObject({ action_id: e.action_id, event_id: rows[0].event.event_id });
});

it('never relays a row the audit service owns, however old; a row of a gateway that died is relayed by the next one', async () => {
  const jsm = await bus.nc.jetstreamManager();
  const def = streams(prefix).decisions;
  await jsm.streams.add({ name: def.name, subjects: def.subjects }).catch(() => undefined); // exists after the test above
  const tenant = randomUUID();
  const subject = `${prefix}.decisions.${tenant}.allowed`;
  const e = { ...event(tenant), event_id: randomUUID() };
  // as audit_append_batch writes it: no owner given (the column's default, 'audit'), attempts 0
  const [row] = await db.insertInto('event_outbox').values({ subject, event: JSON.stringify(e), attempts: 0 }).returning(['id', 'owner']).execute();
  expect(row.owner).toBe('audit');
  const publisher = new DecisionPublisher(bus, new EventOutboxRepository(db, 'gateway'), createLogger('test', 'silent'));
  expect(await publisher.relay()).toBe(0);
  await db.updateTable('event_outbox').set({ created_at: new Date(Date.now() - 60_000) }).where('id', '=', row.id).execute();
  expect(await publisher.relay()).toBe(0); // an hour or a minute: the audit service's sweep publishes it, no one else
  expect(await db.selectFrom('event_outbox').select('id').where('id', '=', row.id).execute()).toHaveLength(1);
  await db.deleteFrom('event_outbox').where('id', '=', row.id).execute();

  // a gateway replica wrote a failed publish and died: another replica (or itself restarted) relays it
  const e2 = { ...event(tenant), event_id: randomUUID() };
  await new EventOutboxRepository(db, 'gateway').add(subject, e2, 'bus away');
  const managedRelay = new DecisionPublisher(bus, new EventOutboxRepository(db, 'managed'), createLogger('test', 'silent'));
  expect(await managedRelay.relay()).toBe(0); // not the managed service's
  const next = new DecisionPublisher(bus, new EventOutboxRepository(db, 'gateway'), createLogger('test', 'silent'));
  expect(await next.relay()).toBe(1);
  expect(await db.selectFrom('event_outbox').select('id').where('subject', '=', subject).execute()).toHaveLength(0);
  const msg = await jsm.streams.getMessage(def.name, { last_by_subj: subject });
  expect(JSON.parse(new TextDecoder().decode(msg.data))).toMatchObject({ event_id: e2.event_id, action_id: e2.action_id });
});
