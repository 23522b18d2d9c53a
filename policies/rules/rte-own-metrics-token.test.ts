/**
 * `entryway-rte-own-metrics-token`: its good fixtures (it passes them) and bad ones (it fires on
 * each, with its message), run through the policy's own CrossGuard callback as the engine would
 * (test/policies/run-policies.ts).
 */
import { describe, expect, it } from "vitest";
import { appContainer, deployment, rteContainer } from "../../test/policies/fixtures";
import { asResource, runStackPolicy } from "../../test/policies/run-policies";
import { rteOwnMetricsToken } from "./rte-own-metrics-token";

describe("an RTE's metrics token is its own", () => {
  const metrics = (secret: string) => ({
    name: "METRICS_TOKEN",
    valueFrom: { secretKeyRef: { name: secret, key: "token" } },
  });
  const app = (secret: string) => deployment([appContainer([metrics(secret)])]);
  const remote = (secret: string) => ({
    ...deployment([rteContainer([metrics(secret)])]),
    kind: "StatefulSet",
    metadata: { name: "remote-rte", namespace: "ns" },
  });
  it("passes an RTE whose METRICS_TOKEN comes from another Secret", async () => {
    expect(
      await runStackPolicy(rteOwnMetricsToken, [asResource(app("app-metrics")), asResource(remote("rte-metrics"))]),
    ).toEqual([]);
    expect(
      await runStackPolicy(rteOwnMetricsToken, [
        asResource(deployment([appContainer([metrics("app-metrics")]), rteContainer([metrics("rte-metrics")])])),
      ]),
    ).toEqual([]);
  });
  it("fires on an RTE given the app's METRICS_TOKEN Secret, in the app's pod or elsewhere", async () => {
    expect(
      await runStackPolicy(rteOwnMetricsToken, [asResource(app("app-metrics")), asResource(remote("app-metrics"))]),
    ).toEqual([
      expect.stringMatching(
        /^StatefulSet ns\/remote-rte RTE container "rte": METRICS_TOKEN comes from the app's METRICS_TOKEN Secret app-metrics/,
      ),
    ]);
    const samePod = deployment([appContainer([metrics("app-metrics")]), rteContainer([metrics("app-metrics")])]);
    expect((await runStackPolicy(rteOwnMetricsToken, [asResource(samePod)])).join()).toMatch(
      /METRICS_TOKEN comes from the app's/,
    );
  });
});
