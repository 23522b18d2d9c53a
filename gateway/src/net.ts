// Addresses: loopback checks, and the client's real address behind trusted proxies.
import { isIP, type BlockList } from "node:net";

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

function familyOf(address: string): "ipv4" | "ipv6" {
  return isIP(address) === 6 ? "ipv6" : "ipv4";
}

/**
 * The client's address: the peer's, unless the peer is a trusted proxy; then X-Forwarded-For is read
 * from the right (the hop nearest us), skipping trusted proxies, and the first untrusted address wins.
 * Addresses left of it were written by the client and prove nothing.
 */
export function clientAddress(peer: string, forwardedFor: string | string[] | undefined, trusted: BlockList): string {
  let address = plainAddress(peer);
  if (!isIP(address) || !trusted.check(address, familyOf(address))) return address;
  const hops = [forwardedFor ?? []]
    .flat()
    .join(",")
    .split(",")
    .map((hop) => plainAddress(hop.trim()))
    .filter((hop) => hop !== "");
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!;
    if (!isIP(hop)) return address; // garbage: keep the last address we could trust
    address = hop;
    if (!trusted.check(hop, familyOf(hop))) return hop;
  }
  return address;
}
