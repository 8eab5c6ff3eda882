// Test support: runs the webhook service from its TypeScript sources in a child process (compiled on the
// fly with @swc/core, like jest does), so a test can kill it for real with SIGKILL.
const fs = require('node:fs');
const swc = require('@swc/core');

require.extensions['.ts'] = (module, filename) => {
  const { code } = swc.transformSync(fs.readFileSync(filename, 'utf8'), {
    filename,
    jsc: { target: 'es2022', parser: { syntax: 'typescript' } },
    module: { type: 'commonjs' },
  });
  module._compile(code, filename);
};

require('../../src/main.ts');
