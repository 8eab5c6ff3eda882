/** An error's `detail` across a gRPC hop: through ErrorInfo's bytes and back, as the client saw it. */
import { common } from '@agw/proto';
import { detailFromWire, detailToWire } from './error-detail';
import { InputError } from './errors';

/** `detail` as the peer's client rebuilds it: encoded into the trailer's bytes and decoded. */
const across = (detail: unknown, message = 'the message') =>
  detailFromWire(common.ErrorInfo.decode(common.ErrorInfo.encode({ code: 'x', message, ...detailToWire(detail, message) }).finish()));

test('a text detail crosses as it is, the empty text too', () => {
  expect(across('Action a-1 is already approved')).toBe('Action a-1 is already approved');
  expect(across('')).toBe('');
});

test('validation issues cross with their locations: keys and list indexes keep their types', () => {
  const issues = [
    { loc: ['body', 'policy', 'rules', 0, 'match'], msg: 'Field required', type: 'missing' },
    { loc: ['n'], msg: 'n 1 is refused', type: 'refused' },
    { loc: [], msg: 'nothing', type: 'value_error' },
  ];
  expect(across(issues)).toEqual(issues);
  expect(across(new InputError(issues).detail)).toEqual(issues);
});

test('a number that is no int32 list index crosses as a key; a detail of another shape crosses as the message', () => {
  expect(across([{ loc: [1.5, 2 ** 40], msg: 'm', type: 't' }])).toEqual([{ loc: ['1.5', String(2 ** 40)], msg: 'm', type: 't' }]);
  expect(across({ error: 'rate_limit_exceeded', tenant_id: 't' }, 'rate limit exceeded')).toBe('rate limit exceeded');
  expect(across([{ msg: 'no loc' }], 'invalid')).toBe('invalid');
  expect(across(undefined, 'the message')).toBe('the message');
});

test('an ErrorInfo without a detail (unset oneof) gives the message', () => {
  expect(detailFromWire(common.ErrorInfo.decode(common.ErrorInfo.encode(common.ErrorInfo.fromPartial({ code: 'not_found', message: 'Not found' })).finish()))).toBe('Not found');
});

test('a rolling update: the previous release reads detail_json, and its detail_json alone is read', () => {
  const issues = [{ loc: ['body', 'x', 0], msg: 'Field required', type: 'missing' }];
  // what this release writes carries the previous release's form beside the message
  expect(JSON.parse(detailToWire(issues, 'invalid').detail_json)).toEqual(issues);
  expect(JSON.parse(detailToWire('Not found', 'Not found').detail_json)).toBe('Not found');
  // what the previous release wrote: only detail_json
  const old = (detail_json: string, message = 'the message') => detailFromWire(common.ErrorInfo.decode(common.ErrorInfo.encode(common.ErrorInfo.fromPartial({ code: 'x', message, detail_json })).finish()));
  expect(old(JSON.stringify(issues))).toEqual(issues);
  expect(old(JSON.stringify('Action a-1 is already approved'))).toBe('Action a-1 is already approved');
  expect(old('{"error":"rate_limit_exceeded"}')).toBe('the message');
  expect(old('not json')).toBe('the message');
});
