/**
 * Hands batches of calls to the shadow's evaluation thread (shadow-worker.ts) and gives back the
 * candidate's decisions. One batch at a time per thread: the thread is the bound on the CPU the candidates
 * take, whatever the traffic; what waits meanwhile is the queue in PolicyShadows (bounded, dropping and
 * counting beyond it). A thread that dies is started again for the next batch.
 */
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { StoredPolicyContent } from '../bundles/tenant-policies';

export interface ShadowJob {
  /** ToolCallFacts (plaintext params: kept in memory only, never stored) */
  call: unknown;
  /** the behavioral data the live decision saw (pass 2), or null */
  behavioral: Record<string, unknown> | null;
  /** the live decision's evaluation time, as a decimal string of nanoseconds */
  nowNs: string;
}

export interface ShadowBatch {
  id: number;
  shadowId: string;
  candidate: StoredPolicyContent;
  jobs: ShadowJob[];
}

export interface CandidateResult {
  decision: string;
  violations: string[];
  evalMs: number;
}

export interface ShadowBatchResult {
  id: number;
  results: CandidateResult[];
  error?: string;
}

export interface CandidateEvaluator {
  evaluate(shadowId: string, candidate: StoredPolicyContent, jobs: ShadowJob[]): Promise<CandidateResult[]>;
  close(): Promise<void>;
}

/** `workerFile`: the compiled shadow-worker.js (tests run from sources and pass the built one). */
export function workerCandidateEvaluator(templatesDir: string, workerFile = path.join(__dirname, 'shadow-worker.js')): CandidateEvaluator {
  let worker: Worker | null = null;
  let ready: Promise<void> | null = null;
  let seq = 0;
  const waiting = new Map<number, { resolve: (r: CandidateResult[]) => void; reject: (e: Error) => void }>();
  const start = () => {
    const w = new Worker(workerFile, { workerData: { templatesDir } });
    worker = w;
    ready = new Promise<void>((resolve, reject) => {
      w.on('message', (m: ShadowBatchResult | { ready: true } | { fatal: string }) => {
        if ('ready' in m) return resolve();
        if ('fatal' in m) return reject(new Error(`shadow worker failed to start: ${m.fatal}`));
        const p = waiting.get(m.id);
        if (!p) return;
        waiting.delete(m.id);
        if (m.error) p.reject(new Error(m.error));
        else p.resolve(m.results);
      });
      w.on('error', (e) => reject(e));
      w.on('exit', () => {
        if (worker === w) worker = null;
        for (const [, p] of waiting) p.reject(new Error('shadow worker exited'));
        waiting.clear();
      });
    });
    ready.catch(() => undefined);
    w.unref();
  };
  return {
    async evaluate(shadowId, candidate, jobs) {
      if (!worker) start();
      await ready;
      const id = ++seq;
      return new Promise<CandidateResult[]>((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        worker!.postMessage({ id, shadowId, candidate, jobs } satisfies ShadowBatch);
      });
    },
    async close() {
      const w = worker;
      worker = null;
      if (w) await w.terminate();
    },
  };
}
