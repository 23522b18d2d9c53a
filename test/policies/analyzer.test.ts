/**
 * The policy pack as the Pulumi CLI runs it: `policies/` is started the way the engine starts a
 * pack (@pulumi/pulumi's run-policy-pack launcher in the pack's folder, which compiles index.ts
 * with ts-node, serves Pulumi's Analyzer gRPC service on a loopback port and prints the port),
 * then driven through that service as the engine does during `pulumi preview --policy-pack
 * policies`: GetAnalyzerInfo, Configure, Analyze.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../../testkit/harness/helm";
import {
  Empty,
  grpc,
  pulumiRequire,
  startPulumiPlugin,
  Struct,
  unary,
  type RunningPlugin,
} from "../../testkit/harness/pulumi-plugin";

/* eslint-disable @typescript-eslint/no-explicit-any */
const analyzerPb = pulumiRequire("@pulumi/pulumi/proto/analyzer_pb");
const { AnalyzerClient } = pulumiRequire("@pulumi/pulumi/proto/analyzer_grpc_pb");

let pack: RunningPlugin;
let client: any;

function call<T>(method: string, request: unknown): Promise<T> {
  return unary<T>(client, method, request);
}

async function analyze(type: string, props: Record<string, unknown>): Promise<{ policy: string; message: string }[]> {
  const request = new analyzerPb.AnalyzeRequest();
  request.setType(type);
  request.setProperties(Struct.fromJavaScript(props));
  request.setUrn(`urn:pulumi:dev::entryway::${type}::x`);
  request.setName("x");
  request.setOptions(new analyzerPb.AnalyzerResourceOptions()); // the engine always sends options
  const response = await call<any>("analyze", request);
  return response.getDiagnosticsList().map((d: any) => ({ policy: d.getPolicyname(), message: d.getMessage() }));
}

const clusterExecRole = {
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "ClusterRole",
  metadata: { name: "entryway-entryway-exec-gateway-exec", labels: { "app.kubernetes.io/name": "exec-gateway" } },
  rules: [{ apiGroups: [""], resources: ["pods/exec"], verbs: ["create"] }],
};

beforeAll(async () => {
  // Exactly what the CLI's analyzer plugin runs: @pulumi/pulumi's run-policy-pack launcher (ts-node
  // with type checking, the pack's tsconfig.json) on the pack folder, given an engine address.
  pack = await startPulumiPlugin("run-policy-pack", ["127.0.0.1:1", "."], path.join(repoRoot, "policies"));
  client = new AnalyzerClient(pack.address, grpc.credentials.createInsecure());
}, 200_000);

afterAll(() => {
  client?.close();
  pack?.stop();
});

describe("the policy pack served as the Pulumi CLI runs it", () => {
  it("announces the pack and its thirteen policies", async () => {
    const info = await call<any>("getAnalyzerInfo", new Empty());
    expect(info.getName()).toBe("entryway");
    expect(
      info
        .getPoliciesList()
        .map((p: any) => p.getName())
        .sort(),
    ).toEqual([
      "entryway-connect-dedicated-gateway",
      "entryway-connect-static-clusters",
      "entryway-exec-gateway-debug-rbac",
      "entryway-exec-rbac",
      "entryway-no-default-admin-password",
      "entryway-no-exec-into-gateway-namespace",
      "entryway-pod-security-restricted",
      "entryway-rte-boundary",
      "entryway-rte-own-metrics-token",
      "entryway-rte-tag-matches-app",
      "entryway-secret-readers-alone",
      "entryway-seed-token-references",
      "entryway-workspace-pdb-no-loadbalancer",
    ]);
  });

  it("reports a violation for a bad resource and none for a good one", async () => {
    const bad = await analyze("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", clusterExecRole);
    expect(bad).toEqual([
      {
        policy: "entryway-exec-rbac",
        message: expect.stringMatching(/grants create pods\/exec \(exec or its equivalent\) in every namespace/),
      },
    ]);
    const good = await analyze("kubernetes:rbac.authorization.k8s.io/v1:Role", {
      ...clusterExecRole,
      kind: "Role",
      metadata: { ...clusterExecRole.metadata, namespace: "team-a" },
    });
    expect(good).toEqual([]);
  });

  it("takes allowClusterWideExec from the policy pack config (--policy-pack-config)", async () => {
    const request = new analyzerPb.ConfigureAnalyzerRequest();
    const config = new analyzerPb.PolicyConfig();
    config.setEnforcementlevel(analyzerPb.EnforcementLevel.MANDATORY);
    config.setProperties(Struct.fromJavaScript({ allowClusterWideExec: true }));
    request.getPolicyconfigMap().set("entryway-exec-rbac", config);
    await call("configure", request);
    expect(await analyze("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", clusterExecRole)).toEqual([]);
  });
});
