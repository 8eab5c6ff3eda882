/**
 * Local SoftHSM2 token setup: a project-owned directory (`.run/softhsm/` by default) with its own
 * softhsm2.conf and token store, and one token found by label, initialised once with the configured
 * PINs. Idempotent and safe when several processes (vault, tests, scripts/softhsm.sh) start together:
 * initialisation runs under a directory lock shared with the shell script.
 *
 * SoftHSM2 reads SOFTHSM2_CONF when the library is initialised (C_Initialize), so `prepareSoftHsm`
 * also exports it to this process before the PKCS#11 module is loaded.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export interface SoftHsmOptions {
  confPath: string;
  tokenLabel: string;
  pin: string;
  soPin: string;
  /** softhsm2-util executable */
  util?: string;
}

export function isSoftHsmLibrary(library: string): boolean {
  return /softhsm/i.test(path.basename(library));
}

/** Token labels SoftHSM2 shows for this config. */
export function softHsmTokenLabels(confPath: string, util = 'softhsm2-util'): string[] {
  const out = execFileSync(util, ['--show-slots'], { env: { ...process.env, SOFTHSM2_CONF: confPath }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return [...out.matchAll(/^\s*Label:\s*(.*?)\s*$/gm)].map((m) => m[1]).filter(Boolean);
}

function writeConf(confPath: string): void {
  const dir = path.dirname(confPath);
  const tokens = path.join(dir, 'tokens');
  fs.mkdirSync(tokens, { recursive: true, mode: 0o700 });
  const conf = `# written by the vault service (services/vault/src/hsm/softhsm-token.ts)\ndirectories.tokendir = ${tokens}\nobjectstore.backend = file\nlog.level = ERROR\nslots.removable = false\n`;
  if (!fs.existsSync(confPath) || fs.readFileSync(confPath, 'utf8') !== conf) fs.writeFileSync(confPath, conf, { mode: 0o600 });
}

function withLock<T>(lockDir: string, fn: () => T): T {
  const until = Date.now() + 30_000;
  for (;;) {
    try {
      fs.mkdirSync(lockDir);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      try {
        // a lock older than 30 s belongs to a process that died mid-way
        if (Date.now() - fs.statSync(lockDir).mtimeMs > 30_000) fs.rmdirSync(lockDir);
      } catch {
        /* removed meanwhile */
      }
      if (Date.now() > until) throw new Error(`timed out waiting for ${lockDir}`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
    }
  }
  try {
    return fn();
  } finally {
    fs.rmdirSync(lockDir);
  }
}

/**
 * Make sure the config file and the labelled token exist, and export SOFTHSM2_CONF for the PKCS#11
 * module loaded next. Returns true when the token was initialised now.
 */
export function prepareSoftHsm(o: SoftHsmOptions): boolean {
  const util = o.util ?? 'softhsm2-util';
  const dir = path.dirname(o.confPath);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const created = withLock(path.join(dir, 'init.lock'), () => {
    writeConf(o.confPath);
    if (softHsmTokenLabels(o.confPath, util).includes(o.tokenLabel)) return false;
    try {
      execFileSync(util, ['--init-token', '--free', '--label', o.tokenLabel, '--pin', o.pin, '--so-pin', o.soPin], {
        env: { ...process.env, SOFTHSM2_CONF: o.confPath },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
    } catch (e) {
      // the command line carries the PINs: never let it reach an error message or a log line
      const stderr = String((e as { stderr?: Buffer }).stderr ?? '').trim();
      throw new Error(`softhsm2-util --init-token failed for token "${o.tokenLabel}": ${stderr || 'no output'}`);
    }
    return true;
  });
  // The one place the vault writes the environment: the SoftHSM2 library reads it in C_Initialize.
  process.env.SOFTHSM2_CONF = o.confPath;
  return created;
}
