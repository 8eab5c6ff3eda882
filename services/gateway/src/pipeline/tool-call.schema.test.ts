import { InputError } from '@agw/shared';
import { parseWith } from '../http/validation';
import { MAX_PARAMS_BYTES, toolCallSchema } from './tool-call.schema';

const valid = { agent_id: 'agent.1_x-y', agent_type: 'assistant', agent_version: '1.2.3-beta', tool: 't', method: 'm', params: {} };

function issues(body: unknown) {
  try {
    parseWith(toolCallSchema, body, 'body');
  } catch (e) {
    if (e instanceof InputError) return e.issues;
    throw e;
  }
  return [];
}

describe('tool call request schema (spec field table)', () => {
  it('accepts a valid request', () => {
    expect(issues(valid)).toEqual([]);
  });

  it.each([
    ['agent_id', ''],
    ['agent_id', 'a'.repeat(257)],
    ['agent_id', 'has space'],
    ['agent_id', 'slash/no'],
    ['agent_type', ''],
    ['agent_type', 'a'.repeat(129)],
    ['agent_version', '1.2'],
    ['agent_version', 'v1.2.3'],
    ['tool', ''],
    ['tool', 'a'.repeat(257)],
    ['method', ''],
    ['method', 'a'.repeat(257)],
    ['params', []],
    ['params', 'x'],
    ['params', null],
  ])('rejects %s = %j with loc [body, %s]', (field, value) => {
    const list = issues({ ...valid, [field]: value });
    expect(list.length).toBeGreaterThan(0);
    expect(list[0].loc).toEqual(['body', field]);
    expect(typeof list[0].msg).toBe('string');
    expect(typeof list[0].type).toBe('string');
  });

  it('accepts the boundary lengths', () => {
    expect(issues({ ...valid, agent_id: 'a'.repeat(256), agent_type: 'b'.repeat(128), tool: 'c'.repeat(256), method: 'd'.repeat(256) })).toEqual([]);
  });

  it('reports every missing field as "missing"', () => {
    const list = issues({});
    expect(list.map((i) => i.loc[1]).sort()).toEqual(['agent_id', 'agent_type', 'agent_version', 'method', 'params', 'tool']);
    expect(list.every((i) => i.type === 'missing')).toBe(true);
  });

  it('limits params to 64 KB of JSON', () => {
    const fill = (n: number) => ({ s: 'x'.repeat(n - JSON.stringify({ s: '' }).length) });
    expect(JSON.stringify(fill(MAX_PARAMS_BYTES)).length).toBe(MAX_PARAMS_BYTES);
    expect(issues({ ...valid, params: fill(MAX_PARAMS_BYTES) })).toEqual([]);
    const over = issues({ ...valid, params: fill(MAX_PARAMS_BYTES + 1) });
    expect(over[0].loc).toEqual(['body', 'params']);
    expect(over[0].msg).toMatch(/64KB/);
  });

  it('rejects text Postgres cannot store (NUL, lone surrogates) instead of failing later', () => {
    expect(issues({ ...valid, params: { s: 'a\u0000b' } })[0].loc).toEqual(['body', 'params']);
    expect(issues({ ...valid, params: { s: '\ud800' } })[0].loc).toEqual(['body', 'params']);
    expect(issues({ ...valid, params: { s: '😀' } })).toEqual([]);
  });

  it('rejects a body that is not an object', () => {
    expect(issues(undefined)[0].loc).toEqual(['body']);
    expect(issues([1, 2])[0].loc).toEqual(['body']);
  });
});
