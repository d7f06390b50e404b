import ipaddr from 'ipaddr.js';

/**
 * Creation-time checks of a recording's `assetUrl` (spec: Create a recording, behaviour 2). They
 * stop the obvious server-side request forgery targets before anything is stored, without DNS:
 * the ingestion worker resolves the name later and re-checks every resolved address and redirect.
 */

/** Spec limit on `assetUrl`, counted on the string the caller sent. */
export const MAX_ASSET_URL_LENGTH = 4096;

/** IPv4-compatible IPv6 (`::a.b.c.d`, RFC 4291, deprecated): never routable, ipaddr.js calls it unicast. */
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');
/** Well-known NAT64 prefix (RFC 6052): a gateway forwards to the embedded IPv4, so judge that one. */
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');
/** IANA's global unicast block: everything outside it is reserved, whatever ipaddr.js names it. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/**
 * Why the URL cannot be used as a media source, or null when it passes the creation-time rules.
 * `allowedHosts`: host names an operator allows to point anywhere (MEDIA_FETCH_ALLOWED_HOSTS).
 */
export function assetUrlProblem(raw: string, allowedHosts: readonly string[] = []): string | null {
  // The spec's length limit applies to what was sent, before the parser normalizes it.
  if (raw.length > MAX_ASSET_URL_LENGTH) return `must be at most ${MAX_ASSET_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute HTTP or HTTPS URL';
  }
  // Other schemes (file:, ftp:, gopher:, data:) reach resources the worker must never fetch.
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must use the http or https scheme';
  // Credentials would be sent to a third party and stored with the recording; `http://@host` included.
  if (url.username !== '' || url.password !== '' || rawAuthority(raw).includes('@')) {
    return 'must not contain embedded credentials';
  }
  // Nothing to fetch without a host.
  if (url.hostname === '') return 'must have a host';
  if (allowedHosts.includes(url.hostname)) return null;
  return hostProblem(url.hostname);
}

/**
 * The authority as written, so that an empty `user@` (which the parser drops) is still seen. It
 * mirrors the parser for special schemes: tabs and newlines vanish, any run of `/` or `\` follows
 * the scheme, and the authority ends at `/`, `\`, `?` or `#`.
 */
function rawAuthority(raw: string): string {
  const cleaned = raw.replace(/[\t\n\r]/g, '');
  const afterScheme = cleaned.slice(cleaned.indexOf(':') + 1).replace(/^[/\\]*/, '');
  return afterScheme.split(/[/\\?#]/, 1)[0] ?? '';
}

/** `hostname` is the parser's normalized form: lower case, IPv4 in dotted decimal, IPv6 in brackets. */
function hostProblem(hostname: string): string | null {
  if (hostname.startsWith('[')) {
    const literal = hostname.slice(1, -1);
    // The parser already accepted it; refuse rather than fail if ipaddr.js ever disagrees.
    return ipaddr.IPv6.isValid(literal) ? ipv6Problem(ipaddr.IPv6.parse(literal)) : 'must have a valid IP address';
  }
  // The parser turns every IPv4 spelling (decimal, hex, octal, short) into four decimal parts.
  if (ipaddr.IPv4.isValidFourPartDecimal(hostname)) return ipv4Problem(ipaddr.IPv4.parse(hostname));
  // Loopback names resolve to the service's own host (RFC 6761), whatever DNS says.
  if (isLocalhostName(hostname)) return 'must not point to localhost';
  return null;
}

/**
 * Whether a resolved or literal IP address is a public unicast address the worker may dial (the
 * same rules as the creation-time check); the reason when it is not.
 */
export function publicAddressProblem(address: string): string | null {
  if (!ipaddr.isValid(address)) return 'must have a valid IP address';
  const parsed = ipaddr.parse(address);
  return parsed.kind() === 'ipv4' ? ipv4Problem(parsed as ipaddr.IPv4) : ipv6Problem(parsed as ipaddr.IPv6);
}

function isLocalhostName(hostname: string): boolean {
  // A trailing dot is the same name written as fully qualified.
  const name = hostname.toLowerCase().replace(/(?<!\.)\.+$/, '');
  return name === 'localhost' || name.endsWith('.localhost') || name === 'localhost.localdomain';
}

function ipv4Problem(address: ipaddr.IPv4): string | null {
  // ipaddr.js names every special-purpose IPv4 block the rules need (private, loopback, link-local,
  // carrier-grade NAT, multicast, 0.0.0.0/8, broadcast, 240.0.0.0/4, 192.0.0.0/24, benchmarking and the
  // documentation ranges): anything but plain unicast may be internal or meaningless.
  const range = address.range();
  return range === 'unicast' ? null : `must not be a non-public IP address (${range})`;
}

function ipv6Problem(address: ipaddr.IPv6): string | null {
  // These forms carry an IPv4 address that the network would reach in the end: judge that address.
  const embedded = embeddedIPv4(address);
  if (embedded) return ipv4Problem(embedded);
  // Unique-local, link-local, multicast, loopback, Teredo, documentation and the like.
  const range = address.range();
  if (range !== 'unicast') return `must not be a non-public IP address (${range})`;
  if (address.match(IPV4_COMPATIBLE)) return 'must not be an IPv4-compatible IPv6 address';
  if (!address.match(GLOBAL_UNICAST_V6)) return 'must not be a reserved IP address';
  return null;
}

/** The IPv4 address inside an IPv4-mapped, NAT64 well-known-prefix or 6to4 address, if any. */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 | null {
  if (address.isIPv4MappedAddress()) return address.toIPv4Address();
  const parts = address.parts;
  // NAT64 keeps the IPv4 address in the last 32 bits.
  if (address.match(NAT64_WELL_KNOWN)) return ipv4FromParts(parts[6] ?? 0, parts[7] ?? 0);
  // 6to4 (2002::/16, RFC 3056) keeps it in bits 16 to 47: the relay forwards to that host.
  if (address.range() === '6to4') return ipv4FromParts(parts[1] ?? 0, parts[2] ?? 0);
  return null;
}

function ipv4FromParts(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}
