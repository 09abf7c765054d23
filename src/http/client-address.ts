import { BlockList, isIP } from 'node:net';
import { isAddressList, parseProxy } from '../util/addresses.js';

/**
 * Headers naming the client that no hop of ours vouches for: a wiki or its web server that trusts
 * this service (real_ip, `$wgCdnServers`) could read one as the client's address. The service
 * speaks `X-Forwarded-For` alone.
 */
const CLIENT_CLAIMS = ['forwarded', 'x-real-ip', 'client-ip', 'x-client-ip', 'true-client-ip', 'x-cluster-client-ip'];
/** Claims about the request's original scheme and host, kept only from a trusted proxy. */
const PROXY_CLAIMS = ['x-forwarded-host', 'x-forwarded-proto', 'x-forwarded-port', 'x-forwarded-server'];

/**
 * Who a request comes from, as a proxy says it to the next hop: the `X-Forwarded-For` chain a
 * client sent is kept only when the peer that connected is a proxy the operator trusts
 * (`trusted_proxies`); the peer's own address is always appended. So a client cannot name an
 * address of its choosing to a wiki that trusts this service (an anonymous edit credited to
 * another address, an IP block evaded), while a front such as nginx or Varnish, once named,
 * passes on the client it saw.
 */
export class ClientAddress {
  private readonly trusted = new BlockList();
  private readonly any: boolean;

  /** `proxies`: addresses (`10.0.0.1`, `::1`) or CIDR ranges (`10.0.0.0/8`), checked by `parseProxy`. */
  constructor(proxies: readonly string[] = []) {
    for (const proxy of proxies) {
      const { address, prefix, family } = parseProxy(proxy);
      if (prefix === undefined) this.trusted.addAddress(address, family);
      else this.trusted.addSubnet(address, prefix, family);
    }
    this.any = proxies.length > 0;
  }

  /** Whether `peer` (a socket's remote address) is a trusted proxy. */
  trusts(peer: string): boolean {
    if (!this.any) return false;
    const family = isIP(peer) === 6 ? 'ipv6' : 'ipv4';
    return isIP(peer) !== 0 && this.trusted.check(peer, family);
  }

  /**
   * Rewrites a request's headers (lower-case names) as a proxy passes them on: the peer's address
   * appended to the chain a trusted proxy sent, or alone; every other claim of a client about its
   * address dropped, and those about scheme and host unless a trusted proxy made them.
   */
  forward(headers: Record<string, string>, peer: string | undefined): void {
    for (const name of CLIENT_CLAIMS) delete headers[name];
    if (!(peer && this.trusts(unmapped(peer)))) for (const name of PROXY_CLAIMS) delete headers[name];
    const forwarded = this.forwardedFor(peer, headers['x-forwarded-for']);
    if (forwarded) headers['x-forwarded-for'] = forwarded;
    else delete headers['x-forwarded-for'];
  }

  /**
   * The `X-Forwarded-For` to pass on for a request from `peer` that claimed `claimed`, or
   * undefined when there is no peer address and nothing trusted to pass on.
   */
  forwardedFor(peer: string | undefined, claimed: string | undefined): string | undefined {
    const address = peer && unmapped(peer);
    if (!address) return undefined;
    const kept = claimed !== undefined && this.trusts(address) && isAddressList(claimed) ? claimed : undefined;
    return kept ? `${kept}, ${address}` : address;
  }

  /**
   * Who a request is from, for limits per client: the nearest address of its forwarded chain (as
   * `forward` left it, the peer last) that is not a trusted proxy, i.e. the client the outermost
   * trusted front saw; an IPv6 address by its /64, which one subscriber holds whole.
   */
  clientOf(forwardedFor: string | undefined, peer: string | undefined): string {
    const chain = (forwardedFor ?? '').split(',').map((a) => unmapped(a.trim())).filter((a) => a !== '');
    if (chain.length === 0) return peer ? subscriberOf(unmapped(peer)) : '';
    let at = chain.length - 1;
    while (at > 0 && this.trusts(chain[at]!)) at--;
    return subscriberOf(chain[at]!);
  }

  /**
   * `clientOf`, but undefined for a request the service's own side makes of itself: a trusted
   * proxy, or a process on this host, that names no client (the wiki's servers asking for a
   * VisualEditor session, a front's health check). Limits meant for outside clients (RESTBase's
   * stashes per client) leave those alone, as RESTBase left requests that did not come in from
   * outside.
   */
  outsideClientOf(forwardedFor: string | undefined, peer: string | undefined): string | undefined {
    const chain = (forwardedFor ?? '').split(',').map((a) => unmapped(a.trim())).filter((a) => a !== '');
    const only = chain.length === 1 ? chain[0]! : chain.length === 0 && peer ? unmapped(peer) : undefined;
    if (only !== undefined && (this.trusts(only) || LOOPBACK.check(only, isIP(only) === 6 ? 'ipv6' : 'ipv4'))) return undefined;
    return this.clientOf(forwardedFor, peer) || undefined;
  }
}

/** This host's own addresses. */
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** An IPv4 address as it is; an IPv6 address as its first 64 bits (`2001:db8:0:1::/64`). */
function subscriberOf(address: string): string {
  if (isIP(address) !== 6) return address;
  const [head = '', tail] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups.slice(0, 4).map((g) => Number.parseInt(g, 16).toString(16)).join(':')}::/64`;
}

/** An IPv4 address as itself, not as the IPv6 socket names it (`::ffff:10.0.0.1`). */
const unmapped = (address: string) => address.replace(/^::ffff:(?=\d+\.)/, '');
