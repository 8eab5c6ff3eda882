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
