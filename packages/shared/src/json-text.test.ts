/** The one codec of free-form `*_json` fields: written one way, read with a precise error (the caller's in a request, internal in an answer). */
import { AppError, InputError } from './errors';
import { fromAnswerJsonText, fromJsonText, jsonText, objectFromAnswerJsonText, objectFromJsonText } from './json-text';

const issueOf = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return e instanceof InputError ? e.issues[0] : e;
  }
  return undefined;
};

test('a value is its JSON text; no value (undefined) is the empty string; null is JSON', () => {
  expect(jsonText({ b: 1, a: [1, 'x', null], big: '12345678901234567890' })).toBe('{"b":1,"a":[1,"x",null],"big":"12345678901234567890"}');
  expect(jsonText(null)).toBe('null');
  expect(jsonText('s')).toBe('"s"');
  expect(jsonText(undefined)).toBe('');
});

test('read back: any JSON value; the empty field is the caller’s default', () => {
  for (const v of [{ a: { b: [1, 2] } }, [1], 'text', 0, false, null]) expect(fromJsonText(jsonText(v), 'params_json')).toEqual(v);
  expect(fromJsonText('', 'params_json')).toBeUndefined();
  expect(fromJsonText('', 'params_json', null)).toBeNull();
  expect(objectFromJsonText('', 'params_json')).toEqual({});
  expect(objectFromJsonText('{"k":"v"}', 'params_json')).toEqual({ k: 'v' });
});

test('text that is not JSON, or not the object the field holds, is a 422 naming the field', () => {
  expect(issueOf(() => fromJsonText('{"a":', 'call.params_json'))).toEqual({ loc: ['call.params_json'], msg: expect.stringMatching(/^call\.params_json must be JSON \(.+\)$/), type: 'json_invalid' });
  expect(issueOf(() => objectFromJsonText('[1]', 'metadata'))).toEqual({ loc: ['metadata'], msg: 'metadata must be a JSON object', type: 'object_type' });
  expect(issueOf(() => objectFromJsonText('null', 'metadata'))).toMatchObject({ type: 'object_type' });
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
  for (const e of [errorOf(() => fromAnswerJsonText('{"a":', 'definition_json')), errorOf(() => objectFromAnswerJsonText('[1]', 'definition_json'))]) {
    expect(e).toBeInstanceOf(AppError);
    expect(e).not.toBeInstanceOf(InputError);
    expect(e).toMatchObject({ code: 'internal', detail: 'internal error', message: expect.stringContaining('definition_json') });
  }
  expect(fromAnswerJsonText('', 'body_json', null)).toBeNull();
  expect(objectFromAnswerJsonText('{"k":1}', 'result_json')).toEqual({ k: 1 });
});
