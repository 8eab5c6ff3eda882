/**
 * Time builtins over nanoseconds since the epoch (int64 range, `bigint` beyond 2^53): `time.now_ns` (the
 * evaluation's clock: `nowNs` or the clock read once per evaluation), `time.parse_ns` / `time.format` with
 * Go reference layouts and named layouts (`RFC3339`, `Kitchen`, ...), `time.parse_rfc3339_ns` (exported as
 * `parseRFC3339`), `time.parse_duration_ns`, `time.date`, `time.clock`, `time.weekday`, `time.add_date`
 * and `time.diff`. Time zones are IANA names resolved through `Intl` (`""`, `UTC` and `Local` are UTC).
 * Unparsable or out-of-range input is an `eval_builtin_error` with Go's message.
 */
import { RObject, normBig, typeName, type Value } from '../value.js';
import { BuiltinError, arr, builtinErr, int, str, type Reg } from './types.js';

const NS = 1000000000n;
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const MIN_NS = -9223372036854775808n, MAX_NS = 9223372036854775807n;

function tzOffsetMin(tz: string, ms: number): number {
  if (tz === '' || tz === 'UTC' || tz === 'Local') return 0;
  try {
    const dtf = new Intl.DateTimeFormat('en-US', { timeZone: tz, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
    const p = Object.fromEntries(dtf.formatToParts(new Date(ms)).map((x) => [x.type, x.value]));
    const asUTC = Date.UTC(+p.year, +p.month - 1, +p.day, +p.hour, +p.minute, +p.second);
    return Math.round((asUTC - Math.floor(ms / 1000) * 1000) / 60000);
  } catch { throw new BuiltinError('eval_builtin_error', `unknown time zone ${tz}`); }
}

function nsArg(name: string, v: Value): { ns: bigint; tz: string; layout?: string } {
  if (typeof v === 'number' || typeof v === 'bigint') return { ns: typeof v === 'bigint' ? v : BigInt(Math.trunc(v)), tz: 'UTC' };
  if (Array.isArray(v)) {
    const n = v[0], tz = v[1];
    if (typeof n !== 'number' && typeof n !== 'bigint') throw new BuiltinError('eval_type_error', `${name}: operand 1 must be number but got ${typeName(n)}`);
    if (typeof tz !== 'string') throw new BuiltinError('eval_type_error', `${name}: operand 1 must be string but got ${typeName(tz)}`);
    return { ns: typeof n === 'bigint' ? n : BigInt(Math.trunc(n)), tz, layout: typeof v[2] === 'string' ? v[2] : undefined };
  }
  throw new BuiltinError('eval_type_error', `${name}: operand 1 must be one of {number, array} but got ${typeName(v)}`);
}

/** civil fields in zone */
function fields(ns: bigint, tz: string) {
  if (ns < MIN_NS || ns > MAX_NS) throw new BuiltinError('eval_builtin_error', 'timestamp too big');
  const sec = ns >= 0n ? ns / NS : -((-ns + NS - 1n) / NS);
  const nanos = Number(ns - sec * NS);
  const ms = Number(sec) * 1000;
  const off = tzOffsetMin(tz, ms);
  const d = new Date(ms + off * 60000);
  return { y: d.getUTCFullYear(), mo: d.getUTCMonth() + 1, d: d.getUTCDate(), h: d.getUTCHours(), mi: d.getUTCMinutes(), s: d.getUTCSeconds(), wd: d.getUTCDay(), nanos, off, yday: Math.floor((Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()) - Date.UTC(d.getUTCFullYear(), 0, 1)) / 86400000) + 1 };
}

function pad(n: number, w = 2): string { const s = String(Math.abs(n)).padStart(w, '0'); return n < 0 ? '-' + s : s; }

export function parseRFC3339(name: string, s: string): bigint {
  const m = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.exec(s);
  if (!m) throw builtinErr(name, `parsing time ${JSON.stringify(s)} as ${JSON.stringify('2006-01-02T15:04:05Z07:00')}: cannot parse ${JSON.stringify(s)} as ${JSON.stringify('2006')}`);
  const [, y, mo, d, h, mi, se, frac, tz] = m;
  if (+mo < 1 || +mo > 12) throw builtinErr(name, `parsing time ${JSON.stringify(s)}: month out of range`);
  if (+d < 1 || +d > 31) throw builtinErr(name, `parsing time ${JSON.stringify(s)}: day out of range`);
  if (+h > 23 || +mi > 59 || +se > 59) throw builtinErr(name, `parsing time ${JSON.stringify(s)}: second out of range`);
  let off = 0;
  if (tz !== 'Z' && tz !== 'z') { off = (tz[0] === '-' ? -1 : 1) * (parseInt(tz.slice(1, 3), 10) * 60 + parseInt(tz.slice(4, 6), 10)); }
  const secs = BigInt(Date.UTC(+y, +mo - 1, +d, +h, +mi, +se) / 1000) - BigInt(off * 60);
  const nanos = frac ? BigInt(frac.slice(1, 10).padEnd(9, '0')) : 0n;
  const r = secs * NS + nanos;
  if (r < MIN_NS || r > MAX_NS) throw builtinErr(name, 'time outside of valid range');
  return r;
}

function formatRFC3339Nano(ns: bigint, tz: string): string {
  const f = fields(ns, tz);
  let frac = f.nanos ? '.' + String(f.nanos).padStart(9, '0').replace(/0+$/, '') : '';
  const off = f.off === 0 && (tz === 'UTC' || tz === '') ? 'Z' : (f.off < 0 ? '-' : '+') + pad(Math.floor(Math.abs(f.off) / 60)) + ':' + pad(Math.abs(f.off) % 60);
  void frac;
  return `${pad(f.y, 4)}-${pad(f.mo)}-${pad(f.d)}T${pad(f.h)}:${pad(f.mi)}:${pad(f.s)}${frac}${off}`;
}

/** Go reference-layout formatting (common tokens) */
function goFormat(ns: bigint, tz: string, layout: string): string {
  const f = fields(ns, tz);
  const tokens: [string, () => string][] = [
    ['2006', () => pad(f.y, 4)], ['January', () => MONTHS[f.mo - 1]], ['Jan', () => MONTHS[f.mo - 1].slice(0, 3)], ['Monday', () => DAYS[f.wd]], ['Mon', () => DAYS[f.wd].slice(0, 3)],
    ['MST', () => (f.off === 0 ? 'UTC' : tz)], ['Z07:00', () => (f.off === 0 ? 'Z' : (f.off < 0 ? '-' : '+') + pad(Math.floor(Math.abs(f.off) / 60)) + ':' + pad(Math.abs(f.off) % 60))],
    ['-07:00', () => (f.off < 0 ? '-' : '+') + pad(Math.floor(Math.abs(f.off) / 60)) + ':' + pad(Math.abs(f.off) % 60)], ['-0700', () => (f.off < 0 ? '-' : '+') + pad(Math.floor(Math.abs(f.off) / 60)) + pad(Math.abs(f.off) % 60)],
    ['01', () => pad(f.mo)], ['02', () => pad(f.d)], ['_2', () => String(f.d).padStart(2, ' ')], ['15', () => pad(f.h)], ['03', () => pad(((f.h + 11) % 12) + 1)], ['04', () => pad(f.mi)], ['05', () => pad(f.s)],
    ['06', () => pad(f.y % 100)], ['PM', () => (f.h >= 12 ? 'PM' : 'AM')], ['pm', () => (f.h >= 12 ? 'pm' : 'am')],
    ['.999999999', () => (f.nanos ? '.' + String(f.nanos).padStart(9, '0').replace(/0+$/, '') : '')], ['.000000000', () => '.' + String(f.nanos).padStart(9, '0')], ['.000', () => '.' + String(f.nanos).padStart(9, '0').slice(0, 3)],
    ['1', () => String(f.mo)], ['2', () => String(f.d)], ['3', () => String(((f.h + 11) % 12) + 1)], ['4', () => String(f.mi)], ['5', () => String(f.s)],
  ];
  let out = ''; let i = 0;
  outer: while (i < layout.length) {
    for (const [t, fn] of tokens) if (layout.startsWith(t, i)) { out += fn(); i += t.length; continue outer; }
    out += layout[i++];
  }
  return out;
}

const LAYOUTS: Record<string, string> = { ANSIC: 'Mon Jan _2 15:04:05 2006', UnixDate: 'Mon Jan _2 15:04:05 MST 2006', RubyDate: 'Mon Jan 02 15:04:05 -0700 2006', RFC822: '02 Jan 06 15:04 MST', RFC822Z: '02 Jan 06 15:04 -0700', RFC850: 'Monday, 02-Jan-06 15:04:05 MST', RFC1123: 'Mon, 02 Jan 2006 15:04:05 MST', RFC1123Z: 'Mon, 02 Jan 2006 15:04:05 -0700', RFC3339: '2006-01-02T15:04:05Z07:00', RFC3339Nano: '2006-01-02T15:04:05.999999999Z07:00', Kitchen: '3:04PM', Stamp: 'Jan _2 15:04:05', DateTime: '2006-01-02 15:04:05', DateOnly: '2006-01-02', TimeOnly: '15:04:05' };

function goParse(name: string, layout: string, value: string): bigint {
  layout = LAYOUTS[layout] ?? layout;
  if (layout === '2006-01-02T15:04:05Z07:00' || layout === '2006-01-02T15:04:05.999999999Z07:00') return parseRFC3339(name, value);
  const parts: { re: string; key?: string }[] = [];
  const toks: [string, string, string][] = [['2006', '(\\d{4})', 'y'], ['January', '(' + MONTHS.join('|') + ')', 'MonthName'], ['Jan', '(' + MONTHS.map((m) => m.slice(0, 3)).join('|') + ')', 'Mon3'], ['Monday', '(?:' + DAYS.join('|') + ')', ''], ['Mon', '(?:' + DAYS.map((d) => d.slice(0, 3)).join('|') + ')', ''], ['MST', '([A-Z]{3,4})', 'tzname'], ['Z07:00', '(Z|[+-]\\d{2}:\\d{2})', 'tz'], ['-07:00', '([+-]\\d{2}:\\d{2})', 'tz'], ['-0700', '([+-]\\d{4})', 'tz'], ['01', '(\\d{2})', 'mo'], ['02', '(\\d{2})', 'd'], ['_2', ' ?(\\d{1,2})', 'd'], ['15', '(\\d{2})', 'h'], ['03', '(\\d{2})', 'h12'], ['04', '(\\d{2})', 'mi'], ['05', '(\\d{2})', 's'], ['06', '(\\d{2})', 'y2'], ['PM', '(AM|PM)', 'pm'], ['.999999999', '(\\.\\d+)?', 'frac'], ['.000', '(\\.\\d+)', 'frac'], ['1', '(\\d{1,2})', 'mo'], ['2', '(\\d{1,2})', 'd'], ['3', '(\\d{1,2})', 'h12'], ['4', '(\\d{1,2})', 'mi'], ['5', '(\\d{1,2})', 's']];
  let i = 0;
  outer: while (i < layout.length) {
    for (const [t, re, key] of toks) if (layout.startsWith(t, i)) { parts.push({ re, key: key || undefined }); i += t.length; continue outer; }
    parts.push({ re: layout[i].replace(/[.*+?^${}()|[\]\\]/g, '\\$&') }); i++;
  }
  const m = new RegExp('^' + parts.map((p) => p.re).join('') + '$').exec(value);
  if (!m) throw builtinErr(name, `parsing time ${JSON.stringify(value)} as ${JSON.stringify(layout)}: cannot parse ${JSON.stringify(value)} as ${JSON.stringify(layout)}`);
  const f: Record<string, string> = {}; let gi = 1;
  for (const p of parts) if (p.re.includes('(') && !p.re.startsWith('(?:')) { if (p.key) f[p.key] = m[gi]; gi++; }
  let y = f.y ? +f.y : f.y2 ? 2000 + +f.y2 - (+f.y2 >= 69 ? 100 : 0) : 0;
  let mo = f.mo ? +f.mo : f.MonthName ? MONTHS.indexOf(f.MonthName) + 1 : f.Mon3 ? MONTHS.findIndex((x) => x.startsWith(f.Mon3)) + 1 : 1;
  const d = f.d ? +f.d : 1;
  let h = f.h ? +f.h : f.h12 ? +f.h12 % 12 + (f.pm === 'PM' ? 12 : 0) : 0;
  let off = 0;
  if (f.tz && f.tz !== 'Z') { const t = f.tz.replace(':', ''); off = (t[0] === '-' ? -1 : 1) * (+t.slice(1, 3) * 60 + +t.slice(3, 5)); }
  const secs = BigInt(Date.UTC(y, mo - 1, d, h, f.mi ? +f.mi : 0, f.s ? +f.s : 0) / 1000) - BigInt(off * 60);
  void mo; void y; void h;
  return secs * NS + (f.frac ? BigInt(f.frac.slice(1, 10).padEnd(9, '0')) : 0n);
}

function parseDuration(name: string, s: string): bigint {
  if (s === '0') return 0n;
  const m = /^([+-]?)((?:[0-9]*\.?[0-9]+(?:ns|us|µs|μs|ms|s|m|h))+)$/.exec(s);
  if (!m) throw builtinErr(name, `time: invalid duration ${JSON.stringify(s)}`);
  const unit: Record<string, number> = { ns: 1, us: 1e3, 'µs': 1e3, 'μs': 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };
  let total = 0;
  for (const p of m[2].matchAll(/([0-9]*\.?[0-9]+)(ns|us|µs|μs|ms|s|m|h)/g)) total += parseFloat(p[1]) * unit[p[2]];
  return BigInt(Math.round(m[1] === '-' ? -total : total));
}

function checkRange(name: string, ns: bigint): bigint { if (ns < MIN_NS || ns > MAX_NS) throw builtinErr(name, 'time outside of valid range'); return ns; }

export function register(reg: Reg): void {
  reg('time.now_ns', 0, (_a, ctx) => normBig(ctx.nowNs));
  reg('time.parse_rfc3339_ns', 1, (a) => normBig(parseRFC3339('time.parse_rfc3339_ns', str('time.parse_rfc3339_ns', a, 0))));
  reg('time.parse_ns', 2, (a) => normBig(goParse('time.parse_ns', str('time.parse_ns', a, 0), str('time.parse_ns', a, 1))));
  reg('time.parse_duration_ns', 1, (a) => normBig(parseDuration('time.parse_duration_ns', str('time.parse_duration_ns', a, 0))));
  reg('time.date', 1, (a) => { const { ns, tz } = nsArg('time.date', a[0]); const f = fields(ns, tz); return [f.y, f.mo, f.d]; });
  reg('time.clock', 1, (a) => { const { ns, tz } = nsArg('time.clock', a[0]); const f = fields(ns, tz); return [f.h, f.mi, f.s]; });
  reg('time.weekday', 1, (a) => { const { ns, tz } = nsArg('time.weekday', a[0]); return DAYS[fields(ns, tz).wd]; });
  reg('time.format', 1, (a) => {
    const { ns, tz, layout } = nsArg('time.format', a[0]);
    if (layout) return goFormat(ns, tz, LAYOUTS[layout] ?? layout);
    return formatRFC3339Nano(ns, tz);
  });
  reg('time.add_date', 4, (a) => {
    const n = a[0]; if (typeof n !== 'number' && typeof n !== 'bigint') throw new BuiltinError('eval_type_error', `time.add_date: operand 1 must be number but got ${typeName(n)}`);
    const ns = typeof n === 'bigint' ? n : BigInt(Math.trunc(n));
    const y = int('time.add_date', a, 1), m = int('time.add_date', a, 2), d = int('time.add_date', a, 3);
    const sec = ns >= 0n ? ns / NS : -((-ns + NS - 1n) / NS);
    const rem = ns - sec * NS;
    const dt = new Date(Number(sec) * 1000);
    const t = Date.UTC(dt.getUTCFullYear() + y, dt.getUTCMonth() + m, dt.getUTCDate() + d, dt.getUTCHours(), dt.getUTCMinutes(), dt.getUTCSeconds());
    if (!Number.isFinite(t) || Math.abs(t) > 9.3e15) throw builtinErr('time.add_date', 'time outside of valid range');
    return normBig(checkRange('time.add_date', BigInt(t / 1000) * NS + rem));
  });
  reg('time.diff', 2, (a) => {
    const x = nsArg('time.diff', a[0]), y = nsArg('time.diff', a[1]);
    let f1 = fields(x.ns, x.tz), f2 = fields(y.ns, x.tz);
    if (x.ns > y.ns) [f1, f2] = [f2, f1];
    let yy = f2.y - f1.y, mo = f2.mo - f1.mo, d = f2.d - f1.d, h = f2.h - f1.h, mi = f2.mi - f1.mi, s = f2.s - f1.s;
    if (s < 0) { s += 60; mi--; } if (mi < 0) { mi += 60; h--; } if (h < 0) { h += 24; d--; }
    if (d < 0) { const dim = new Date(Date.UTC(f1.y, f1.mo, 0)).getUTCDate(); d += dim; mo--; }
    if (mo < 0) { mo += 12; yy--; }
    return [yy, mo, d, h, mi, s];
  });
  void arr; void RObject;
}
