/**
 * `entryway-workspace-pdb-no-loadbalancer`: its good fixtures (it passes them) and bad ones (it
 * fires on each, with its message), run through the policy's own CrossGuard callback as the engine
 * would (test/policies/run-policies.ts).
 */
import { describe, expect, it } from "vitest";
import { deployment, restrictedContainer, wsLabels, type Obj } from "../../test/policies/fixtures";
import { asResource, runStackPolicy } from "../../test/policies/run-policies";
import { workspacePdbNoLoadBalancer } from "./workspace-pdb-no-loadbalancer";

const workspace = (): Obj => ({
  ...deployment([{ name: "sshd", image: "sshd:1", securityContext: restrictedContainer() }], wsLabels),
  kind: "StatefulSet",
  metadata: { name: "ws-alice", namespace: "ns", labels: wsLabels },
});
const pdb = (selector: Record<string, string>) => ({
  apiVersion: "policy/v1",
  kind: "PodDisruptionBudget",
  metadata: { name: "ws-alice", namespace: "ns" },
  spec: { maxUnavailable: 1, selector: { matchLabels: selector } },
});

describe("workspaces: a PDB each, no per-workspace LoadBalancer", () => {
  it("passes a workspace with its PDB and a ClusterIP Service", async () => {
    const service = {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "ws-alice", namespace: "ns" },
      spec: { type: "ClusterIP", selector: wsLabels },
    };
    expect(
      await runStackPolicy(workspacePdbNoLoadBalancer, [workspace(), pdb(wsLabels), service].map(asResource)),
    ).toEqual([]);
  });
  it("fires on a workspace without a PDB (or one selecting other pods)", async () => {
    expect((await runStackPolicy(workspacePdbNoLoadBalancer, [asResource(workspace())])).join()).toMatch(
      /needs a PodDisruptionBudget/,
    );
    const other = pdb({ ...wsLabels, "app.kubernetes.io/component": "ws-bob" });
    expect((await runStackPolicy(workspacePdbNoLoadBalancer, [workspace(), other].map(asResource))).join()).toMatch(
      /needs a PodDisruptionBudget/,
    );
  });
  it.each(["LoadBalancer", "NodePort"])("fires on a per-workspace %s Service", async (type) => {
    const service = {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "ws-alice-lb", namespace: "ns" },
      spec: { type, selector: wsLabels },
    };
    const violations = await runStackPolicy(
      workspacePdbNoLoadBalancer,
      [workspace(), pdb(wsLabels), service].map(asResource),
    );
    expect(violations.join()).toMatch(new RegExp(`per-workspace ${type} Service`));
  });
});
