import type { AppsV1Api } from "@kubernetes/client-node";
import { expect } from "vitest";

/** Waits until a Deployment's rollout is over: every replica updated and Ready, no old pod left. */
export async function rolledOut(apps: AppsV1Api, namespace: string, name: string): Promise<void> {
  await expect
    .poll(
      async () => {
        const deployment = await apps.readNamespacedDeployment({ namespace, name });
        const { replicas = 0, updatedReplicas, readyReplicas, observedGeneration } = deployment.status ?? {};
        return (
          observedGeneration === deployment.metadata?.generation &&
          updatedReplicas === deployment.spec?.replicas &&
          readyReplicas === deployment.spec?.replicas &&
          replicas === deployment.spec?.replicas
        );
      },
      { timeout: 120_000 },
    )
    .toBe(true);
}
