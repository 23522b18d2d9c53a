/**
 * `entryway-secret-readers-alone`: its good fixtures (it passes them) and bad ones (it fires on
 * each, with its message), run through the policy's own CrossGuard callback as the engine would
 * (test/policies/run-policies.ts).
 */
import { describe, expect, it } from "vitest";
import * as k8s from "@pulumi/kubernetes";
import { ConnectGateway } from "../../components/ssh/connect-gateway";
import type { Obj } from "../../test/policies/fixtures";
import { asResource, runStackPolicy } from "../../test/policies/run-policies";
import { render } from "../../testkit/harness/pulumi";
import { secretReadersAlone } from "./secret-readers-alone";

describe("a Secret-reading role sits where no other Secret lives", () => {
  const secret = (name: string, namespace: string, type = "Opaque") => ({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace },
    type,
  });
  const reader = (namespace: string, rule: Obj = {}) => ({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: { name: "gw-sds", namespace },
    rules: [{ apiGroups: [""], resources: ["secrets"], verbs: ["get", "watch", "list"], ...rule }],
  });
  const gateway = (namespace: string, credentialName: string) => ({
    apiVersion: "networking.istio.io/v1",
    kind: "Gateway",
    metadata: { name: "gw", namespace },
    spec: {
      selector: { app: "gw" },
      servers: [
        {
          port: { number: 2222, name: "connect", protocol: "HTTPS" },
          hosts: ["*"],
          tls: { mode: "SIMPLE", credentialName },
        },
      ],
    },
  });
  it("passes the gateway's Role beside only the certificate its Gateway serves, and other Secrets elsewhere", async () => {
    const objects = [
      reader("edge"),
      gateway("edge", "cert"),
      secret("cert", "edge", "kubernetes.io/tls"),
      secret("app-keys", "apps"),
    ];
    expect(await runStackPolicy(secretReadersAlone, objects.map(asResource))).toEqual([]);
  });
  it("fires on the old layout: a TLS CONNECT gateway in the namespace of other Secrets (the app's keys)", async () => {
    const { resources } = await render(() => {
      const gw = new ConnectGateway("entryway", { namespace: "apps", tls: { credentialName: "cert" } });
      new k8s.core.v1.Secret(
        "keys",
        { metadata: { name: "entryway-ansibleforms-keys", namespace: "apps" }, stringData: { k: "v" } },
        { parent: gw },
      );
    });
    const violations = await runStackPolicy(
      secretReadersAlone,
      resources.filter((r) => r.custom).map((r) => ({ type: r.type, props: r.inputs })),
    );
    expect(violations).toEqual([
      expect.stringMatching(
        /^Role apps\/entryway-connect-gateway-sds: may read Secrets where Secret apps\/entryway-ansibleforms-keys lives/,
      ),
    ]);
  });
  it("fires on a named Secret, a ClusterRole bound in the namespace, and a ClusterRoleBinding (every namespace)", async () => {
    const named = await runStackPolicy(
      secretReadersAlone,
      [reader("edge", { resourceNames: ["other"] }), secret("other", "edge"), secret("unnamed", "edge")].map(
        asResource,
      ),
    );
    expect(named).toEqual([expect.stringMatching(/Secret edge\/other lives/)]);
    const clusterRole = {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "read-secrets" },
      rules: [{ apiGroups: [""], resources: ["*"], verbs: ["list"] }],
    };
    const binding = (kind: string, namespace?: string) => ({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind,
      metadata: { name: "b", ...(namespace ? { namespace } : {}) },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "read-secrets" },
      subjects: [],
    });
    expect(
      (
        await runStackPolicy(
          secretReadersAlone,
          [clusterRole, binding("RoleBinding", "edge"), secret("x", "edge"), secret("y", "apps")].map(asResource),
        )
      ).join("\n"),
    ).toMatch(/^RoleBinding edge\/b \(ClusterRole read-secrets\): may read Secrets where Secret edge\/x lives[^\n]*$/);
    expect(
      await runStackPolicy(
        secretReadersAlone,
        [clusterRole, binding("ClusterRoleBinding"), secret("y", "apps")].map(asResource),
      ),
    ).toHaveLength(1);
    // Writing Secrets is not reading them.
    expect(
      await runStackPolicy(
        secretReadersAlone,
        [reader("edge", { verbs: ["create"] }), secret("x", "edge")].map(asResource),
      ),
    ).toEqual([]);
  });
});
