/**
 * Traces: the fleet started by the test itself with tracing on (its OTLP/HTTP receiver collects the spans
 * of every service over a real socket). Run after the e2e suite, on the same ports (npm test does).
 */
module.exports = {
  ...require('../../jest.preset.js'),
  testMatch: ['<rootDir>/traces/**/*.trace.test.ts'],
  testTimeout: 180_000,
};
