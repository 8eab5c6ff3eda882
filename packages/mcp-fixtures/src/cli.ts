#!/usr/bin/env node
/** agw-mcp-fixtures [--port 4020] [--host 127.0.0.1] [--bearer TOKEN]: run the fixture servers until Ctrl-C. */
import { parseArgs } from 'node:util';
import { startFixtures } from './fixture-server';

const { values } = parseArgs({ options: { port: { type: 'string', default: '4020' }, host: { type: 'string', default: '127.0.0.1' }, bearer: { type: 'string' } } });
startFixtures({ port: Number(values.port), host: values.host, bearer: values.bearer })
  .then((fx) => {
    process.stdout.write(`MCP fixtures at ${fx.url} (/mutable/mcp, /secured/mcp, /huge/mcp, /silent/mcp, /endless/mcp, /malformed/mcp, /garbage/mcp, /many/mcp, /poisoned/mcp, /legacy/sse)\n`);
    const stop = () => void fx.close().then(() => process.exit(0));
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  })
  .catch((e: Error) => {
    process.stderr.write(`${e.message}\n`);
    process.exit(1);
  });
