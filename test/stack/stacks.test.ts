/**
 * Every environment that ships with the package (each Pulumi.<stack>.yaml: the dev default and
 * the production example) renders through the Stack to valid objects (upstream schemas, unknown
 * fields rejected, Envoy protos) and passes every rule of the policy pack. The stack outputs a
 * platform team reads are there.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import * as pulumi from "@pulumi/pulumi";
import { RemoteRte } from "../../components/ansibleforms";
import { parseStackConfig, Stack } from "../../components/stack";
import { checkEnvoyFilter } from "../../testkit/harness/envoy";
import { repoRoot } from "../../testkit/harness/helm";
import { isSecretOutput, outputOf, render } from "../../testkit/harness/pulumi";
import { assertValidObjects, type ObjectLike } from "../../testkit/harness/validate";
import { allViolations } from "../policies/run-policies";
import { gatewaySettings } from "../exec-gateway/settings-document";

const stacks = readdirSync(repoRoot)
  .map((file) => /^Pulumi\.(.+)\.yaml$/.exec(file)?.[1])
  .filter((stack): stack is string => stack !== undefined)
  .sort();

async function renderStack(stack: string) {
  const document = parse(readFileSync(path.join(repoRoot, `Pulumi.${stack}.yaml`), "utf8")) as {
    config: Record<string, unknown>;
  };
  const config = parseStackConfig(document.config["entryway:stack"], `Pulumi.${stack}.yaml`);
  let made: Stack | undefined;
  const rendered = await render(() => {
    made = new Stack(stack, config);
  });
  return { ...rendered, stack: made!, config };
}

describe("the shipped stacks", () => {
  it("include dev and a production example", () => {
    expect(stacks).toEqual(expect.arrayContaining(["dev", "prod.example"]));
  });

  it.each(stacks)("Pulumi.%s.yaml renders to valid objects that pass the policy pack", async (name) => {
    const { resources, manifests } = await renderStack(name);
    expect(manifests.length).toBeGreaterThan(5);
    await assertValidObjects(manifests);
    const envoyErrors = (
      await Promise.all((manifests as ObjectLike[]).filter((o) => o.kind === "EnvoyFilter").map(checkEnvoyFilter))
    ).flat();
    expect(envoyErrors).toEqual([]);
    const violations = await allViolations(
      resources.filter((r) => r.custom).map((r) => ({ type: r.type, props: r.inputs })),
    );
    expect(violations).toEqual([]);
  });

  it("the production example deploys the exec gateway with least privilege, autoscaled, over TLS", async () => {
    const { manifests, stack } = await renderStack("prod.example");
    const roles = manifests
      .filter((m) => m.kind === "Role" && m.metadata.name === "entryway-exec-gateway")
      .map((m) => m.metadata.namespace);
    expect(roles.sort()).toEqual(["checkout", "payments", "search"]);
    expect(manifests.some((m) => m.kind === "ClusterRole" && /exec-gateway/.test(m.metadata.name ?? ""))).toBe(false);
    expect(
      manifests.some((m) => m.kind === "HorizontalPodAutoscaler" && m.metadata.name === "entryway-exec-gateway"),
    ).toBe(true);
    expect(await outputOf(stack.execGatewayUrl!)).toBe("wss://exec.example.com/v1/enter");
    expect(await outputOf(stack.ansibleFormsUrl!)).toBe("https://forms.example.com");
  });

  it("the dev stack has the outputs a platform team reads: gateway URL, ssh config, AnsibleForms URL, admin password as a secret", async () => {
    const { stack } = await renderStack("dev");
    expect(await outputOf(stack.execGatewayUrl!)).toBe("wss://exec.dev.example.com/v1/enter");
    expect(await outputOf(stack.sshConfig!)).toMatch(/^Host entryway-ws-alice$/m);
    expect(await outputOf(stack.ansibleFormsUrl!)).toMatch(/^https?:\/\/\S+$/);
    expect(await isSecretOutput(stack.ansibleFormsAdminPassword!)).toBe(true);
    // The second data centre's StackReference reads the token: it must stay a secret.
    expect(await isSecretOutput(stack.ansibleFormsRteToken!)).toBe(true);
    expect(await outputOf(stack.ansibleFormsRteToken!)).toMatch(/^.{16,}$/);
  });

  it("exports the app's CA bundle for the second data centre when expose gives one; no token output when an existing Secret holds it", async () => {
    const ca = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
    const config = parseStackConfig({
      namespace: "x",
      ansibleForms: {
        existingSecrets: { rteToken: "forms-rte-token" },
        expose: { host: "forms.example.com", tlsSecretName: "forms-tls", caBundle: ca },
      },
    });
    let stack: Stack | undefined;
    await render(() => (stack = new Stack("ca", config)));
    expect(await outputOf(stack!.ansibleFormsCaBundle!)).toBe(ca);
    expect(stack!.ansibleFormsRteToken).toBeUndefined();
  });

  it("a second stack's RemoteRte takes the token and CA as outputs (what a StackReference gives): a Secret, the CA mounted and hashed", async () => {
    const ca = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
    const { manifests } = await render(
      () =>
        new RemoteRte("dc2", {
          namespace: "rte",
          appUrl: "https://forms.example.com",
          token: pulumi.secret("0123456789abcdef0123"),
          caBundle: pulumi.output(ca),
        }),
    );
    const objects = manifests as ObjectLike[];
    const configMap = objects.find(
      (o) => o.kind === "ConfigMap" && o.metadata?.name === "dc2-remote-rte-ca",
    ) as unknown as { data: Record<string, string> };
    expect(configMap.data["ca.crt"]).toBe(ca);
    const statefulSet = objects.find((o) => o.kind === "StatefulSet") as unknown as {
      spec: { template: { metadata: { annotations: Record<string, string> } } };
    };
    expect(statefulSet.spec.template.metadata.annotations["checksum/ca-bundle"]).toBe(
      createHash("sha256").update(ca).digest("hex"),
    );
    expect(objects.some((o) => o.kind === "Secret" && o.metadata?.name === "dc2-remote-rte-token")).toBe(true);
  });

  it.each([
    [{ namespace: "x", execGateway: {} }, /ExecGateway entryway: targetNamespaces is empty/],
    [
      { namespace: "x", execGateway: { targetNamespaces: ["a"], authorizer: "ldap" } },
      /entryway:stack is invalid: \/execGateway\/authorizer must be equal to one of the allowed values/,
    ],
    [
      { namespace: "x", execGateway: { targetNamespaces: ["a"], replicas: 1.5 } },
      /\/execGateway\/replicas must be integer/,
    ],
    [
      { namespace: "x", execGateway: { targetNamespaces: ["a"], settings: { idleTimout: 1, maxSessions: "10" } } },
      /\/execGateway\/settings must NOT have additional properties "idleTimout"; \/execGateway\/settings\/maxSessions must be integer/,
    ],
    [
      { namespace: "x", execGateway: { targetNamespaces: ["a"], settings: { reapGraceSeconds: 20 } } },
      /ExecGateway entryway: settings.reapTimeoutMs \(15000\) must be longer than settings.reapGraceSeconds \(20\) x 1000/,
    ],
    [
      {
        namespace: "x",
        execGateway: { targetNamespaces: ["a"], exposure: { kind: "ingress", host: "exec.example.com" } },
      },
      /\/execGateway\/exposure must have required property 'tlsSecretName'/,
    ],
    [
      {
        namespace: "x",
        connectGateway: { hostname: "ssh.example.com" },
        execGateway: { targetNamespaces: ["a", "x-connect"] },
      },
      /targetNamespaces includes "x-connect", a namespace the stack owns/,
    ],
  ])("refuses a bad execGateway section with a clear error (%j)", async (raw, message) => {
    await expect(render(() => new Stack("bad", parseStackConfig(raw)))).rejects.toThrow(message);
  });

  it("has the exec gateway refuse the CONNECT gateway's namespace at request time too (also with clusterWide), unless allowOwnedNamespaces", async () => {
    const refused = async (execGateway: Record<string, unknown>) => {
      const { manifests } = await render(
        () =>
          new Stack(
            "s",
            parseStackConfig({ namespace: "x", connectGateway: { hostname: "ssh.example.com" }, execGateway }),
          ),
      );
      return gatewaySettings(manifests as ObjectLike[]).refusedNamespaces;
    };
    expect(await refused({ clusterWide: true })).toEqual(["x-connect"]);
    expect(await refused({ targetNamespaces: ["x-connect"], allowOwnedNamespaces: true })).toBeUndefined();
  });
});
