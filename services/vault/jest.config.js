// SoftHSM2 reads SOFTHSM2_CONF from the C environment at C_Initialize; jest workers get a copy of
// process.env in their sandbox, so the variable is set here, in the parent, before workers start.
const path = require('node:path');
process.env.SOFTHSM2_CONF ??= path.resolve(__dirname, '../../.run/softhsm/softhsm2.conf');
module.exports = { ...require('../../jest.preset.js') };
