/** Fault suite: one ordered scenario against a fleet it starts itself (support/fleet.ts); see docs/reliability.md. */
module.exports = {
  ...require('../../jest.preset.js'),
  testMatch: ['<rootDir>/**/*.faults.test.ts'],
  testTimeout: 300_000,
  // the scenario's phases share one fleet and their figures: one file, in order
  maxWorkers: 1,
};
