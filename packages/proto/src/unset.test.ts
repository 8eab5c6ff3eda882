import { unsetAsNull, unsetAsUndefined } from './unset';

describe('unset fields of a proto3 message', () => {
  const msg = { name: 'n', etag: '', size: 0, count: 3, tag: 'x' };

  it('reads the listed zero values as null, keeps the rest, leaves unlisted fields out', () => {
    expect(unsetAsNull(msg, ['etag', 'size', 'count', 'tag'])).toEqual({ etag: null, size: null, count: 3, tag: 'x' });
  });

  it('reads the listed zero values as undefined', () => {
    const r = unsetAsUndefined(msg, ['etag', 'size', 'tag']);
    expect(r).toEqual({ etag: undefined, size: undefined, tag: 'x' });
    expect(Object.keys(r)).toEqual(['etag', 'size', 'tag']);
  });
});
