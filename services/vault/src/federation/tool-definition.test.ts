import { createHash } from 'node:crypto';
import { type ToolDefinition, definitionDiff, definitionOf, definitionSha256, clipText, isLegacyForm, legacyDefinitionSha256, legacyPinnedForm, offeredForm, pathJoin, taskSupportOf } from './tool-definition';

const weather: ToolDefinition = {
  name: 'weather',
  title: 'Weather',
  description: 'Weather for a city.',
  inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  annotations: { readOnlyHint: true },
};

describe('definitionOf', () => {
  test('is the definition as listed: every field, in its key order', () => {
    const listed = { name: 'weather', execution: { taskSupport: 'optional' }, inputSchema: { type: 'object' }, _meta: { x: 1 }, icons: [{ src: 'a.png' }], 'x-later': true };
    expect(definitionOf(listed)).toBe(listed);
    expect(JSON.stringify(definitionOf(listed))).toBe(JSON.stringify(listed));
  });

  test('completes only a missing name or input schema, in the place the field had', () => {
    const bare = definitionOf({ inputSchema: 'no schema', name: 7, description: 'd' });
    expect(Object.keys(bare)).toEqual(['inputSchema', 'name', 'description']);
    expect(bare).toEqual({ name: '', inputSchema: { type: 'object' }, description: 'd' });
  });
});

describe('legacyPinnedForm', () => {
  test('keeps the six fields pins used to cover and nothing else', () => {
    const listed = { ...weather, outputSchema: { type: 'object' }, _meta: { x: 1 }, icons: [{ src: 'a.png' }], execution: { taskSupport: 'optional' } };
    expect(legacyPinnedForm(listed)).toEqual({ ...weather, outputSchema: { type: 'object' } });
    expect(isLegacyForm(legacyPinnedForm(listed))).toBe(true);
    expect(isLegacyForm(listed)).toBe(false);
  });
});

describe('definitionSha256', () => {
  const sha = definitionSha256(weather);

  test('is the SHA-256 of the RFC 8785 canonical JSON of the whole definition', () => {
    const canonical = '{"annotations":{"readOnlyHint":true},"description":"Weather for a city.","inputSchema":{"properties":{"city":{"type":"string"}},"required":["city"],"type":"object"},"name":"weather","title":"Weather"}';
    expect(sha).toBe(createHash('sha256').update(canonical).digest('hex'));
  });

  test('of a definition of the six legacy fields, it is the legacy fingerprint: pins made before stay valid', () => {
    // the canonical text above is the one the six-field pinned form gave before every field was pinned
    expect(legacyDefinitionSha256(weather)).toBe(sha);
    expect(legacyDefinitionSha256({ ...weather, execution: { taskSupport: 'forbidden' } })).toBe(sha);
  });

  test('key order does not change it; a changed description, execution, icons or _meta does', () => {
    const reordered = { annotations: { readOnlyHint: true }, inputSchema: { required: ['city'], properties: { city: { type: 'string' } }, type: 'object' }, description: 'Weather for a city.', title: 'Weather', name: 'weather' };
    expect(definitionSha256(reordered)).toBe(sha);
    expect(definitionSha256({ ...weather, description: 'Weather for a city!' })).not.toBe(sha);
    const forbidden = definitionSha256({ ...weather, execution: { taskSupport: 'forbidden' } });
    expect(forbidden).not.toBe(sha);
    expect(definitionSha256({ ...weather, execution: { taskSupport: 'required' } })).not.toBe(forbidden);
    expect(definitionSha256({ ...weather, icons: [{ src: 'https://a.example/x.png' }] })).not.toBe(sha);
    expect(definitionSha256({ ...weather, _meta: { v: 2 } })).not.toBe(sha);
    // the legacy fingerprint of all of them is the six fields' one
    expect(legacyDefinitionSha256({ ...weather, execution: { taskSupport: 'required' }, icons: [], _meta: { v: 2 } })).toBe(sha);
  });
});

describe('taskSupportOf and offeredForm', () => {
  test('absent or unknown is forbidden (the spec default)', () => {
    expect(taskSupportOf(weather)).toBe('forbidden');
    expect(taskSupportOf({ ...weather, execution: { taskSupport: 'sometimes' } })).toBe('forbidden');
    expect(taskSupportOf({ ...weather, execution: { taskSupport: 'required' } })).toBe('required');
  });

  test('optional is offered as forbidden, in its place; anything else as it is', () => {
    const optional = { name: 'w', execution: { taskSupport: 'optional', x: 1 }, inputSchema: { type: 'object' } };
    expect(JSON.stringify(offeredForm(optional))).toBe('{"name":"w","execution":{"taskSupport":"forbidden","x":1},"inputSchema":{"type":"object"}}');
    expect(optional.execution.taskSupport).toBe('optional');
    expect(offeredForm(weather)).toBe(weather);
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

  test('a changed execution or icons is a change', () => {
    expect(definitionDiff({ ...weather, execution: { taskSupport: 'forbidden' } }, { ...weather, execution: { taskSupport: 'required' }, icons: [{ src: 'x.png' }] })).toEqual([
      { path: 'execution.taskSupport', before: 'forbidden', after: 'required' },
      { path: 'icons', after: [{ src: 'x.png' }] },
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

describe('clipText', () => {
  test('keeps a text of at most max code points whole, and cuts a longer one after max code points', () => {
    expect(clipText('abc', 3)).toBe('abc');
    expect(clipText('abcd', 3)).toBe('abc…');
    expect(clipText('abcd', 3, '')).toBe('abc');
  });

  test('counts a surrogate pair as one code point and never cuts one in half', () => {
    const emoji = '😀'; // two UTF-16 units
    expect(clipText(emoji.repeat(3), 3)).toBe(emoji.repeat(3)); // 6 units, 3 code points: whole
    expect(clipText(emoji.repeat(4), 3)).toBe(`${emoji.repeat(3)}…`);
    expect(clipText(`a${emoji}bc`, 2)).toBe(`a${emoji}…`);
    // a lone surrogate counts as one, as Array.from counts it
    expect(clipText('\ud800abc', 2)).toBe('\ud800a…');
  });

  test('agrees with cutting Array.from(text) on mixed text of any length', () => {
    const pieces = ['a', 'é', '😀', '\u0301', '\ud83d', 'z'];
    for (let seed = 1; seed < 200; seed++) {
      let s = '';
      for (let i = 0; i < (seed % 23) + 1; i++) s += pieces[(seed * 7 + i * 13) % pieces.length];
      const max = seed % 11;
      const points = Array.from(s);
      expect(clipText(s, max)).toBe(points.length <= max ? s : `${points.slice(0, max).join('')}…`);
    }
  });
});
