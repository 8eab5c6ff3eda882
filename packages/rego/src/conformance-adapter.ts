/**
 * Adapter for OPA's conformance runner (run-conformance.mjs; README "Conformance"): `evalQuery` /
 * `evalQuerySync` compile a case's modules (named `test-<i>.rego`) and run its query with its data and
 * input, returning OPA's result set; `inputTerm` is an input given as Rego text (it may hold sets), read
 * with `parseValue`. Errors propagate as `RegoError` / `RegoCompileError` for the runner to compare with
 * the expected error. The default export is `{ evalQuery }`. Used by the conformance scripts and
 * test/conformance.test.ts only, not exported from the package index.
 */
import { compile, parseValue, RegoError } from './index.js';
import type { Value } from './value.js';

export interface ConformanceRequest {
  modules: string[];
  query: string;
  data?: unknown;
  input?: unknown;
  inputTerm?: string;
  strictBuiltinErrors?: boolean;
}

export async function evalQuery(req: ConformanceRequest): Promise<Array<Record<string, unknown>>> {
  return evalQuerySync(req);
}

export function evalQuerySync(req: ConformanceRequest): Array<Record<string, unknown>> {
  const policy = compile(req.modules.map((source, i) => ({ name: `test-${i}.rego`, source })));
  let inputValue: Value | undefined;
  if (req.inputTerm !== undefined) inputValue = parseValue(req.inputTerm);
  try {
    return policy.query(req.query, { data: req.data ?? {}, input: req.input, strictBuiltinErrors: !!req.strictBuiltinErrors }, inputValue);
  } catch (e) {
    if (e instanceof RegoError) throw e;
    throw e;
  }
}

export default { evalQuery };
