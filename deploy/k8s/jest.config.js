module.exports = { ...require('../../jest.preset.js'), testMatch: ['<rootDir>/test/**/*.test.js'] };
