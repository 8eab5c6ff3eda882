/**
 * @module @agw/egress
 * The fleet's one rule for outbound connections made on a tenant's behalf (webhook deliveries, brokered
 * tool calls): public addresses only unless an operator allowed a range, a name resolved once with every
 * answer checked, and the connection pinned to the checked address.
 *
 * @example
 * ```ts
 * const policy = new AddressPolicy({ allowCidrs: ['127.0.0.0/8'] });
 * const target = await policy.resolve(url.hostname);        // EgressRefusedError when refused
 * https.request(url, { lookup: pinnedLookup(target), agent: false });
 * ```
 */
export * from './address-policy';
export * from './tenant-exceptions';
export * from './pinned-request';
export * from './pinned-fetch';
export * from './ca-file';
