// The bare express JSON echo every load figure is measured against (the yardstick's unit: `npm run bench:load`,
// and the first variant of bench/http-floor.bench.mjs): express as the gateway's package resolves it, with its
// defaults, the body read by express.json and answered by res.json.
//   node bench/support/express-echo.cjs <port>     prints ECHO_READY once it listens on 127.0.0.1:<port>
const path = require('node:path');
const { createRequire } = require('node:module');

const express = createRequire(path.join(__dirname, '../../services/gateway/package.json'))('express');
const app = express();
app.use(express.json());
app.post('/echo', (req, res) => res.json(req.body));
app.listen(Number(process.argv[2]), '127.0.0.1', () => console.log('ECHO_READY'));
