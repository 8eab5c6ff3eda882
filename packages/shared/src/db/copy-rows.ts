/**
 * The rows of one SELECT streamed with `COPY (<select>) TO STDOUT` in text format (pg-copy-streams), for
 * reads of hundreds of thousands of rows where pg's per-field row parsing is the cost (the verify of an
 * audit chain: docs/history/performance-2026.md, "Verify, round 3").
 *
 * Each row comes as its fields' text as Postgres prints them (`null` for SQL NULL), exactly what the
 * query's columns would give as text: COPY's escapes (`\\`, `\b`, `\f`, `\n`, `\r`, `\t`, `\v`) are undone.
 * Rows come in batches (those completed by each chunk read from the socket: one await per chunk, not per
 * row) while Postgres still produces the rest, with the stream's backpressure bounding memory.
 *
 * COPY takes no bind parameters, so the SELECT is plain text: build it with `copyLiteral` for values.
 * Leaving the loop early (break, return, a throw) ends the COPY by closing that connection (a COPY cannot
 * be stopped half-way on a connection that stays in the pool); a finished COPY gives the connection back.
 */
import { StringDecoder } from 'node:string_decoder';
import { escapeLiteral } from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { tagStore } from '../errors';
import { type Db, poolOf } from './database';

/** A value as an SQL literal for a copyRows SELECT (pg's own quoting of strings; numbers must be finite). */
export function copyLiteral(value: string | number): string {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`not a finite number: ${value}`);
    return String(value);
  }
  return escapeLiteral(value);
}

const ESCAPE = /\\(.)/g;
const UNESCAPED: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };
const unescapeOne = (_: string, c: string): string => UNESCAPED[c] ?? c;

/** One field of COPY's text format as its value (null for `\N`). */
export function copyField(text: string): string | null {
  if (text.indexOf('\\') < 0) return text;
  return text === '\\N' ? null : text.replace(ESCAPE, unescapeOne);
}

/** Stream the rows of `select` (a SELECT statement without a trailing semicolon), a batch at a time. */
export async function* copyRows(db: Db, select: string): AsyncGenerator<Array<Array<string | null>>> {
  const client = await poolOf(db).connect();
  let done = false;
  try {
    const stream = client.query(copyTo(`COPY (${select}) TO STDOUT`));
    const decoder = new StringDecoder('utf8');
    let rest = '';
    try {
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        const text = rest + decoder.write(chunk);
        const end = text.lastIndexOf('\n');
        if (end < 0) {
          rest = text;
          continue;
        }
        rest = text.slice(end + 1);
        const lines = text.slice(0, end).split('\n');
        const rows = new Array<Array<string | null>>(lines.length);
        for (let r = 0; r < lines.length; r++) {
          const fields: Array<string | null> = lines[r].split('\t');
          for (let i = 0; i < fields.length; i++) fields[i] = copyField(fields[i] as string);
          rows[r] = fields;
        }
        yield rows;
      }
    } catch (e) {
      throw tagStore(e, 'Postgres');
    }
    if (rest + decoder.end() !== '') throw new Error('COPY ended inside a row');
    done = true;
  } finally {
    // a COPY left half-read cannot be resumed or cancelled on this connection: close it
    client.release(done ? undefined : new Error('COPY not read to the end'));
  }
}
