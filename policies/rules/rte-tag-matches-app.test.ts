/**
 * `entryway-rte-tag-matches-app`: its good fixtures (it passes them) and bad ones (it fires on
 * each, with its message), run through the policy's own CrossGuard callback as the engine would
 * (test/policies/run-policies.ts).
 */
import { describe, expect, it } from "vitest";
import { appContainer, deployment, rteContainer, type Obj } from "../../test/policies/fixtures";
import { asResource, runStackPolicy } from "../../test/policies/run-policies";
import { rteTagMatchesApp } from "./rte-tag-matches-app";

describe("AnsibleForms RTE on the app's tag (advisory)", () => {
  const remote = (image: string, env: Obj[] = []) => ({
    ...deployment([{ ...rteContainer(env), image }]),
    kind: "StatefulSet",
    metadata: { name: "remote-rte", namespace: "ns" },
  });
  const app = deployment([appContainer([]), rteContainer()]);
  it("passes an app, its sidecar and a RemoteRte on one tag; a second cluster without the app has nothing to compare", async () => {
    expect(
      await runStackPolicy(rteTagMatchesApp, [
        asResource(app),
        asResource(remote("ghcr.io/ansibleforms/ansibleforms-rte-core:7.3.0")),
      ]),
    ).toEqual([]);
    expect(
      await runStackPolicy(rteTagMatchesApp, [asResource(remote("ghcr.io/ansibleforms/ansibleforms-rte-full:7.2.0"))]),
    ).toEqual([]);
  });
  it("fires on a RemoteRte of another release, and on a custom image (known by RTE_MAX_JOBS) of another tag", async () => {
    const lagging = await runStackPolicy(rteTagMatchesApp, [
      asResource(app),
      asResource(remote("ghcr.io/ansibleforms/ansibleforms-rte-full:7.2.0")),
    ]);
    expect(lagging).toEqual([
      expect.stringMatching(
        /^StatefulSet ns\/remote-rte container "rte": RTE tag 7\.2\.0 differs from the AnsibleForms app's \(7\.3\.0\)/,
      ),
    ]);
    const custom = await runStackPolicy(rteTagMatchesApp, [
      asResource(app),
      asResource(remote("registry.example.com/team/my-rte:1.0", [{ name: "RTE_MAX_JOBS", value: "2" }])),
    ]);
    expect(custom.join()).toMatch(/RTE tag 1\.0 differs/);
  });
});
