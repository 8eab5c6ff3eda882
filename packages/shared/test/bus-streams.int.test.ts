/**
 * The fleet's streams against the real NATS JetStream: a stream made by an older version (DECISIONS with
 * `decisions.>` only) is given the subjects this version adds (`nohook.decisions.>`) when a service
 * connects, and keeps its messages and its consumers.
 */
import { randomUUID } from 'node:crypto';
import { AckPolicy, connect } from 'nats';
import { connectBus } from '../src/bus/bus';
import { decisionSubjectRoots, streams, subjects } from '../src/bus/events';
import { TEST_NATS_URL } from '../src/test-stores';
const prefix = `ST${randomUUID().replace(/-/g, '').slice(0, 10)}`;

afterAll(async () => {
  const nc = await connect({ servers: TEST_NATS_URL });
  const jsm = await nc.jetstreamManager();
  for (const s of Object.values(streams(prefix))) await jsm.streams.delete(s.name).catch(() => undefined);
  await nc.close();
});

test('decision subjects: two roots, the webhook reads one, the managed service the session-bound ones of both', () => {
  expect(decisionSubjectRoots('')).toEqual(['decisions.', 'nohook.decisions.']);
  expect(subjects.decision('P', 't1', 'allowed')).toBe('P.decisions.t1.allowed');
  expect(subjects.decision('P', 't1', 'allowed', 's1')).toBe('P.decisions.t1.allowed.session');
  expect(subjects.decision('P', 't1', 'denied', null, false)).toBe('P.nohook.decisions.t1.denied');
  expect(subjects.decision('', 't1', 'denied', 's1', false)).toBe('nohook.decisions.t1.denied.session');
  expect(subjects.webhookDecisions('P')).toBe('P.decisions.>');
  expect(subjects.sessionDecisions('P')).toEqual(['P.decisions.*.*.session', 'P.nohook.decisions.*.*.session']);
  expect(streams('P').decisions.subjects).toEqual(['P.decisions.>', 'P.nohook.decisions.>']);
});

test("an older version's DECISIONS stream gets nohook.decisions.> and keeps its messages and consumers", async () => {
  const nc = await connect({ servers: TEST_NATS_URL });
  const jsm = await nc.jetstreamManager();
  const def = streams(prefix).decisions;
  await jsm.streams.add({ name: def.name, subjects: [`${prefix}.decisions.>`] });
  await nc.jetstream().publish(subjects.decision(prefix, 't1', 'allowed'), new TextEncoder().encode('{}'));
  await jsm.consumers.add(def.name, { durable_name: 'old', ack_policy: AckPolicy.Explicit, filter_subject: `${prefix}.decisions.>` });

  const bus = await connectBus(TEST_NATS_URL, prefix, 'bus-streams-test');
  const info = await jsm.streams.info(def.name);
  expect(info.config.subjects).toEqual([`${prefix}.decisions.>`, `${prefix}.nohook.decisions.>`]);
  expect(info.state.messages).toBe(1);
  expect((await jsm.consumers.info(def.name, 'old')).num_pending).toBe(1);
  // both roots are now stored
  await bus.js.publish(subjects.decision(prefix, 't1', 'allowed', null, false), new TextEncoder().encode('{}'));
  expect((await jsm.streams.info(def.name)).state.messages).toBe(2);
  // a second connect changes nothing
  const again = await connectBus(TEST_NATS_URL, prefix, 'bus-streams-test-2');
  expect((await jsm.streams.info(def.name)).config.subjects).toEqual([`${prefix}.decisions.>`, `${prefix}.nohook.decisions.>`]);
  await again.close();
  await bus.close();
  await nc.close();
});
