import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { badRequest } from '@affiliate/platform';

/** Where a webhook must never go: the dispatcher's own network (SSRF). IPv4 and IPv6. */
const PRIVATE_NETWORKS = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this" network
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata lives here)
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  PRIVATE_NETWORKS.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
  ['64:ff9b::', 96], // NAT64: reaches IPv4 through a translator
  ['2001:db8::', 32], // documentation
] as const) {
  PRIVATE_NETWORKS.addSubnet(network, prefix, 'ipv6');
}

export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return PRIVATE_NETWORKS.check(address, 'ipv4');
  if (family !== 6) return true; // not an address at all: refuse rather than guess
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return PRIVATE_NETWORKS.check(mapped[1] as string, 'ipv4');
  return PRIVATE_NETWORKS.check(address, 'ipv6');
}

class PrivateAddressError extends Error {
  readonly code = 'EPRIVATEADDRESS';
}

const hostnameOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

function resolveAll(hostname: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses)));
  });
}

/** At create and update: the URL's host must resolve, and only to public addresses. */
export async function assertDeliverableUrl(url: string, allowPrivate: boolean): Promise<void> {
  const parsed = new URL(url);
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw badRequest('url must be an http or https URL');
  if (parsed.username || parsed.password) throw badRequest('url must not carry credentials');
  if (allowPrivate) return;
  const hostname = hostnameOf(parsed);
  let addresses: string[];
  try {
    addresses = isIP(hostname) ? [hostname] : (await resolveAll(hostname)).map((entry) => entry.address);
  } catch {
    throw badRequest(`url: the host ${hostname} does not resolve`);
  }
  const refused = addresses.find(isPrivateAddress);
  if (refused !== undefined) {
    throw badRequest(`url: ${hostname} resolves to ${refused}, a private, loopback or link-local address; webhooks go to public addresses only`);
  }
}

/**
 * At connect time, because DNS may answer differently than it did at create time: a `lookup` for
 * http.request that refuses private addresses. Hosts given as an IP literal skip lookups, so the
 * sender checks those with `refusedLiteral` first.
 */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true, verbatim: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const usable = allowPrivate ? addresses : addresses.filter((entry) => !isPrivateAddress(entry.address));
      if (usable.length === 0) {
        return callback(new PrivateAddressError(`${hostname} resolves only to private, loopback or link-local addresses`), '', 0);
      }
      if (options.all) return (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, usable);
      const first = usable[0] as LookupAddress;
      callback(null, first.address, first.family);
    });
  };
}

/** The reason a URL whose host is an IP literal may not be called, or null when it may. */
export function refusedLiteral(url: URL, allowPrivate: boolean): string | null {
  const hostname = hostnameOf(url);
  if (allowPrivate || !isIP(hostname) || !isPrivateAddress(hostname)) return null;
  return `${hostname} is a private, loopback or link-local address`;
}
