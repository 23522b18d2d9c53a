/**
 * The exec gateway's CA bundle (execGateway.caBundle or execGateway.existingCaConfigMap), in both
 * front ends: the certificates it trusts besides the public roots for what it dials over https that
 * a platform signs itself (an in-cluster S3 server, the OIDC issuer, the webhook). The bundle is
 * mounted read-only and named by NODE_EXTRA_CA_CERTS, which Node reads once, at start, so a caBundle
 * change rolls the pods (checksum/ca-bundle); one of the two only, PEM certificates only. That Node
 * then trusts the server is gateway/test/private-ca.test.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { ExecGateway, type ExecGatewayArgs } from "../../components/exec-gateway";
import { parseStackConfig } from "../../components/stack";
import { helmBinaries, helmLint, helmTemplate, repoRoot } from "../../testkit/harness/helm";
import { render } from "../../testkit/harness/pulumi";
import { assertValidObjects, type ObjectLike } from "../../testkit/harness/validate";

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A throwaway CA's certificate (EC P-256, openssl req -x509), and a second one: a bundle of two. */
const CA = `-----BEGIN CERTIFICATE-----
MIIBjzCCATWgAwIBAgIUUVkYQX0Ap1Prb7uxupd5QAkmb7UwCgYIKoZIzj0EAwIw
HTEbMBkGA1UEAwwSZXhhbXBsZS1zdG9yYWdlLWNhMB4XDTI2MTIwNzE2MzIzNVoX
DTM2MTIwNDE2MzIzNVowHTEbMBkGA1UEAwwSZXhhbXBsZS1zdG9yYWdlLWNhMFkw
EwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAER5gOSV8gx0Ovl5MRxUN1nsiSTx3IcmV7
vIDkd88AyciWQ//LdKDCaMj7fFYylA61bWiu759FTUFbMduzuS+eFqNTMFEwHQYD
VR0OBBYEFAarOqaSB9f9SIiBTxlZ50kZcGJSMB8GA1UdIwQYMBaAFAarOqaSB9f9
SIiBTxlZ50kZcGJSMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSAAwRQIh
ALuRqMC9Gp8YtHUfJzzN4Ac+nNeTGhJ3cUyw4xh0BTNwAiBfwNmG9BOiogBl4zoY
3LXT/SCg0ofM1tNPm1Xz4GsWaQ==
-----END CERTIFICATE-----
`;
const TWO_CAS = `${CA}\n${CA.replace("3LXT", "3LXU")}`;
const PRIVATE_KEY =
  "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n-----END PRIVATE KEY-----\n";
/** Where the bundle is, in the pod. */
const BUNDLE_FILE = "/etc/entryway-ca/ca.crt";

const chart = path.join(repoRoot, "charts/entryway");
const scratch = mkdtempSync(path.join(os.tmpdir(), "entryway-exec-ca-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let counter = 0;
function valuesFile(execGateway: Record<string, unknown>): string {
  const file = path.join(scratch, `values-${counter++}.yaml`);
  writeFileSync(file, stringify({ execGateway: { enabled: true, targetNamespaces: ["apps"], ...execGateway } }));
  return file;
}

/** What the CA bundle changes in the gateway's objects: the ConfigMaps, and its pod's env, mounts, volumes and annotations. */
function caView(objects: ObjectLike[]) {
  const pod = (objects.find((o) => o.kind === "Deployment") as Obj).spec.template;
  const container = pod.spec.containers[0];
  return {
    configMaps: objects
      .filter((o) => o.kind === "ConfigMap")
      .map((o) => (o as Obj).metadata.name as string)
      .sort(),
    caData: (objects.find((o) => o.kind === "ConfigMap" && o.metadata?.name === "entryway-exec-gateway-ca") as Obj)
      ?.data,
    env: (container.env as Obj[]).find((e) => e.name === "NODE_EXTRA_CA_CERTS"),
    mount: (container.volumeMounts as Obj[]).find((m) => m.name === "ca"),
    volume: (pod.spec.volumes as Obj[]).find((v) => v.name === "ca"),
    checksum: pod.metadata.annotations?.["checksum/ca-bundle"] as string | undefined,
  };
}

const fromComponent = async (args: Partial<ExecGatewayArgs>) => {
  const { manifests } = await render(
    () => new ExecGateway("entryway", { namespace: "entryway", targetNamespaces: ["apps"], ...args }),
  );
  await assertValidObjects(manifests);
  return manifests as ObjectLike[];
};

describe("the exec gateway's CA bundle, from the component", () => {
  it("caBundle: a ConfigMap of it, mounted read-only, NODE_EXTRA_CA_CERTS at its file, and a checksum that rolls the pods when it changes", async () => {
    const view = caView(await fromComponent({ caBundle: CA }));
    expect(view).toEqual({
      configMaps: ["entryway-exec-gateway", "entryway-exec-gateway-ca"],
      caData: { "ca.crt": CA },
      env: { name: "NODE_EXTRA_CA_CERTS", value: BUNDLE_FILE },
      mount: { name: "ca", mountPath: "/etc/entryway-ca", readOnly: true },
      volume: {
        name: "ca",
        configMap: { name: "entryway-exec-gateway-ca", items: [{ key: "ca.crt", path: "ca.crt" }] },
      },
      checksum: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    const other = caView(await fromComponent({ caBundle: TWO_CAS }));
    expect(other.checksum).toMatch(/^[0-9a-f]{64}$/);
    expect(other.checksum).not.toBe(view.checksum);
  });

  it("existingCaConfigMap: no ConfigMap made, its key mounted as the bundle's file, no checksum (not ours to read)", async () => {
    const view = caView(await fromComponent({ existingCaConfigMap: { name: "platform-ca", key: "bundle.pem" } }));
    expect(view).toEqual({
      configMaps: ["entryway-exec-gateway"],
      caData: undefined,
      env: { name: "NODE_EXTRA_CA_CERTS", value: BUNDLE_FILE },
      mount: { name: "ca", mountPath: "/etc/entryway-ca", readOnly: true },
      volume: { name: "ca", configMap: { name: "platform-ca", items: [{ key: "bundle.pem", path: "ca.crt" }] } },
      checksum: undefined,
    });
  });

  it("without either: no CA ConfigMap, variable, mount or volume", async () => {
    expect(caView(await fromComponent({}))).toEqual({
      configMaps: ["entryway-exec-gateway"],
      caData: undefined,
      env: undefined,
      mount: undefined,
      volume: undefined,
      checksum: undefined,
    });
  });

  it.each([
    [
      { caBundle: CA, existingCaConfigMap: { name: "platform-ca", key: "ca.crt" } },
      /give caBundle or existingCaConfigMap, not both/,
    ],
    [{ caBundle: PRIVATE_KEY }, /caBundle is not PEM certificates/],
    [{ caBundle: `${CA}${PRIVATE_KEY}` }, /caBundle is not PEM certificates/],
    [{ caBundle: "MIIBjzCCATWgAwIBAgIU" }, /caBundle is not PEM certificates/],
    [{ caBundle: "" }, /caBundle is not PEM certificates/],
    [
      { existingCaConfigMap: { name: "Platform_CA", key: "ca.crt" } },
      /existingCaConfigMap.name "Platform_CA" is not a ConfigMap name/,
    ],
    [
      { existingCaConfigMap: { name: "platform-ca", key: "a/b" } },
      /existingCaConfigMap.key "a\/b" is not a ConfigMap key/,
    ],
  ])("refuses %j clearly", async (args, message) => {
    await expect(fromComponent(args as Partial<ExecGatewayArgs>)).rejects.toThrow(message);
  });

  it("the stack config refuses a bundle that is not PEM certificates, or holds a private key", () => {
    const stack = (execGateway: Record<string, unknown>) => () =>
      parseStackConfig({ namespace: "entryway", execGateway: { targetNamespaces: ["apps"], ...execGateway } });
    expect(stack({ caBundle: TWO_CAS })).not.toThrow();
    expect(stack({ caBundle: `${CA}${PRIVATE_KEY}` })).toThrow(/caBundle.*must match pattern/);
    expect(stack({ existingCaConfigMap: { name: "platform-ca" } })).toThrow(/existingCaConfigMap.*key/);
  });
});

describe.each(helmBinaries().map((h) => [`helm ${h.major}`, h] as const))(
  "the exec gateway's CA bundle, from the chart, %s",
  (_label, helm) => {
    it("makes the component's objects for caBundle and for existingCaConfigMap, the checksum included", async () => {
      for (const args of [{ caBundle: CA }, { existingCaConfigMap: { name: "platform-ca", key: "bundle.pem" } }]) {
        const objects = helmTemplate(helm, chart, { valuesFiles: [valuesFile(args)] });
        await assertValidObjects(objects);
        expect(caView(objects)).toEqual(caView(await fromComponent(args)));
      }
      expect(caView(helmTemplate(helm, chart, { valuesFiles: [valuesFile({})] })).env).toBeUndefined();
    });

    it.each([
      [
        { caBundle: CA, existingCaConfigMap: { name: "platform-ca", key: "ca.crt" } },
        /give caBundle or existingCaConfigMap, not both/,
        false,
      ],
      [{ caBundle: PRIVATE_KEY }, /caBundle/, true],
      [{ caBundle: `${CA}${PRIVATE_KEY}` }, /caBundle/, true],
      [{ existingCaConfigMap: { name: "Platform_CA", key: "ca.crt" } }, /existingCaConfigMap/, true],
      [{ existingCaConfigMap: { name: "platform-ca", key: "" } }, /existingCaConfigMap.key is required/, false],
    ])("refuses %j clearly", (values, message, lintFails) => {
      const file = valuesFile(values);
      expect(() => helmTemplate(helm, chart, { valuesFiles: [file] })).toThrow(message);
      if (lintFails) expect(helmLint(helm, chart, [file]).output).toMatch(message);
    });
  },
);
