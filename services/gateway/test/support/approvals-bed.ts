/**
 * The approvals' test bed: the real Postgres (migrated), a real NATS connection under a stream prefix of the
 * test's own, the audit service's own definition started in this process (start-audit.ts), and the gateway's
 * DecisionRecorder and ApprovalRepository over them as the gateway wires them.
 */
import { randomUUID } from 'node:crypto';
import { ApprovalRepository, type Bus, type Db, type Logger, TEST_DATABASE_URL, closeTestBus, createLogger, openTestBus, openTestDb } from '@agw/shared';
import { type StartedAudit, startAudit } from '../../../audit/test/support/start-audit';
import { DecisionPublisher } from '../../src/events/decision-publisher';
import { EventOutboxRepository } from '../../src/events/event-outbox.repository';
import { DecisionRecorder } from '../../src/pipeline/decision-recorder';

export interface ApprovalsBed {
  url: string;
  /** the stream prefix of this bed's bus and audit service */
  prefix: string;
  db: Db;
  bus: Bus;
  audit: StartedAudit;
  recorder: DecisionRecorder;
  repo: ApprovalRepository;
  logger: Logger;
  close(): Promise<void>;
}

/** Start the bed; `tag` begins the stream prefix (a few capitals), `name` names the NATS connection. */
export async function startApprovalsBed(tag: string, name: string): Promise<ApprovalsBed> {
  const prefix = `${tag}${randomUUID().replace(/-/g, '').slice(0, 8)}`;
  const logger = createLogger('test', 'silent');
  const db = await openTestDb();
  const bus = await openTestBus(prefix, name);
  const audit = await startAudit({ prefix, env: { DATABASE_URL: TEST_DATABASE_URL } });
  const recorder = new DecisionRecorder(audit.client as never, new DecisionPublisher(bus, new EventOutboxRepository(db, 'gateway'), logger));
  return {
    url: TEST_DATABASE_URL,
    prefix,
    db,
    bus,
    audit,
    recorder,
    repo: new ApprovalRepository(db),
    logger,
    close: async () => {
      await audit.close();
      await closeTestBus(bus);
      await db.destroy();
    },
  };
}
