import { definitionDiff, definitionSha256, pinnedForm } from './tool-definition';

const weather = { name: 'weather', title: 'Weather', description: 'Weather for a city.', inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, annotations: { readOnlyHint: true } };

describe('tool definition', () => {
  test('the pinned form keeps the six fields and nothing else', () => {
    expect(pinnedForm({ ...weather, _meta: { x: 1 }, icons: [{ src: 'a.png' }], execution: { taskSupport: 'optional' } })).toEqual(weather);
    expect(pinnedForm({ name: 'bare' })).toEqual({ name: 'bare', inputSchema: { type: 'object' } });
  });

  test('the fingerprint is the SHA-256 of the canonical form: key order and _meta do not change it, a description does', () => {
    const sha = definitionSha256(weather);
    expect(sha).toMatch(/^[0-9a-f]{64}$/);
    const reordered = { annotations: { readOnlyHint: true }, inputSchema: { required: ['city'], properties: { city: { type: 'string' } }, type: 'object' }, description: 'Weather for a city.', title: 'Weather', name: 'weather' };
    expect(definitionSha256(reordered)).toBe(sha);
    expect(definitionSha256({ ...weather, _meta: { v: 2 } } as never)).toBe(sha);
    expect(definitionSha256({ ...weather, description: 'Weather for a city!' })).not.toBe(sha);
  });

  test('the diff names each changed leaf with before and after', () => {
    const after = { ...weather, description: 'changed', inputSchema: { type: 'object', properties: { city: { type: 'string', description: 'the city' }, 'odd key': { type: 'number' } }, required: ['city', 'odd key'] } };
    delete (after as { annotations?: unknown }).annotations;
    expect(definitionDiff(weather, after)).toEqual([
      { path: 'annotations', before: { readOnlyHint: true } },
      { path: 'description', before: 'Weather for a city.', after: 'changed' },
      { path: 'inputSchema.properties.city.description', after: 'the city' },
      { path: 'inputSchema.properties["odd key"]', after: { type: 'number' } },
      { path: 'inputSchema.required[1]', after: 'odd key' },
    ]);
    expect(definitionDiff(weather, weather)).toEqual([]);
  });

  test('without a pinned definition every field is new; long texts are clipped', () => {
    expect(definitionDiff(null, weather).map((c) => c.path)).toEqual(['annotations', 'description', 'inputSchema', 'name', 'title']);
    const long = definitionDiff(weather, { ...weather, description: 'x'.repeat(5000) })[0];
    expect((long.after as string).length).toBe(2001);
  });
});
