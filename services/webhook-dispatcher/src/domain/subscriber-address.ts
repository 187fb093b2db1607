import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { badRequest } from '@affiliate/platform';
import ipaddr from 'ipaddr.js';

/**
 * Whether a webhook may go to this address (SSRF). ipaddr.js classifies every IANA special-purpose
 * range, IPv4 and IPv6 (private, loopback, link-local where cloud metadata lives, CGNAT,
 * documentation, benchmarking, multicast, reserved, 6to4, Teredo, NAT64 and the other
 * translations...): only plain `unicast` is public. On top of it: an IPv4-mapped address is judged
 * by the IPv4 inside, and the deprecated IPv4-compatible form (::a.b.c.d, which it calls unicast)
 * is refused, as is anything that is not an address at all.
 */
export function isPrivateAddress(address: string): boolean {
  if (!isIP(address) || !ipaddr.isValid(address)) return true;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) return isPrivateAddress(v6.toIPv4Address().toString());
    if (v6.parts.slice(0, 6).every((part) => part === 0)) return true; // ::/96, IPv4-compatible
  }
  return parsed.range() !== 'unicast';
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
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw badRequest('url must be an http or https URL', 'parameter_invalid', 'url');
  if (parsed.username || parsed.password) throw badRequest('url must not carry credentials', 'parameter_invalid', 'url');
  if (allowPrivate) return;
  const hostname = hostnameOf(parsed);
  let addresses: string[];
  try {
    addresses = isIP(hostname) ? [hostname] : (await resolveAll(hostname)).map((entry) => entry.address);
  } catch {
    throw badRequest(`url: the host ${hostname} does not resolve`, 'parameter_invalid', 'url');
  }
  const refused = addresses.find(isPrivateAddress);
  if (refused !== undefined) {
    throw badRequest(
      `url: ${hostname} resolves to ${refused}, a private, loopback or link-local address; webhooks go to public addresses only`,
      'parameter_invalid',
      'url',
    );
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
