/** The soak (npm run soak, docs/reliability.md "Soak"): one long test against a fleet of its own (scripts/soak.sh). */
module.exports = {
  ...require('../../jest.preset.js'),
  testMatch: ['<rootDir>/**/*.soak.test.ts'],
  maxWorkers: 1,
};
