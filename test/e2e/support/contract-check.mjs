/**
 * The contract test: every response the e2e suite saw through support/api.ts (the contract log, JSON
 * lines) must match the OpenAPI document the fleet serves, and the document must be valid OpenAPI 3.1.
 *
 *   node contract-check.mjs <openapi.json> <contract-log.jsonl>
 *
 * For each response: the operation is found by method and path template (a literal segment wins over a
 * parameter); its status must be documented (the exact code; an error status may fall to `default`, the error shape); a JSON body must validate
 * against that response's schema (ajv, JSON Schema 2020-12, with components/schemas as $defs); another
 * media type must be one the response lists. Requests to paths or methods the document does not have
 * (the suite's deliberate 404 and 405 probes) must not succeed. Exits 1 with, per failing operation and
 * status, the first schema error and the test that saw it.
 *
 * Tests that call the gateway with `fetch` themselves (wire details: a gzip body, the signed note as
 * text/plain, the PDF export, refusals of the MCP servers) record their response with `recordRaw`, so
 * their status and media type are checked too. Consciously not covered: the traffic of the MCP SDK client
 * (JSON-RPC over Streamable HTTP: MCP's own schema, checked by the SDK) and calls to the fleet's control
 * port and the agent-platform stand-in (not the gateway's API).
 */
import { readFileSync } from 'node:fs';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { Validator } from '@seriousme/openapi-schema-validator';

const [docFile, logFile] = process.argv.slice(2);
const doc = JSON.parse(readFileSync(docFile, 'utf8'));
const lines = readFileSync(logFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));

const failures = [];
const docCheck = await new Validator().validate(doc);
if (!docCheck.valid) failures.push(`the document is not valid OpenAPI 3.1: ${JSON.stringify(docCheck.errors).slice(0, 2000)}`);

const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
addFormats.default ? addFormats.default(ajv) : addFormats(ajv);
const defs = JSON.parse(JSON.stringify(doc.components?.schemas ?? {}).replaceAll('#/components/schemas/', '#/$defs/'));
const compiled = new Map();
const validatorFor = (key, schema) => {
  if (!compiled.has(key)) {
    const s = JSON.parse(JSON.stringify(schema).replaceAll('#/components/schemas/', '#/$defs/'));
    compiled.set(key, ajv.compile({ ...s, $defs: { ...defs, ...(s.$defs ?? {}) } }));
  }
  return compiled.get(key);
};

// path templates, most literal first
const templates = Object.keys(doc.paths)
  .map((t) => ({ t, params: (t.match(/\{/g) ?? []).length, re: new RegExp(`^${t.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`) }))
  .sort((a, b) => a.params - b.params || b.t.length - a.t.length);

const seen = new Map(); // "METHOD template status" -> count
const firstFailure = new Map();
let unmatched = 0;
for (const r of lines) {
  const path = r.path.split('?')[0].replace(/\/+$/, '') || '/';
  const tpl = templates.find((x) => x.re.test(path));
  const op = tpl && doc.paths[tpl.t][r.method.toLowerCase()];
  if (!op) {
    unmatched++;
    if (r.status < 400) failures.push(`${r.method} ${path} answered ${r.status} but is not in the document (test: ${r.test})`);
    continue;
  }
  const id = `${r.method} ${tpl.t} ${r.status}`;
  seen.set(id, (seen.get(id) ?? 0) + 1);
  const key = String(r.status);
  // a success must be documented as such; an error may fall to `default` (the error shape)
  const resp = op.responses[key] ?? op.responses[`${key[0]}XX`] ?? (r.status >= 400 ? op.responses.default : undefined);
  const fail = (msg) => {
    if (!firstFailure.has(id)) firstFailure.set(id, `${id}: ${msg} (test: ${r.test})`);
  };
  if (!resp) {
    fail('status not documented');
    continue;
  }
  const media = (r.content_type || '').split(';')[0].trim();
  const content = resp.content ?? {};
  if (media === 'application/json' || (media === '' && r.body !== undefined && typeof r.body !== 'string')) {
    const schema = content['application/json']?.schema;
    if (!schema) {
      fail(`JSON body, but the response documents ${Object.keys(content).join(', ') || 'no content'}`);
      continue;
    }
    const validate = validatorFor(`${tpl.t} ${r.method} ${resp === op.responses.default ? 'default' : key}`, schema);
    if (!validate(r.body)) {
      const e = validate.errors[0];
      fail(`body${e.instancePath || ''} ${e.message}${e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : ''}; body: ${JSON.stringify(r.body).slice(0, 300)}`);
    }
  } else if (media && !content[media]) {
    fail(`media type ${media} not documented (documented: ${Object.keys(content).join(', ') || 'none'})`);
  }
}

failures.push(...firstFailure.values());
const ops = new Set([...seen.keys()].map((k) => k.split(' ').slice(0, 2).join(' ')));
console.log(`contract: ${lines.length} responses checked, ${ops.size} operations and ${seen.size} (operation, status) pairs seen, ${unmatched} outside the document (404/405 probes)`);
if (failures.length) {
  console.error(`contract: ${failures.length} violation(s) of the OpenAPI document:\n- ${failures.join('\n- ')}`);
  process.exit(1);
}
