// Reads jest output logs and prints their totals; with --total, the closing line "N passed, M failed".
import fs from 'node:fs';
const args = process.argv.slice(2);
const total = args[0] === '--total';
const files = total ? args.slice(1) : args;
let passed = 0, failed = 0, skipped = 0;
for (const f of files) {
  if (!fs.existsSync(f)) continue;
  for (const line of fs.readFileSync(f, 'utf8').split('\n')) {
    const m = line.match(/Tests:\s+(.*)$/);
    if (!m) continue;
    const get = (w) => Number((m[1].match(new RegExp(`(\\d+) ${w}`)) ?? [0, 0])[1]);
    passed += get('passed'); failed += get('failed'); skipped += get('skipped') + get('todo');
  }
}
console.log(total ? `${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}` : `${passed} passed, ${failed} failed`);
