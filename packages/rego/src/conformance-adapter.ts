/* Adapter for OPA's conformance runner (run-conformance.mjs): evalQuery({modules, query, data, input, inputTerm, strictBuiltinErrors}) */
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
