/**
 * `entryway-connect-dedicated-gateway`: its good fixtures (it passes them) and bad ones (it fires
 * on each, with its message), run through the policy's own CrossGuard callback as the engine would
 * (test/policies/run-policies.ts).
 */
import { describe, expect, it } from "vitest";
import { connectListener, envoyFilter, staticRoute, workspaceRoute } from "../../test/policies/fixtures";
import { asResource, runResourcePolicy } from "../../test/policies/run-policies";
import { connectDedicatedGateway } from "./connect-dedicated-gateway";

describe("CONNECT only on the dedicated gateway, never on 80/443", () => {
  it("passes CONNECT on the dedicated gateway's port 2222", async () => {
    expect(
      await runResourcePolicy(
        connectDedicatedGateway,
        asResource(envoyFilter([connectListener(2222), workspaceRoute(staticRoute)])),
      ),
    ).toEqual([]);
  });
  it.each([80, 443, 8080, 8443])("fires on port %i", async (port) => {
    const violations = await runResourcePolicy(
      connectDedicatedGateway,
      asResource(envoyFilter([connectListener(port)])),
    );
    expect(violations.join("\n")).toMatch(new RegExp(`never enabled on port ${port}`));
  });
  it("fires on the shared ingress gateway, on no selector, and on sidecars", async () => {
    expect(
      (
        await runResourcePolicy(
          connectDedicatedGateway,
          asResource(envoyFilter([connectListener(2222)], { istio: "ingressgateway" })),
        )
      ).join(),
    ).toMatch(/shared istio=ingressgateway/);
    expect(
      (await runResourcePolicy(connectDedicatedGateway, asResource(envoyFilter([connectListener(2222)], {})))).join(),
    ).toMatch(/workloadSelector/);
    const sidecar = connectListener(2222);
    sidecar.match.context = "SIDECAR_INBOUND";
    expect((await runResourcePolicy(connectDedicatedGateway, asResource(envoyFilter([sidecar])))).join()).toMatch(
      /never on sidecars/,
    );
  });
});
