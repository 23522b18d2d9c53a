/**
 * `entryway-pod-security-restricted` against the real thing: every pod the rule refuses
 * (test/policies/pod-security-fixtures.ts, one "restricted" check broken at a time), the real API
 * server's Pod Security admission (Kubernetes v1.37.2, test/real/global-setup.ts) refuses in a
 * namespace that enforces `restricted`, with that check's reason, and admits in one that enforces
 * `privileged`: the admission check refuses it, not the API's validation. The pods the rule passes,
 * it admits at `restricted`. Every request is a dry run (admission runs; nothing is stored).
 *
 * Where the two differ: nowhere among these pods. The rule reads the pod template of every workload
 * kind; admission enforces on pods and only warns on templates. Privileged and hostProcess
 * containers never reach admission here: this API server, like any without --allow-privileged,
 * refuses them in validation first.
 */
import { CoreV1Api, KubeConfig, type V1Pod } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { podSecurityRestricted } from "../../policies/rules/pod-security-restricted";
import { ADMITTED, REFUSED, restrictedPod } from "../policies/pod-security-fixtures";
import { asResource, runResourcePolicy } from "../policies/run-policies";

const { kubeconfig } = inject("controlPlane");
const admin = new KubeConfig();
admin.loadFromFile(kubeconfig);
const core = admin.makeApiClient(CoreV1Api);

const RESTRICTED = "pss-restricted";
const PRIVILEGED = "pss-privileged";

/** Creates the pod as a dry run; the API server's refusal (status and message), or null when admitted. */
async function create(namespace: string, pod: V1Pod): Promise<{ code: number; message: string } | null> {
  try {
    await core.createNamespacedPod({
      namespace,
      body: { ...pod, metadata: { ...pod.metadata, namespace } },
      dryRun: "All",
    });
    return null;
  } catch (error) {
    const { code, body } = error as { code?: number; body?: unknown };
    const text = typeof body === "string" ? body : JSON.stringify(body);
    return { code: code ?? 0, message: (JSON.parse(text) as { message?: string }).message ?? text };
  }
}

beforeAll(async () => {
  for (const [name, level] of [
    [RESTRICTED, "restricted"],
    [PRIVILEGED, "privileged"],
  ]) {
    await core.createNamespace({
      body: {
        metadata: {
          name,
          labels: {
            "pod-security.kubernetes.io/enforce": level!,
            "pod-security.kubernetes.io/enforce-version": "latest",
          },
        },
      },
    });
  }
});
afterAll(async () => {
  for (const name of [RESTRICTED, PRIVILEGED]) await core.deleteNamespace({ name }).catch(() => undefined);
});

describe("Pod Security admission at restricted refuses what entryway-pod-security-restricted refuses", () => {
  it.each(REFUSED.filter((c) => !c.refusedByValidation).map((c) => [c.name, c] as const))(
    "%s",
    async (_name, { change, rule, admission }) => {
      const pod = restrictedPod();
      change(pod);
      expect((await runResourcePolicy(podSecurityRestricted, asResource(pod))).join("\n")).toMatch(rule);
      const refused = await create(RESTRICTED, pod as V1Pod);
      expect(refused?.code, refused?.message).toBe(403);
      expect(refused?.message).toContain('violates PodSecurity "restricted:latest"');
      expect(refused?.message).toContain(admission);
      expect(await create(PRIVILEGED, pod as V1Pod)).toBeNull();
    },
  );

  // This API server runs without --allow-privileged (the default): its validation refuses these
  // before admission, at any level, so Pod Security's own privileged and hostProcess checks are not
  // reached here; the API server still refuses every pod the rule refuses.
  it.each(REFUSED.filter((c) => c.refusedByValidation).map((c) => [c.name, c] as const))(
    "%s (refused by the API's validation first: disallowed by cluster policy)",
    async (_name, { change, rule }) => {
      const pod = restrictedPod();
      change(pod);
      expect((await runResourcePolicy(podSecurityRestricted, asResource(pod))).join("\n")).toMatch(rule);
      for (const namespace of [RESTRICTED, PRIVILEGED]) {
        const refused = await create(namespace, pod as V1Pod);
        expect(refused?.code, refused?.message).toBe(422);
        expect(refused?.message).toMatch(/disallowed by cluster policy/);
      }
    },
  );

  it.each(ADMITTED.map((c) => [c.name, c] as const))(
    "and admits %s, which the rule passes",
    async (_name, { change }) => {
      const pod = restrictedPod();
      change(pod);
      expect(await runResourcePolicy(podSecurityRestricted, asResource(pod))).toEqual([]);
      expect(await create(RESTRICTED, pod as V1Pod)).toBeNull();
    },
  );
});
