/**
 * copyRows (COPY ... TO STDOUT, text format) against the real local Postgres: the fields it yields are the
 * values a SELECT gives, whatever they hold, rows larger than a socket chunk and characters split across
 * chunks included; leaving early or failing gives the pool a usable state back.
 */
import { sql } from 'kysely';
import { copyField, copyLiteral, copyRows } from '../src/db/copy-rows';
import { type Db, createDb, poolOf } from '../src/db/database';
import { TEST_DATABASE_URL } from '../src/test-stores';
let db: Db;

beforeAll(() => {
  db = createDb(TEST_DATABASE_URL, { max: 2 });
});
afterAll(async () => {
  await db.destroy();
});

async function all(select: string): Promise<Array<Array<string | null>>> {
  const out: Array<Array<string | null>> = [];
  for await (const batch of copyRows(db, select)) out.push(...batch);
  return out;
}

const odd = ['plain', 'tab\there', 'new\nline\r\n', 'back\\slash', '\\N', '\\', '\b\f\v\u0001\u001f\u007f', 'é 日本語 😀 \u2028', '', 'NULL', "quote ' \" end"];

describe('copyRows', () => {
  it('yields exactly the text a SELECT gives, NULL as null, for every kind of character', async () => {
    const values = odd.map((v) => copyLiteral(v)).join(', ');
    const select = `SELECT v, length(v)::text, NULL::text, v || 'x' FROM unnest(ARRAY[${values}]::text[]) WITH ORDINALITY AS u(v, i) ORDER BY i`;
    const rows = await all(select);
    expect(rows).toEqual(odd.map((v) => [v, String([...v].length), null, `${v}x`]));
    const { rows: selected } = await sql.raw<{ v: string }>(select).execute(db);
    expect(rows.map((r) => r[0])).toEqual(selected.map((r) => r.v));
  });

  it('yields jsonb, booleans, numbers and times as their text output', async () => {
    const rows = await all(`SELECT '{"b": "x\\"y", "a": [1, 2.50, null]}'::jsonb, true, false, 12345678901234::bigint, 1.5::numeric`);
    expect(rows).toEqual([['{"a": [1, 2.50, null], "b": "x\\"y"}', 't', 'f', '12345678901234', '1.5']]);
  });

  it('reassembles rows larger than a chunk and characters split across chunks', async () => {
    // 200,000 four-byte characters per row: many 64 KB chunks, most of them ending inside a character
    const rows = await all(`SELECT n::text, repeat('😀', 200000) || n::text FROM generate_series(1, 3) AS g(n) ORDER BY g.n`);
    expect(rows).toHaveLength(3);
    rows.forEach((r, k) => {
      expect(r[0]).toBe(String(k + 1));
      expect(r[1]).toBe(`${'😀'.repeat(200000)}${k + 1}`);
    });
    // and many small rows in one stream, in order
    const many = await all('SELECT n::text FROM generate_series(1, 50000) AS g(n) ORDER BY g.n');
    expect(many.map((r) => Number(r[0]))).toEqual(Array.from({ length: 50000 }, (_, k) => k + 1));
  });

  it('leaving early closes that connection; the pool goes on working', async () => {
    const pool = poolOf(db);
    for (let k = 0; k < 3; k++) {
      for await (const batch of copyRows(db, 'SELECT i::text FROM generate_series(1, 1000000) AS i')) {
        expect(batch.length).toBeGreaterThan(0);
        break;
      }
    }
    expect(pool.totalCount).toBeLessThanOrEqual(2);
    expect(await all('SELECT 1::text')).toEqual([['1']]);
    const { rows } = await sql<{ one: number }>`SELECT 1 AS one`.execute(db);
    expect(rows[0].one).toBe(1);
  });

  it('a failing SELECT rejects with the Postgres error, and the pool goes on working', async () => {
    await expect(all('SELECT no_such_column FROM generate_series(1, 2)')).rejects.toThrow(/no_such_column/);
    await expect(all(`SELECT ${copyLiteral("x' ; DROP TABLE t; --")}::uuid`)).rejects.toThrow(/invalid input syntax for type uuid/);
    expect(await all('SELECT 2::text')).toEqual([['2']]);
  });

  it('quotes literals so a value cannot leave its string', async () => {
    expect(await all(`SELECT ${copyLiteral("it's \\ a ' test")}`)).toEqual([["it's \\ a ' test"]]);
    expect(copyLiteral(42)).toBe('42');
    expect(() => copyLiteral(Number.NaN)).toThrow(/finite/);
  });

  it('undoes every escape of the text format (unit)', () => {
    expect(copyField('\\N')).toBeNull();
    expect(copyField('a\\tb\\nc\\rd\\\\e\\bf\\fg\\vh')).toBe('a\tb\nc\rd\\e\bf\fg\vh');
    expect(copyField('\\\\N')).toBe('\\N');
    expect(copyField('plain')).toBe('plain');
  });
});
