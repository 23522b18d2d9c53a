// Addresses: loopback checks, the client's real address behind trusted proxies, and the key the
// limits before authentication count a client under.
import { isIP, type BlockList } from "node:net";
import { Address6 } from "ip-address";

/** "::ffff:10.0.0.1" (an IPv4 peer on a dual-stack socket) as "10.0.0.1"; other addresses unchanged. */
export function plainAddress(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? mapped[1]! : address;
}

export function isLoopbackHost(host: string): boolean {
  const bare = plainAddress(host.replace(/^\[|\]$/g, ""));
  if (bare === "localhost") return true;
  if (isIP(bare) === 4) return bare.startsWith("127.");
  return bare === "::1";
}

/**
 * `url` parsed, when it is https, or plain http to a loopback address; else an error naming `what`
 * and `why` (what crosses it: a token, or keys that verify tokens).
 */
export function secureUrl(url: string, what: string, why: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`${what} ${JSON.stringify(url.slice(0, 200))} is not a URL`);
  }
  if (parsed.protocol === "https:" || (parsed.protocol === "http:" && isLoopbackHost(parsed.hostname))) return parsed;
  throw new Error(`${what} must be https (plain http only to a loopback address): ${why}`);
}

function familyOf(address: string): "ipv4" | "ipv6" {
  return isIP(address) === 6 ? "ipv6" : "ipv4";
}

/** How the client's address is found behind proxies (the settings trustedProxies and trustedProxyHops). */
export interface ProxyTrust {
  /** Peers whose X-Forwarded-For is believed; empty with `hops` > 0: every peer (the NetworkPolicy admits only the ingress). */
  proxies: BlockList;
  proxiesConfigured: boolean;
  /** How many proxies in front of the gateway each append the address they saw to X-Forwarded-For (0: none known). */
  hops: number;
}

/**
 * The client's address. Without trusted proxies, the peer's. With `hops` (trustedProxyHops): the
 * peer is the last of that many proxies that each append the address they saw, so the client is the
 * hops-th address from the right of X-Forwarded-For; fewer addresses than that, or garbage, leave
 * the peer's (as Envoy does with xff_num_trusted_hops: envoyproxy/envoy docs, "x-forwarded-for",
 * and istio.io docs/ops/configuration/traffic-management/network-topologies). Addresses further left
 * were written by the client and prove nothing. With `hops` and trustedProxies, only those peers
 * are believed. With trustedProxies alone, X-Forwarded-For is read from the right (the hop nearest
 * us), skipping trusted proxies, and the first untrusted address wins.
 */
export function clientAddress(peer: string, forwardedFor: string | string[] | undefined, trust: ProxyTrust): string {
  let address = plainAddress(peer);
  const peerTrusted =
    isIP(address) !== 0 && (trust.proxiesConfigured ? trust.proxies.check(address, familyOf(address)) : trust.hops > 0);
  if (!peerTrusted) return address;
  const hops = [forwardedFor ?? []]
    .flat()
    .join(",")
    .split(",")
    .map((hop) => plainAddress(hop.trim()))
    .filter((hop) => hop !== "");
  if (trust.hops > 0) {
    const hop = hops[hops.length - trust.hops];
    return hop !== undefined && isIP(hop) ? hop : address;
  }
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!;
    if (!isIP(hop)) return address; // garbage: keep the last address we could trust
    address = hop;
    if (!trust.proxies.check(hop, familyOf(hop))) return hop;
  }
  return address;
}

/**
 * The key a client's limits before authentication are counted under: an IPv4 address as it is, an
 * IPv6 address as its /64 (anything else unchanged). One IPv6 host can use every address of its /64
 * (RFC 7934 section 6 recommends giving each host a /64; an end site gets more, RFC 6177), so
 * counting single addresses would give one client as many budgets as it likes.
 */
export function limitKey(address: string): string {
  if (isIP(address) !== 6) return address;
  return `${new Address6(`${address}/64`).startAddress().correctForm()}/64`;
}
