/**
 * `entryway-connect-static-clusters`: its good fixtures (it passes them) and bad ones (it fires on
 * each, with its message), run through the policy's own CrossGuard callback as the engine would
 * (test/policies/run-policies.ts).
 */
import { describe, expect, it } from "vitest";
import { envoyFilter, staticRoute, workspaceRoute } from "../../test/policies/fixtures";
import { asResource, runResourcePolicy } from "../../test/policies/run-policies";
import { connectStaticClusters } from "./connect-static-clusters";

describe("CONNECT routes go only to static clusters", () => {
  it("passes a static outbound|22||fqdn route", async () => {
    expect(
      await runResourcePolicy(connectStaticClusters, asResource(envoyFilter([workspaceRoute(staticRoute)]))),
    ).toEqual([]);
  });
  it.each([
    ["a cluster header", { cluster_header: "x-target", timeout: "0s" }, /cluster_header|not a static/],
    ["an original destination cluster", { cluster: "original_dst_cluster" }, /original_dst/],
    ["a dynamic forward proxy cluster", { cluster: "dynamic_forward_proxy_cluster" }, /dynamic_forward_proxy/],
    [
      "a cluster that is not outbound|port||fqdn",
      { cluster: "outbound|22||*" },
      /not a static outbound\|port\|\|fqdn cluster/,
    ],
  ])("fires on %s", async (_name, route, message) => {
    const violations = await runResourcePolicy(connectStaticClusters, asResource(envoyFilter([workspaceRoute(route)])));
    expect(violations.join("\n")).toMatch(message);
  });
});
