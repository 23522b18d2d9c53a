/**
 * The policy pack as the Pulumi CLI runs it: `policies/` is started the way the engine starts a
 * pack (@pulumi/pulumi's run-policy-pack launcher in the pack's folder, which compiles index.ts
 * with ts-node, serves Pulumi's Analyzer gRPC service on a loopback port and prints the port),
 * then driven through that service as the engine does during `pulumi preview --policy-pack
 * policies`: GetAnalyzerInfo, Configure, Analyze.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../harness/helm";

// The gRPC and protobuf modules exactly as @pulumi/pulumi (and so the pack) resolves them.
const require = createRequire(createRequire(import.meta.url).resolve("@pulumi/pulumi/package.json"));
/* eslint-disable @typescript-eslint/no-explicit-any */
const grpc = require("@grpc/grpc-js");
const analyzerPb = require("@pulumi/pulumi/proto/analyzer_pb");
const { AnalyzerClient } = require("@pulumi/pulumi/proto/analyzer_grpc_pb");
const { Struct } = require("google-protobuf/google/protobuf/struct_pb");
const { Empty } = require("google-protobuf/google/protobuf/empty_pb");
 

let pack: ChildProcessWithoutNullStreams;
let client: any;  

function call<T>(method: string, request: unknown): Promise<T> {
  return new Promise((resolve, reject) => client[method](request, (error: Error | null, response: T) => (error ? reject(error) : resolve(response))));
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
  const launcher = path.join(path.dirname(require.resolve("@pulumi/pulumi/package.json")), "cmd", "run-policy-pack");
  pack = spawn(process.execPath, [launcher, "127.0.0.1:1", "."], { cwd: path.join(repoRoot, "policies") });
  const port = await new Promise<number>((resolve, reject) => {
    let out = "";
    let err = "";
    pack.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = /^(\d+)\s*$/m.exec(out);
      if (match) resolve(Number(match[1]));
    });
    pack.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    pack.on("exit", (code) => reject(new Error(`the policy pack exited (${code}) before serving: ${out}${err}`)));
    setTimeout(() => reject(new Error(`the policy pack printed no port within 150 s: ${out}${err}`)), 150_000);
  });
  client = new AnalyzerClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
}, 200_000);

afterAll(() => {
  client?.close();
  if (pack?.pid && pack.exitCode === null) pack.kill("SIGTERM");
});

describe("the policy pack served as the Pulumi CLI runs it", () => {
  it("announces the pack and its thirteen policies", async () => {
    const info = await call<any>("getAnalyzerInfo", new Empty());  
    expect(info.getName()).toBe("entryway");
    expect(info.getPoliciesList().map((p: any) => p.getName()).sort()).toEqual([  
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
    expect(bad).toEqual([{ policy: "entryway-exec-rbac", message: expect.stringMatching(/grants pods\/exec in every namespace/) }]);
    const good = await analyze("kubernetes:rbac.authorization.k8s.io/v1:Role", { ...clusterExecRole, kind: "Role", metadata: { ...clusterExecRole.metadata, namespace: "team-a" } });
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
