/** E2E: black-box tests of a fleet started once for the whole run (support/global-setup.ts). */
module.exports = {
  ...require('../../jest.preset.js'),
  testMatch: ['<rootDir>/**/*.e2e.test.ts'],
  globalSetup: '<rootDir>/support/global-setup.ts',
  globalTeardown: '<rootDir>/support/global-teardown.ts',
  testTimeout: 60_000,
};
