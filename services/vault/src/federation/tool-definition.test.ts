import { createHash } from 'node:crypto';
import { type ToolDefinition, definitionDiff, definitionSha256, pathJoin, pinnedForm } from './tool-definition';

const weather: ToolDefinition = {
  name: 'weather',
  title: 'Weather',
  description: 'Weather for a city.',
  inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  annotations: { readOnlyHint: true },
};

describe('pinnedForm', () => {
  test('keeps the six pinned fields and nothing else', () => {
    const listed = { ...weather, outputSchema: { type: 'object' }, _meta: { x: 1 }, icons: [{ src: 'a.png' }], execution: { taskSupport: 'optional' } };
    expect(pinnedForm(listed)).toEqual({ ...weather, outputSchema: { type: 'object' } });
  });

  test('omits absent fields (no undefined keys) and defaults the input schema', () => {
    const bare = pinnedForm({ name: 'bare', description: undefined });
    expect(bare).toEqual({ name: 'bare', inputSchema: { type: 'object' } });
    expect(Object.keys(bare)).toEqual(['name', 'inputSchema']);
  });
});

describe('definitionSha256', () => {
  const sha = definitionSha256(weather);

  test('is the SHA-256 of the RFC 8785 canonical JSON of the pinned form', () => {
    const canonical = '{"annotations":{"readOnlyHint":true},"description":"Weather for a city.","inputSchema":{"properties":{"city":{"type":"string"}},"required":["city"],"type":"object"},"name":"weather","title":"Weather"}';
    expect(sha).toBe(createHash('sha256').update(canonical).digest('hex'));
  });

  test('key order and _meta do not change it; a changed description does', () => {
    const reordered = { annotations: { readOnlyHint: true }, inputSchema: { required: ['city'], properties: { city: { type: 'string' } }, type: 'object' }, description: 'Weather for a city.', title: 'Weather', name: 'weather' };
    expect(definitionSha256(reordered)).toBe(sha);
    expect(definitionSha256({ ...weather, _meta: { v: 2 } } as ToolDefinition)).toBe(sha);
    expect(definitionSha256({ ...weather, description: 'Weather for a city!' })).not.toBe(sha);
  });
});

describe('pathJoin', () => {
  test('dots for identifier-like keys, brackets for indexes and every other key', () => {
    expect(pathJoin('', 'description')).toBe('description');
    expect(pathJoin('inputSchema', '$schema')).toBe('inputSchema.$schema');
    expect(pathJoin('inputSchema.required', 1)).toBe('inputSchema.required[1]');
    expect(pathJoin('p', 'odd key')).toBe('p["odd key"]');
    expect(pathJoin('p', 'kebab-case')).toBe('p["kebab-case"]');
    expect(pathJoin('p', '1st')).toBe('p["1st"]');
  });
});

describe('definitionDiff', () => {
  test('one entry per changed leaf, with before and after, sorted by path', () => {
    const after: ToolDefinition = {
      name: 'weather',
      title: 'Weather',
      description: 'changed',
      inputSchema: { type: 'object', properties: { city: { type: 'string', description: 'the city' }, 'odd key': { type: 'number' } }, required: ['city', 'odd key'] },
    };
    expect(definitionDiff(weather, after)).toEqual([
      { path: 'annotations', before: { readOnlyHint: true } },
      { path: 'description', before: 'Weather for a city.', after: 'changed' },
      { path: 'inputSchema.properties.city.description', after: 'the city' },
      { path: 'inputSchema.properties["odd key"]', after: { type: 'number' } },
      { path: 'inputSchema.required[1]', after: 'odd key' },
    ]);
  });

  test('arrays are compared by index; a removed element has only before', () => {
    const before = { ...weather, inputSchema: { type: 'object', required: ['a', 'b', 'c'] } };
    const after = { ...weather, inputSchema: { type: 'object', required: ['a', 'c'] } };
    expect(definitionDiff(before, after)).toEqual([
      { path: 'inputSchema.required[1]', before: 'b', after: 'c' },
      { path: 'inputSchema.required[2]', before: 'c' },
    ]);
  });

  test('no change, no entry; key order is not a change', () => {
    expect(definitionDiff(weather, weather)).toEqual([]);
    expect(definitionDiff(weather, { ...weather, inputSchema: { required: ['city'], type: 'object', properties: { city: { type: 'string' } } } })).toEqual([]);
  });

  test('without a pinned definition, every top-level field is new', () => {
    expect(definitionDiff(null, weather)).toEqual([
      { path: 'annotations', after: { readOnlyHint: true } },
      { path: 'description', after: 'Weather for a city.' },
      { path: 'inputSchema', after: weather.inputSchema },
      { path: 'name', after: 'weather' },
      { path: 'title', after: 'Weather' },
    ]);
  });

  test('texts are clipped to 2000 characters, inside new objects too, never halving a surrogate pair', () => {
    const long = definitionDiff(weather, { ...weather, description: 'x'.repeat(5000) })[0];
    expect(long.after).toBe(`${'x'.repeat(2000)}…`);
    const nested = definitionDiff(null, { ...weather, inputSchema: { type: 'object', description: 'y'.repeat(3000) } }).find((c) => c.path === 'inputSchema');
    expect((nested?.after as { description: string }).description).toHaveLength(2001);
    const emoji = definitionDiff(weather, { ...weather, description: '😀'.repeat(2500) })[0].after as string;
    expect(Array.from(emoji)).toEqual([...Array(2000).fill('😀'), '…']);
  });

  test('at most 200 entries, the first by path, whatever the key order of the input', () => {
    const props = (keys: number[]) => Object.fromEntries(keys.map((i) => [`p${String(i).padStart(4, '0')}`, { type: 'string' }]));
    const ascending = Array.from({ length: 3000 }, (_, i) => i);
    const before = { ...weather, inputSchema: { type: 'object', properties: {} } };
    const a = definitionDiff(before, { ...weather, inputSchema: { type: 'object', properties: props(ascending) } });
    const b = definitionDiff(before, { ...weather, inputSchema: { type: 'object', properties: props([...ascending].reverse()) } });
    expect(a).toHaveLength(200);
    expect(a).toEqual(b);
    expect(a[0].path).toBe('inputSchema.properties.p0000');
    expect(a.map((c) => c.path)).toEqual(a.map((c) => c.path).sort());
  });
});
