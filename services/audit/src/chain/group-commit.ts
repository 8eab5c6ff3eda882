/**
 * Group commit of chain appends: appends that arrive while a batch is being committed wait and go
 * together into the next one (one statement, one transaction, one WAL flush; `audit_append_batch`,
 * packages/shared/src/db/functions/audit-append.sql.ts). Nothing waits on a timer: an append that finds no batch in flight is committed at once,
 * so a lone caller pays one round trip and concurrent callers share one. Every caller is answered only
 * after the commit of its batch; within the process, records of a tenant are chained in arrival order
 * (batches run one at a time, the SQL keeps the order inside a batch).
 *
 * A batch that fails with a statement-level error (bad data, constraint) is retried one append at a time,
 * so only the faulty append fails; any other failure (connection lost, possibly during COMMIT) fails the
 * whole batch and is never retried, so an append is never written twice.
 */
import type { AuditRecordRepository, BatchAppend, BatchAppended } from './audit-record.repository';

interface Waiting extends BatchAppend {
  resolve: (r: BatchAppended) => void;
  reject: (e: unknown) => void;
}

export interface GroupCommitOptions {
  /** most appends in one transaction */
  maxBatch?: number;
  /** called after each committed batch (e.g. to publish its outbox events), a turn after its callers are answered */
  onCommitted?: (appended: BatchAppended[]) => void;
}

/** Postgres classes 22 (data exception), 23 (integrity constraint), 42 (syntax/undefined): nothing was committed. */
const statementError = (e: unknown) => /^(22|23|42)/.test(String((e as { code?: string }).code ?? ''));

export class GroupCommit {
  private readonly queue: Waiting[] = [];
  private running = false;
  private readonly maxBatch: number;

  constructor(
    private readonly repo: AuditRecordRepository,
    private readonly opts: GroupCommitOptions = {},
  ) {
    this.maxBatch = opts.maxBatch ?? 256;
  }

  append(a: BatchAppend): Promise<BatchAppended> {
    return new Promise((resolve, reject) => {
      this.queue.push({ ...a, resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length) await this.commit(this.queue.splice(0, this.maxBatch));
    } finally {
      this.running = false;
    }
  }

  private async commit(batch: Waiting[]): Promise<void> {
    let results: BatchAppended[];
    try {
      results = await this.repo.appendBatch(batch);
    } catch (e) {
      if (batch.length > 1 && statementError(e)) {
        for (const w of batch) await this.commit([w]);
      } else for (const w of batch) w.reject(e);
      return;
    }
    batch.forEach((w, i) => w.resolve(results[i]));
    // the callers' answers first: their continuations (the gRPC answers) run as microtasks now, and the
    // batch's events are published a turn of the event loop later, so no answer waits for the publish's
    // work and its write (docs/history/performance-2026.md, "Eighth session")
    if (this.opts.onCommitted) setImmediate(GroupCommit.announce, this.opts.onCommitted, results);
  }

  private static announce(onCommitted: (appended: BatchAppended[]) => void, results: BatchAppended[]): void {
    try {
      onCommitted(results);
    } catch {
      // publishing is best effort: the outbox keeps what was not published
    }
  }
}
