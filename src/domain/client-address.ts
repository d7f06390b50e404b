import ipaddr from 'ipaddr.js';

/**
 * The prefix length of one IPv6 client: a /64 is the smallest block a network hands a host or a
 * home (RFC 7421), and a host that holds one may take any of its 2^64 addresses at will.
 */
export const IPV6_CLIENT_PREFIX = 64;

/**
 * The key a per-address limit counts a client address under: an IPv4 address as itself (an
 * IPv4-mapped IPv6 address such as `::ffff:203.0.113.7` as its IPv4 address), an IPv6 address as
 * its /64 (`2001:db8:1:2::/64`), so that one host cannot step around the limit by taking a fresh
 * address of its own block for every attempt. Anything else (no address) is its own key.
 */
export function rateLimitAddressKey(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const ip = ipaddr.process(address);
  if (ip.kind() === 'ipv4') return ip.toString();
  const parts = (ip as ipaddr.IPv6).parts.map((part, i) => (i < IPV6_CLIENT_PREFIX / 16 ? part : 0));
  return `${new ipaddr.IPv6(parts).toString()}/${IPV6_CLIENT_PREFIX}`;
}
