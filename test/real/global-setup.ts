/**
 * The real control plane every suite of test/real shares (started once; each suite works in
 * namespaces of its own): Kubernetes v1.37.2 built from its Go modules, kwok's fake node, the
 * upstream CRDs the stack's objects need (Istio's, prometheus-operator's monitors), and the API
 * server's audit log on. See testkit/harness/control-plane.ts.
 */
import type { TestProject } from "vitest/node";
import { installUpstreamCrds, startControlPlane, type ControlPlane } from "../../testkit/harness/control-plane";

declare module "vitest" {
  export interface ProvidedContext {
    controlPlane: {
      kubeconfig: string;
      server: string;
      caFile: string;
      dir: string;
      auditLog: string;
      nodeName: string;
    };
  }
}

let controlPlane: ControlPlane | undefined;

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  controlPlane = await startControlPlane({ auditLog: true });
  try {
    await installUpstreamCrds(controlPlane);
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
