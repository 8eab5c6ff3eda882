/**
 * SQL functions defined in code (Immich's `registerFunction` is the model): each function the fleet keeps in
 * Postgres is declared once, by `registerFunction`, in a file under `functions/` named after what it does, and
 * listed in `functions/index.ts` (`sqlFunctions`). A migration that changes one applies the registered
 * definition (`applyFunctions`); older migrations keep the text they ran (frozen history), so the live body is
 * read here, not in the newest migration. `functionDrift` compares a database's functions with the registered
 * definitions (packages/shared/test/sql-functions.int.test.ts runs it on a migrated database), so a definition
 * changed in code without a migration, or a function changed by hand, is caught.
 */
import { type Kysely, sql } from 'kysely';

export interface SqlFunction {
  /** the function's name (public schema) */
  name: string;
  /** its argument list as CREATE FUNCTION takes it, e.g. `p jsonb` */
  arguments: string;
  /** its result type, e.g. `TABLE (ord integer, id bigint)` */
  returns: string;
  language: 'plpgsql' | 'sql';
  /** the body between the dollar quotes: what Postgres keeps as `pg_proc.prosrc`, byte for byte */
  body: string;
}

/** Declares a SQL function (a checked value; `functions/index.ts` lists every one). */
export function registerFunction(fn: SqlFunction): Readonly<SqlFunction> {
  if (!/^[a-z_][a-z0-9_]*$/.test(fn.name)) throw new Error(`SQL function name "${fn.name}" must be a plain lower-case identifier`);
  if (fn.body.includes('$fn$')) throw new Error(`SQL function ${fn.name}: its body must not contain the $fn$ quote`);
  return Object.freeze({ ...fn });
}

/** The statement that creates the function, or replaces its body (same arguments and result). */
export function createFunctionStatement(fn: SqlFunction): string {
  return `CREATE OR REPLACE FUNCTION ${fn.name}(${fn.arguments})\n  RETURNS ${fn.returns}\n  LANGUAGE ${fn.language} AS $fn$${fn.body}$fn$`;
}

/** Creates or replaces each function, in order (from a migration). */
export async function applyFunctions(db: Kysely<any>, fns: readonly SqlFunction[]): Promise<void> {
  for (const fn of fns) await sql.raw(createFunctionStatement(fn)).execute(db);
}

/** A registered function the database holds differently, or not at all. */
export interface FunctionDrift {
  name: string;
  /** what differs: `missing`, `body`, `arguments`, `returns` or `language` */
  differs: 'missing' | 'body' | 'arguments' | 'returns' | 'language';
  registered: string;
  database: string;
}

/** the same type text whatever its spacing and case (`TABLE (a integer)` and Postgres's `TABLE(a integer)`) */
const signature = (s: string) => s.replace(/\s+/g, '').toLowerCase();

/**
 * What differs between the registered functions and the database's (current schema): an empty list when every
 * function is there with its registered body (byte for byte), arguments, result and language.
 */
export async function functionDrift(db: Kysely<any>, fns: readonly SqlFunction[]): Promise<FunctionDrift[]> {
  const { rows } = await sql<{ name: string; body: string; arguments: string; returns: string; language: string }>`
    SELECT p.proname AS name, p.prosrc AS body, pg_get_function_arguments(p.oid) AS arguments,
           pg_get_function_result(p.oid) AS returns, l.lanname AS language
    FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace JOIN pg_language l ON l.oid = p.prolang
    WHERE n.nspname = current_schema() AND p.proname = ANY(${fns.map((f) => f.name)}::text[])`.execute(db);
  const out: FunctionDrift[] = [];
  for (const fn of fns) {
    const found = rows.filter((r) => r.name === fn.name);
    // one function per name: an overload left behind by an older migration is drift too
    const r = found.find((x) => signature(x.arguments) === signature(fn.arguments));
    if (!r) {
      out.push({ name: fn.name, differs: found.length ? 'arguments' : 'missing', registered: fn.arguments, database: found.map((x) => x.arguments).join('; ') });
      continue;
    }
    if (found.length > 1) out.push({ name: fn.name, differs: 'arguments', registered: fn.arguments, database: found.map((x) => x.arguments).join('; ') });
    if (r.body !== fn.body) out.push({ name: fn.name, differs: 'body', registered: fn.body, database: r.body });
    if (signature(r.returns) !== signature(fn.returns)) out.push({ name: fn.name, differs: 'returns', registered: fn.returns, database: r.returns });
    if (r.language !== fn.language) out.push({ name: fn.name, differs: 'language', registered: fn.language, database: r.language });
  }
  return out;
}
