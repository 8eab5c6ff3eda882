// Loaded with NODE_OPTIONS=--require by `bench/load.bench.mjs --cpu-prof DIR` (--cpu-prof itself is not
// allowed in NODE_OPTIONS): SIGUSR2 starts the V8 sampling profiler, the next SIGUSR2 stops it and writes
// DIR/<service>.<pid>.cpuprofile, so a profile covers exactly the measured window.
const inspector = require('node:inspector');
const fs = require('node:fs');
const path = require('node:path');

const dir = process.env.AGW_CPU_PROF_DIR;
const name = (process.argv[1] ?? '').match(/services\/([a-z]+)\/dist/)?.[1];
if (dir && name) {
  const session = new inspector.Session();
  session.connect();
  let running = false;
  process.on('SIGUSR2', () => {
    if (!running) {
      session.post('Profiler.enable', () =>
        session.post('Profiler.setSamplingInterval', { interval: 250 }, () => session.post('Profiler.start', () => (running = true))),
      );
      return;
    }
    running = false;
    session.post('Profiler.stop', (err, r) => {
      if (!err) fs.writeFileSync(path.join(dir, `${name}.${process.pid}.cpuprofile`), JSON.stringify(r.profile));
    });
  });
}
