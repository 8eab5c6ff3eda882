/** The fault suite's own unit tests (npm test): its support modules, on recorded figures; no fleet. */
module.exports = {
  ...require('../../jest.preset.js'),
  testMatch: ['<rootDir>/support/**/*.test.ts'],
};
