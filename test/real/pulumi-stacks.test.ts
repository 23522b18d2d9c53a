/**
 * `pulumi up` of the shipped environments by the REAL engine, Kubernetes provider and API server
 * (test/real/global-setup.ts). The built-in default (Pulumi.dev.yaml): every object accepted, every
 * pod admitted by Pod Security `restricted` and Ready (kwok's node), the outputs the offline
 * renderer printed, the RBAC it grants as the real authorizer decides it; then a second `up` that
 * changes nothing, a `refresh` with no drift, the preview of one more workspace and of one fewer
 * (what a reviewer sees in CI), and `destroy`. The production example (Pulumi.prod.example.yaml):
 * `up` and `destroy`.
 *
 * As on a user's cluster, the namespaces the exec gateway enters exist before the stack (it makes
 * Roles there and does not own them: docs/deploying.md).
 */
import type { KubernetesObject } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { objectApi, objectExists } from "../../testkit/harness/control-plane";
import { PulumiStack, type EngineResult } from "../../testkit/harness/pulumi-engine";
import { objectKey, renderOffline, type OfflineRendering } from "./offline-render";
import { expectRbacAsDeployed } from "./rbac-matrix";
import { shippedStack, stackConfig, withoutAddressWaits, type StackDocument } from "../../testkit/harness/stack-config";

const { kubeconfig } = inject("controlPlane");
const api = objectApi(kubeconfig);
const dev = withoutAddressWaits(shippedStack("dev"));

/** Makes the namespaces a stack enters but does not own. */
async function makeTargetNamespaces(stack: StackDocument): Promise<void> {
  for (const name of stack.execGateway?.targetNamespaces ?? []) {
    try {
      await api.create({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
    } catch (error) {
      if ((error as { code?: number }).code !== 409) throw error;
    }
  }
}

const K8S_PREFIX = "kubernetes:";
/** The steps of Kubernetes objects, as "op kind name" (the URN's name part is the Pulumi name). */
function kubernetesSteps(result: EngineResult, ops: string[]): string[] {
  return result.steps
    .filter((step) => step.type.startsWith(K8S_PREFIX) && ops.includes(step.op))
    .map((step) => `${step.op} ${step.type} ${step.urn.split("::").pop()}`)
    .sort();
}

const exists = (object: KubernetesObject) => objectExists(api, object);

/** The objects (by objectKey) the API server does not hold. */
async function missingObjects(objects: OfflineRendering["objects"]): Promise<string[]> {
  const missing: string[] = [];
  for (const object of objects) if (!(await exists(object as KubernetesObject))) missing.push(objectKey(object));
  return missing;
}

describe("the dev stack on the real engine and API server", () => {
  let stack: PulumiStack;
  let offline: OfflineRendering;
  let firstUp: EngineResult;

  beforeAll(async () => {
    stack = new PulumiStack({ stackName: "dev", config: stackConfig(dev), kubeconfig });
    offline = await renderOffline("dev", stackConfig(dev));
    await makeTargetNamespaces(dev);
  });
  afterAll(() => stack?.remove());

  it("pulumi up succeeds and the API server holds every object the offline renderer makes", async () => {
    firstUp = await stack.expect("up");
    const created = kubernetesSteps(firstUp, ["create"]);
    expect(created.length).toBe(offline.objects.length);
    expect(await missingObjects(offline.objects)).toEqual([]);
  });

  it("every pod of the stack was admitted under Pod Security restricted and is Running and Ready", async () => {
    const namespaces = [...new Set(offline.objects.filter((o) => o.kind === "Namespace").map((o) => o.metadata.name))];
    expect(namespaces.length).toBeGreaterThan(0);
    for (const namespace of namespaces) {
      const ns = (await api.read({
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: namespace },
      })) as KubernetesObject;
      // No label of its own: the cluster's default, restricted, applied (control-plane.ts).
      expect(ns.metadata?.labels?.["pod-security.kubernetes.io/enforce"] ?? "restricted").toBe("restricted");
    }
    const pods = (await api.list("v1", "Pod")).items as (KubernetesObject & {
      status?: { phase?: string; conditions?: { type: string; status: string }[] };
    })[];
    const ours = pods.filter((pod) => namespaces.includes(pod.metadata!.namespace!));
    const workloads = offline.objects.filter((o) => ["Deployment", "StatefulSet"].includes(o.kind));
    expect(ours.length).toBeGreaterThanOrEqual(workloads.length);
    const notReady = ours.filter(
      (pod) =>
        pod.status?.phase !== "Running" ||
        !pod.status.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
    );
    expect(notReady.map((pod) => `${pod.metadata!.namespace}/${pod.metadata!.name}`)).toEqual([]);
  });

  it("RBAC: what the real authorizer lets the stack's ServiceAccounts do", async () => {
    await expectRbacAsDeployed(kubeconfig, {
      frontEnd: "Pulumi, Pulumi.dev.yaml",
      gatewayNamespace: dev.namespace!,
      targetNamespaces: dev.execGateway!.targetNamespaces!,
      connectNamespace: `${dev.namespace}-connect`,
      stackNamespaces: [dev.namespace!, `${dev.namespace}-connect`],
      debugContainers: false,
      kubernetesAuthorizer: true,
      connectTls: false,
    });
  });

  it("the stack outputs are the ones the offline renderer printed", () => {
    const engineOutputs = Object.fromEntries(
      Object.entries(firstUp.outputs).map(([key, { value, secret }]) => [key, secret ? "[secret]" : value]),
    );
    expect(engineOutputs).toEqual(offline.outputs);
  });

  it("a second pulumi up changes nothing, and refresh finds no drift", async () => {
    const again = await stack.expect("up");
    expect(Object.keys(again.summary).filter((kind) => kind !== "same")).toEqual([]);
    const refresh = await stack.expect("refresh");
    const drifted = refresh.steps.filter(
      (step) => step.op !== "same" && step.op !== "refresh" && step.type.startsWith(K8S_PREFIX),
    );
    expect(drifted.map((s) => `${s.op} ${s.urn}`)).toEqual([]);
    expect(Object.keys(refresh.summary).filter((kind) => kind !== "same")).toEqual([]);
  });

  it("preview of one more workspace shows only that workspace's objects created, as the offline renderer says; removing it, only deletes", async () => {
    const bob = { ...dev.workspaces![0]!, name: "bob" };
    const withBobConfig = stackConfig({ ...dev, workspaces: [...dev.workspaces!, bob] });
    stack.setConfig(withBobConfig);
    const withBob = await renderOffline("dev", withBobConfig);
    // The offline renderer's own diff: new objects only, no existing one changed (the listener
    // EnvoyFilter and the CONNECT gateway's NetworkPolicy, which selects by namespace, untouched).
    const before = new Map(offline.objects.map((object) => [objectKey(object), JSON.stringify(object)]));
    const offlineAdded = withBob.objects.filter((object) => !before.has(objectKey(object)));
    const offlineChanged = withBob.objects.filter(
      (object) => before.has(objectKey(object)) && before.get(objectKey(object)) !== JSON.stringify(object),
    );
    expect(offlineAdded.length).toBeGreaterThan(0);
    expect(offlineChanged.map(objectKey)).toEqual([]);

    const preview = await stack.expect("preview");
    const changed = preview.steps.filter((step) => step.op !== "same");
    expect(changed.filter((step) => step.op !== "create").map((s) => `${s.op} ${s.urn}`)).toEqual([]);
    expect(kubernetesSteps(preview, ["create"]).length).toBe(offlineAdded.length);
    expect(changed.every((step) => step.urn.includes("bob"))).toBe(true);

    await stack.expect("up");
    stack.setConfig(stackConfig(dev));
    const removal = await stack.expect("preview");
    const removed = removal.steps.filter((step) => step.op !== "same");
    expect(removed.filter((step) => step.op !== "delete").map((s) => `${s.op} ${s.urn}`)).toEqual([]);
    expect(kubernetesSteps(removal, ["delete"]).length).toBe(offlineAdded.length);
    await stack.expect("up");
  });

  it("pulumi destroy removes every object and namespace", async () => {
    await stack.expect("destroy");
    const left: string[] = [];
    for (const object of offline.objects) if (await exists(object as KubernetesObject)) left.push(objectKey(object));
    // Namespaces terminate asynchronously (the namespace controller empties them first).
    const stillThere = left.filter((key) => !key.startsWith("Namespace/"));
    expect(stillThere).toEqual([]);
  });
});

describe("the production example on the real engine and API server", () => {
  const prod = withoutAddressWaits(shippedStack("prod.example"));
  let stack: PulumiStack;
  afterAll(() => stack?.remove());

  it("pulumi up creates every object the offline renderer makes; destroy removes them", async () => {
    await makeTargetNamespaces(prod);
    stack = new PulumiStack({ stackName: "prod", config: stackConfig(prod), kubeconfig });
    const offline = await renderOffline("prod", stackConfig(prod));
    const up = await stack.expect("up");
    expect(kubernetesSteps(up, ["create"]).length).toBe(offline.objects.length);
    expect(await missingObjects(offline.objects)).toEqual([]);
    await stack.expect("destroy");
    const left: string[] = [];
    for (const object of offline.objects)
      if (object.kind !== "Namespace" && (await exists(object as KubernetesObject))) left.push(objectKey(object));
    expect(left).toEqual([]);
  });
});
