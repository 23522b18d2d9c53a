/** The RunnerSeed component on its own (components/ansibleforms/runner-seed.ts): the seed's ConfigMap, and its refusals. */
import * as pulumi from "@pulumi/pulumi";
import { describe, expect, it } from "vitest";
import { RunnerSeed } from "../../components/ansibleforms/runner-seed";
import { outputOf, render } from "../../testkit/harness/pulumi";
import { assertValidObjects, type ObjectLike } from "../../testkit/harness/validate";
import { failure, find, SIDECAR_RUNNER } from "./helpers";

describe("RunnerSeed on its own", () => {
  it("renders the seed into a ConfigMap under the key the app reads, and exposes its path and content", async () => {
    let seed: RunnerSeed | undefined;
    const { manifests } = await render(() => {
      seed = new RunnerSeed("seed", {
        namespace: "forms",
        configMapName: "forms-seed",
        appEnv: ["RTE_TOKEN", "AWX_PASSWORD"],
        seed: {
          prune: false,
          runners: [
            SIDECAR_RUNNER,
            {
              name: "awx",
              type: "awx",
              uri: "https://awx.example.com",
              username: "forms",
              password: "${AWX_PASSWORD}",
              ignore_certs: false,
            },
          ],
        },
      });
    });
    await assertValidObjects(manifests as ObjectLike[]);
    const configMap = find(manifests as ObjectLike[], "ConfigMap", "forms-seed") as unknown as {
      data: Record<string, string>;
    };
    expect(seed!.path).toBe(`/etc/ansibleforms/seed/${seed!.key}`);
    expect(configMap.data[seed!.key]).toBe(seed!.content);
    expect(await outputOf(seed!.configMapName)).toBe("forms-seed");
    expect(seed!.content).toContain("prune: false");
    expect(seed!.content).toContain("password: ${AWX_PASSWORD}");
  });

  it("fails on an awx runner without a uri and an unknown type, both at once, one a line", async () => {
    const error = await failure(() =>
      render(
        () =>
          new RunnerSeed("bad", {
            namespace: "x",
            configMapName: "x",
            appEnv: [],
            seed: { runners: [{ name: "a", type: "awx" } as never, { name: "b", type: "ssh" } as never] },
          }),
      ),
    );
    expect(pulumi.ResourceError.isInstance(error)).toBe(true);
    expect(error.message).toMatch(
      /^RunnerSeed bad: the runner seed is invalid: runner "a" is an awx runner without a uri\nRunnerSeed bad: the runner seed is invalid: runner "b" has unknown type "ssh"/,
    );
  });
});
