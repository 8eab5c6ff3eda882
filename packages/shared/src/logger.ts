/**
 * JSON logs through pino. Secrets never reach a log line: the redaction list covers API keys, passwords,
 * tokens, credential values, webhook secrets and tool-call params; callers log ids, never payloads.
 */
import pino, { type Logger } from 'pino';

export type { Logger };

export const REDACT_PATHS = [
  'password',
  '*.password',
  'apiKey',
  '*.apiKey',
  'api_key',
  '*.api_key',
  'value',
  '*.value',
  'secret',
  '*.secret',
  'webhook_secret',
  '*.webhook_secret',
  'token',
  '*.token',
  'params',
  '*.params',
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'headers["x-api-key"]',
  'headers.authorization',
];

/** Log lines wait in memory until this many bytes are pending ... */
export const LOG_BUFFER_BYTES = 4096;
/** ... or this long (ms) after they were logged. */
export const LOG_FLUSH_MS = 1000;

export function createLogger(service: string, level = 'info'): Logger {
  return pino(
    {
      level,
      base: { service },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    // Buffered stdout, as nginx's `access_log … buffer= flush=`: lines leave in one write(2) once 4 KB are
    // waiting, and at the latest a second after they were logged (a loaded gateway logs every request:
    // one write per ~15 lines instead of one per few). pino flushes what is left synchronously when the
    // process exits, crash included; a SIGKILL loses at most that last second.
    pino.destination({ dest: 1, sync: false, minLength: LOG_BUFFER_BYTES, periodicFlush: LOG_FLUSH_MS }),
  );
}

/**
 * The same logger without the redaction walk, for a line whose fields are all fixed by its caller and never
 * hold a secret (the gateway's access log: request id, method, path without its query, status, duration,
 * tenant id). On such a line the walk over REDACT_PATHS finds nothing and costs about half of the line
 * (9.2 against 4.3 µs per line, measured with pino 10 here), paid on every request. Same stream, same
 * buffer, same order as the logger's other lines.
 */
export function fixedFieldLogger(logger: Logger): Logger {
  return logger.child({}, { redact: { paths: [] } });
}
