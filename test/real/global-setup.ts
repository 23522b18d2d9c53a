/**
 * The real control plane every suite of test/real shares (started once; each suite works in
 * namespaces of its own): Kubernetes v1.37.2 built from its Go modules, kwok's fake node, the
 * upstream CRDs the stack's objects need (Istio's, prometheus-operator's monitors), and the API
 * server's audit log on. See test/harness/control-plane.ts.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import type { KubernetesObject } from "@kubernetes/client-node";
import type { TestProject } from "vitest/node";
import { parseAllDocuments } from "yaml";
import { startControlPlane, type ControlPlane } from "../harness/control-plane";
import { realTool } from "../harness/realcp";

declare module "vitest" {
  export interface ProvidedContext {
    controlPlane: { kubeconfig: string; server: string; caFile: string; dir: string; auditLog: string; nodeName: string };
  }
}

let controlPlane: ControlPlane | undefined;

/** Creates the CRDs (as JSON, exactly as upstream wrote them) and waits until the API server serves them. */
async function installCrds(controlPlane: ControlPlane): Promise<void> {
  const share = path.join(path.dirname(realTool("crds")), "share");
  const crds = ["istio.yaml", "prometheus-operator.yaml"].flatMap((file) =>
    parseAllDocuments(readFileSync(path.join(share, file), "utf8"))
      .map((doc) => doc.toJS() as KubernetesObject | null)
      .filter((object): object is KubernetesObject => object?.kind === "CustomResourceDefinition"),
  );
  const collection = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
  for (const crd of crds) {
    const created = await controlPlane.request("POST", collection, crd);
    if (created.status !== 201) throw new Error(`the API server refused CRD ${crd.metadata?.name}: ${created.body}`);
  }
  for (const crd of crds) {
    for (let attempt = 0; ; attempt++) {
      const read = JSON.parse((await controlPlane.request("GET", `${collection}/${crd.metadata!.name}`)).body) as { status?: { conditions?: { type: string; status: string }[] } };
      if (read.status?.conditions?.some((c) => c.type === "Established" && c.status === "True")) break;
      if (attempt > 120) throw new Error(`CRD ${crd.metadata?.name} was not established`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  controlPlane = await startControlPlane({ auditLog: true });
  try {
    await installCrds(controlPlane);
  } catch (error) {
    await controlPlane.stop();
    throw error;
  }
  project.provide("controlPlane", {
    kubeconfig: controlPlane.kubeconfig,
    server: controlPlane.server,
    caFile: controlPlane.caFile,
    dir: controlPlane.dir,
    auditLog: controlPlane.auditLog!,
    nodeName: controlPlane.nodeName,
  });
  return async () => {
    await controlPlane?.stop();
  };
}
