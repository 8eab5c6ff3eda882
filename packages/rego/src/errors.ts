/**
 * The errors of the package. `RegoError` carries an OPA error `code` (`rego_parse_error`,
 * `eval_conflict_error`, `eval_type_error`, `eval_builtin_error`, ...), an optional `location` (file, row,
 * col) and, when a strict builtin error is raised after a query, the `results` produced so far.
 * `RegoCompileError` gathers every parse and compile issue of one `compile` call (or of a query text) in
 * `errors`; its message lists them as `file:row:col: code: message`.
 */
export interface RegoLocation { file: string; row: number; col: number }

export class RegoError extends Error {
  code: string;
  location?: RegoLocation;
  results?: unknown[];
  constructor(code: string, message: string, location?: RegoLocation) {
    super(message);
    this.name = 'RegoError';
    this.code = code;
    if (location) this.location = { file: location.file, row: location.row, col: location.col };
  }
  get text(): string {
    return this.location ? `${this.location.file}:${this.location.row}: ${this.code}: ${this.message}` : `${this.code}: ${this.message}`;
  }
}

export class RegoCompileError extends RegoError {
  errors: Array<{ code: string; message: string; location?: RegoLocation }>;
  constructor(errors: Array<{ code: string; message: string; location?: RegoLocation }>) {
    const lines = errors.map((e) => (e.location ? `${e.location.file}:${e.location.row}:${e.location.col}: ` : '') + `${e.code}: ${e.message}`);
    super(errors[0]?.code ?? 'rego_compile_error', errors.length === 1 ? lines[0] : `${errors.length} errors occurred:\n${lines.join('\n')}`, errors[0]?.location);
    this.name = 'RegoCompileError';
    this.errors = errors;
  }
}
