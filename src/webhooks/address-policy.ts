import ipaddr from 'ipaddr.js';
import { publicAddressProblem } from '../domain/asset-url.js';
import type { AddressPolicy } from '../media/safe-fetch.js';

/**
 * Which addresses a webhook may be sent to: public ones (the media fetcher's rule), plus the
 * networks an operator allows (WEBHOOK_ALLOWED_PRIVATE_NETWORKS: its own internal receivers), plus
 * loopback in development (`npm start`: a receiver on the developer's machine).
 */
export function webhookAddressPolicy(o: { allowedNetworks: readonly string[]; allowLoopback: boolean }): AddressPolicy {
  const networks = o.allowedNetworks.map((cidr) => ipaddr.parseCIDR(cidr));
  return {
    problem(address: string): string | null {
      if (!ipaddr.isValid(address)) return publicAddressProblem(address);
      const ip = ipaddr.process(address);
      if (o.allowLoopback && ip.range() === 'loopback') return null;
      if (networks.some(([net, bits]) => net.kind() === ip.kind() && ip.match(net, bits))) return null;
      return publicAddressProblem(address);
    },
  };
}
