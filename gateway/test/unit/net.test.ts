// gateway/src/net.ts: the client's address behind proxies (trustedProxies, trustedProxyHops) and the
// key its limits are counted under (IPv6 by its /64).
import { describe, expect, it } from "vitest";
import { cidrList } from "../../src/config.js";
import { clientAddress, limitKey } from "../../src/net.js";

describe("client addresses behind proxies", () => {
  const trust = (proxies: string[], hops: number) => ({
    proxies: cidrList(proxies),
    proxiesConfigured: proxies.length > 0,
    hops,
  });
  const xff = "192.0.2.1, 198.51.100.7, 203.0.113.9";

  it("takes the hops-th address from the right with trustedProxyHops, the peer when there are fewer or garbage", () => {
    expect(clientAddress("10.1.2.3", xff, trust([], 1))).toBe("203.0.113.9");
    expect(clientAddress("10.1.2.3", [xff], trust([], 2))).toBe("198.51.100.7");
    expect(clientAddress("10.1.2.3", "203.0.113.9", trust([], 2))).toBe("10.1.2.3");
    expect(clientAddress("10.1.2.3", undefined, trust([], 1))).toBe("10.1.2.3");
    expect(clientAddress("10.1.2.3", "192.0.2.1, not-an-address", trust([], 1))).toBe("10.1.2.3");
    expect(clientAddress("::ffff:10.1.2.3", "::ffff:203.0.113.9", trust([], 1))).toBe("203.0.113.9");
  });

  it("with trustedProxies and trustedProxyHops, believes only those peers", () => {
    expect(clientAddress("10.1.2.3", xff, trust(["10.0.0.0/8"], 1))).toBe("203.0.113.9");
    expect(clientAddress("172.16.0.5", xff, trust(["10.0.0.0/8"], 1))).toBe("172.16.0.5");
  });

  it("believes nobody by default", () => {
    expect(clientAddress("10.1.2.3", xff, trust([], 0))).toBe("10.1.2.3");
  });

  it("counts IPv6 clients by their /64, however the address is written; IPv4 and other keys as they are", () => {
    expect(limitKey("2001:db8:1:2::a")).toBe("2001:db8:1:2::/64");
    expect(limitKey("2001:0db8:0001:0002:ffff:ffff:ffff:ffff")).toBe("2001:db8:1:2::/64");
    expect(limitKey("2001:db8:1:3::a")).toBe("2001:db8:1:3::/64");
    expect(limitKey("::1")).toBe("::/64");
    expect(limitKey("203.0.113.9")).toBe("203.0.113.9");
    expect(limitKey("a")).toBe("a");
  });
});
