/**
 * Every SQL function the fleet keeps in Postgres, registered in one place: `sqlFunctions` is what migrations
 * apply and what `functionDrift` checks a database against (sql-function.ts). A new function, or a changed
 * body, is declared in its file here and applied by a new migration (`applyFunctions`).
 */
import { auditAppendBatch, auditAppendOne } from './audit-append.sql';

export { addRecordColumns } from './add-record-columns';
export { auditAppendBatch, auditAppendOne, recordHashSql } from './audit-append.sql';
export { recordColumnTypes } from './record-columns';
export { applyFunctions, createFunctionStatement, type FunctionDrift, functionDrift, registerFunction, type SqlFunction } from './sql-function';

/** The registered SQL functions. */
export const sqlFunctions = [auditAppendOne, auditAppendBatch] as const;
