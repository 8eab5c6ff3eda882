/** The one codec of free-form content (the Json message): written one way, read with a precise error (the caller's in a request, internal in an answer). */
import { common, decision } from '@agw/proto';
import { AppError, InputError } from './errors';
import { fromAnswerJson, fromJson, jsonField, jsonOf, objectFromAnswerJson, objectFromJson, toJson, withPreviousJson } from './json-text';

const issueOf = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return e instanceof InputError ? e.issues[0] : e;
  }
  return undefined;
};
const text = (t: string) => ({ text: t });

test('a value is a Json message of its JSON text; no value (undefined) leaves the field unset; null is JSON', () => {
  expect(toJson({ b: 1, a: [1, 'x', null], big: '12345678901234567890' })).toEqual({ text: '{"b":1,"a":[1,"x",null],"big":"12345678901234567890"}' });
  expect(toJson(null)).toEqual({ text: 'null' });
  expect(toJson('s')).toEqual({ text: '"s"' });
  expect(toJson(undefined)).toBeUndefined();
});

test('the text crosses the wire exactly: big integers and any key', () => {
  const t = '{"n":123456789012345678901234567890,"":1,"__proto__":{"x":1}}';
  expect(common.Json.decode(common.Json.encode(text(t)).finish())).toEqual(text(t));
});

test('read back: any JSON value; the unset field (or one with no text) is the caller’s default', () => {
  for (const v of [{ a: { b: [1, 2] } }, [1], 'text', 0, false, null]) expect(fromJson(toJson(v), 'params')).toEqual(v);
  expect(fromJson(undefined, 'params')).toBeUndefined();
  expect(fromJson(text(''), 'params')).toBeUndefined();
  expect(fromJson(undefined, 'params', null)).toBeNull();
  expect(objectFromJson(undefined, 'params')).toEqual({});
  expect(objectFromJson(text('{"k":"v"}'), 'params')).toEqual({ k: 'v' });
});

test('text that is not JSON, or not the object the field holds, is a 422 naming the field', () => {
  expect(issueOf(() => fromJson(text('{"a":'), 'call.params'))).toEqual({ loc: ['call.params'], msg: expect.stringMatching(/^call\.params must be JSON \(.+\)$/), type: 'json_invalid' });
  expect(issueOf(() => objectFromJson(text('[1]'), 'metadata'))).toEqual({ loc: ['metadata'], msg: 'metadata must be a JSON object', type: 'object_type' });
  expect(issueOf(() => objectFromJson(text('null'), 'metadata'))).toMatchObject({ type: 'object_type' });
});

test('in a peer answer, malformed text is an internal error naming the field to the log, never the client\'s invalid input', () => {
  const errorOf = (f: () => unknown) => {
    try {
      f();
    } catch (e) {
      return e;
    }
    return undefined;
  };
  for (const e of [errorOf(() => fromAnswerJson(text('{"a":'), 'definition')), errorOf(() => objectFromAnswerJson(text('[1]'), 'definition'))]) {
    expect(e).toBeInstanceOf(AppError);
    expect(e).not.toBeInstanceOf(InputError);
    expect(e).toMatchObject({ code: 'internal', detail: 'internal error', message: expect.stringContaining('definition') });
  }
  expect(fromAnswerJson(undefined, 'body', null)).toBeNull();
  expect(objectFromAnswerJson(text('{"k":1}'), 'result')).toEqual({ k: 1 });
});

test('for one release, a writer sends the previous release\'s <name>_json text beside the Json field', () => {
  expect(jsonField('params', { q: 1 })).toEqual({ params: { text: '{"q":1}' }, params_json: '{"q":1}' });
  expect(jsonField('body', undefined)).toEqual({ body: undefined, body_json: '' });
  expect(withPreviousJson('params', { text: '{}' })).toEqual({ params: { text: '{}' }, params_json: '{}' });
  // across the wire, as a previous release's peer receives it
  const call = decision.ToolCall.decode(decision.ToolCall.encode(decision.ToolCall.fromPartial(jsonField('params', { q: 1 }))).finish());
  expect(call.params_json).toBe('{"q":1}');
});

test('a reader takes the Json field, or the previous release\'s text when only that is set', () => {
  expect(jsonOf({ params: { text: '{"new":1}' }, params_json: '{"old":1}' }, 'params')).toEqual({ text: '{"new":1}' });
  // a message of the previous release: the text only
  const previous = decision.ToolCall.decode(decision.ToolCall.encode(decision.ToolCall.fromPartial({ params_json: '{"old":1}' })).finish());
  expect(objectFromJson(jsonOf(previous, 'params'), 'params')).toEqual({ old: 1 });
  expect(jsonOf({ params: undefined, params_json: '' }, 'params')).toBeUndefined();
  expect(jsonOf(undefined, 'params')).toBeUndefined();
});
