/**
 * Browser tests of the console: a fleet of their own, started by test/e2e's global setup at the port offset
 * BROWSER_PORT_OFFSET (default 10100; own database agw_e2e_<offset> and stream prefix), so they never share
 * state with the e2e suite. Chromium is Debian's (/usr/bin/chromium, installed by scripts/lib.sh).
 */
process.env.E2E_PORT_OFFSET = process.env.BROWSER_PORT_OFFSET ?? '10100';
module.exports = {
  ...require('../../jest.preset.js'),
  testMatch: ['<rootDir>/**/*.browser.test.ts'],
  globalSetup: '<rootDir>/../e2e/support/global-setup.ts',
  globalTeardown: '<rootDir>/../e2e/support/global-teardown.ts',
  testTimeout: 90_000,
};
