/**
 * The fault suite's stand-in for DNS (R7), preloaded into the suite's fleet with NODE_OPTIONS=--require.
 * Public DNS cannot be reached from here, so names under `.faults.test` are answered from the JSON file
 * FAULTS_DNS_FILE, which the suite writes: `{"name": ["addr", ...]}` answers the n-th lookup of a name
 * with the n-th address (the last one from then on), which is how a rebinding name behaves. Every other
 * name goes to the system resolver as before. Only loopback addresses are ever written there by the suite.
 */
'use strict';
const dns = require('node:dns');
const dnsPromises = require('node:dns/promises');
const fs = require('node:fs');

const FILE = process.env.FAULTS_DNS_FILE;
const counts = new Map();

function answer(hostname) {
  if (!FILE || typeof hostname !== 'string' || !hostname.toLowerCase().endsWith('.faults.test')) return undefined;
  let table = {};
  try {
    table = JSON.parse(fs.readFileSync(FILE, 'utf8'));
  } catch {
    /* no table yet: the name does not resolve */
  }
  const name = hostname.toLowerCase();
  const list = table[name];
  if (!Array.isArray(list) || !list.length) return [];
  // a new list for the name starts its sequence again
  const key = `${name} ${JSON.stringify(list)}`;
  const n = counts.get(key) ?? 0;
  counts.set(key, n + 1);
  const address = list[Math.min(n, list.length - 1)];
  return [{ address, family: address.includes(':') ? 6 : 4 }];
}

function notFound(hostname) {
  const e = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
  e.code = 'ENOTFOUND';
  e.hostname = hostname;
  return e;
}

const lookup = dns.lookup;
dns.lookup = function stubLookup(hostname, options, cb) {
  const callback = typeof options === 'function' ? options : cb;
  const opts = typeof options === 'function' ? {} : typeof options === 'number' ? { family: options } : options ?? {};
  const a = answer(hostname);
  if (a === undefined) return lookup.apply(this, arguments);
  process.nextTick(() => {
    if (!a.length) return callback(notFound(hostname));
    if (opts.all) callback(null, a);
    else callback(null, a[0].address, a[0].family);
  });
  return {};
};

const plookup = dnsPromises.lookup;
dnsPromises.lookup = async function stubPromiseLookup(hostname, options) {
  const a = answer(hostname);
  if (a === undefined) return plookup.call(this, hostname, options);
  if (!a.length) throw notFound(hostname);
  return options && options.all ? a : a[0];
};
