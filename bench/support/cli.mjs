/** What every bench script starts with: the repository root and its `--name value` options. */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (bench/support/ -> ../..). */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The text after `--name` on the command line, or `fallback` when the option is absent. */
export function opt(name, fallback) {
  const args = process.argv.slice(2);
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
}
