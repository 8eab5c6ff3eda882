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

export function createLogger(service: string, level = 'info'): Logger {
  return pino(
    {
      level,
      base: { service },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    // Asynchronous stdout: a line is written at once when no write is under way, and lines logged while
    // one is (a loaded gateway logs every request) leave together in the next write instead of one
    // write(2) each. pino flushes what is left synchronously when the process exits.
    pino.destination({ dest: 1, sync: false }),
  );
}
