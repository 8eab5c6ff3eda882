/**
 * The shadow's evaluation thread (a worker_threads Worker, one per policy service process): the candidate
 * policies of running shadows decide the calls the live policy answered, here, so the main thread that
 * answers governed calls never runs a candidate's Rego (a slow candidate costs the answers nothing). It
 * builds each candidate's bundle once (by shadow id) from the same templates and compiler as the live
 * policy (`bundleOf`), and answers every batch with each call's decision, violations and evaluation time.
 * It runs at the lowest CPU priority, so a busy machine serves the answers first.
 */
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import type { PolicyBundle } from '../bundles/policy-bundle';
import { compileCustom } from '../bundles/policy-bundle';
import { type StoredPolicyContent, bundleOf } from '../bundles/tenant-policies';
import { type ToolCallFacts, twoPass } from '../decisions/policy-evaluation';
import { TemplateCatalog } from '../templates/template-catalog';
import type { ShadowBatch, ShadowBatchResult } from './shadow-evaluator';

async function main(): Promise<void> {
  // the lowest CPU priority, for this thread only (Linux priorities are per thread; pid 0 is the caller):
  // on a busy machine the threads answering governed calls go first
  try {
    setPriority(19);
  } catch {
    // not permitted here: the thread keeps the process's priority
  }
  const catalog = await TemplateCatalog.load((workerData as { templatesDir: string }).templatesDir);
  const bundles = new Map<string, PolicyBundle>();
  const bundle = (shadowId: string, content: StoredPolicyContent): PolicyBundle => {
    let b = bundles.get(shadowId);
    if (!b) {
      b = bundleOf(catalog, compileCustom, content, () => undefined);
      if (bundles.size > 100) bundles.delete(bundles.keys().next().value as string);
      bundles.set(shadowId, b);
    }
    return b;
  };
  parentPort!.on('message', (m: ShadowBatch) => {
    void (async () => {
      const out: ShadowBatchResult = { id: m.id, results: [] };
      try {
        const b = bundle(m.shadowId, m.candidate);
        for (const j of m.jobs) {
          const t0 = performance.now();
          const { outcome } = await twoPass(b, j.call as ToolCallFacts, BigInt(j.nowNs), async () => j.behavioral);
          out.results.push({ decision: outcome.decision, violations: outcome.violations, evalMs: performance.now() - t0 });
        }
      } catch (e) {
        out.error = (e as Error).message;
      }
      parentPort!.postMessage(out);
    })();
  });
  parentPort!.postMessage({ ready: true });
}

void main().catch((e: unknown) => {
  parentPort!.postMessage({ fatal: (e as Error).message });
});
