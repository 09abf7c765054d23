import { isIP } from 'node:net';

/** One `trusted_proxies` entry, or an Error saying what is wrong with it. */
export function parseProxy(entry: string): { address: string; prefix?: number; family: 'ipv4' | 'ipv6' } {
  const [address = '', bits, extra] = String(entry).split('/');
  const version = isIP(address);
  if (version === 0 || extra !== undefined) throw new Error(`'${entry}' is not an IP address or CIDR range`);
  const family = version === 6 ? 'ipv6' : 'ipv4';
  if (bits === undefined) return { address, family };
  const prefix = Number(bits);
  if (!/^\d+$/.test(bits) || prefix > (version === 6 ? 128 : 32)) throw new Error(`'${entry}' has no valid prefix length`);
  return { address, prefix, family };
}

/** Whether an `X-Forwarded-For` value is a list of IP addresses (and nothing else). */
export function isAddressList(value: string | undefined): value is string {
  if (!value) return false;
  return value.split(',').every((entry) => isIP(entry.trim()) !== 0);
}
