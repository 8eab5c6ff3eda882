const preset = require('../../jest.preset.js');
module.exports = { ...preset, moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' } };
