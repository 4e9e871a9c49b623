import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { refusalOf, type AddressRefusal } from './address-ranges.js';

/** A target address that policy forbids: the connection is never opened. */
export class AddressRefusedError extends Error {
  constructor(
    readonly host: string,
    readonly address: string,
    readonly reason: AddressRefusal,
  ) {
    super(`${host} resolves to a ${reason} address (${address}), which outbound calls may not reach`);
    this.name = 'AddressRefusedError';
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
type Resolver = (hostname: string) => Promise<LookupAddress[]>;

/** Resolves a name with the system resolver, every address (A and AAAA) in one answer. */
export function systemResolver(hostname: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, order: 'verbatim' }, (err, addresses) => (err ? reject(err) : resolve(addresses)));
  });
}

/**
 * A `lookup` for net/tls.connect that resolves once, refuses the whole answer if any address is not public
 * (unless the host is exempt), and hands exactly the checked addresses to the socket, so a second resolution
 * (DNS rebinding) can never swap in another address between the check and the connection.
 */
export function createPinnedLookup(isExempt: (host: string) => boolean, resolver: Resolver = systemResolver) {
  return (hostname: string, options: { all?: boolean; family?: number | string }, callback: LookupCallback): void => {
    resolver(hostname).then(
      (found) => {
        const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
        const addresses = family === 4 || family === 6 ? found.filter((a) => a.family === family) : found;
        if (addresses.length === 0)
          return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
        if (!isExempt(hostname)) {
          for (const a of addresses) {
            const reason = refusalOf(a.address);
            if (reason) return callback(new AddressRefusedError(hostname, a.address, reason), []);
          }
        }
        if (options.all) return callback(null, addresses);
        return callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, []),
    );
  };
}
