/** The Stack's ansibleForms and remoteRte sections: schema checks and composition. */
import { describe, expect, it } from "vitest";
import { parseStackConfig, Stack } from "../../components/stack";
import { render } from "../../testkit/harness/pulumi";
import { assertValidObjects, type ObjectLike } from "../../testkit/harness/validate";
import { container, envOf, find, podSpec } from "./helpers";

describe("stack config sections ansibleForms and remoteRte", () => {
  it("the schema names a bad mode, a bad runner field and an unknown key, in one line", () => {
    const bad = {
      namespace: "forms",
      ansibleForms: {
        rte: { mode: "sideways" },
        runners: { items: [{ name: "x", type: "rte", token: "${RTE_TOKEN}", colour: "blue" }] },
      },
      remoteRte: { appUrl: "https://a.example.com", replicaz: 2 },
    };
    expect(() => parseStackConfig(bad)).toThrow(/\/ansibleForms\/rte\/mode must be equal to one of the allowed values/);
    expect(() => parseStackConfig(bad)).toThrow(/"colour"/);
    expect(() => parseStackConfig(bad)).toThrow(/\/remoteRte must NOT have additional properties "replicaz"/);
  });

  it("the schema requires the outbound RTE's app URL", () => {
    expect(() => parseStackConfig({ namespace: "forms", remoteRte: { existingTokenSecret: "t" } })).toThrow(
      /\/remoteRte must have required property 'appUrl'/,
    );
  });

  it("a stack with both sections: the app seeds the second runner, the RemoteRte dials the app in the same namespace", async () => {
    const config = parseStackConfig({
      name: "acme",
      namespace: "forms",
      createNamespace: false,
      ansibleForms: {
        secretEnv: [{ name: "RTE_TOKEN_DC2", secretName: "dc2-token", key: "token" }],
        runners: { items: [{ name: "dc2", type: "rte", mode: "outbound", token: "${RTE_TOKEN_DC2}" }] },
      },
      remoteRte: {
        appUrl: "http://acme-ansibleforms.forms.svc.cluster.local:8000",
        existingTokenSecret: "dc2-token",
        allowInsecureAppUrl: true,
      },
    });
    const { manifests } = await render(() => new Stack("test", config));
    const objects = manifests as ObjectLike[];
    await assertValidObjects(objects);
    const app = podSpec(find(objects, "Deployment", "acme-ansibleforms"));
    expect(envOf(container(app, "ansibleforms"), "RTE_TOKEN_DC2")?.valueFrom?.secretKeyRef).toEqual({
      name: "dc2-token",
      key: "token",
    });
    const rte = container(podSpec(find(objects, "StatefulSet", "acme-remote-rte")), "rte");
    expect(envOf(rte, "RTE_TOKEN")?.valueFrom?.secretKeyRef).toEqual({ name: "dc2-token", key: "token" });
    expect(objects.every((o) => o.metadata?.namespace === "forms")).toBe(true);
  });

  it("bad input in a section fails the stack with the component's message", async () => {
    const config = parseStackConfig({
      namespace: "forms",
      remoteRte: { appUrl: "https://a.example.com", existingTokenSecret: "t", files: "local" },
    });
    await expect(render(() => new Stack("test", config))).rejects.toThrow(
      /RemoteRte entryway: files "local" needs the app's disk/,
    );
  });
});
