/**
 * A workspace's authorized key is one line of text, in every front end: the chart's values schema,
 * the stack config's schema and the SshWorkspace component refuse a key whose comment holds a line
 * break or another control character, and the chart writes the keys (and the AnsibleForms seed,
 * the other user text it writes as a file) as one quoted scalar, so that even with the schema
 * skipped a key cannot end its line and become keys of the Secret it lands in. The attack (issue
 * 33): YAML 1.1, what Kubernetes decodes manifests with (go-yaml), reads CR, NEL (U+0085), U+2028
 * and U+2029 as line breaks; a key's comment written into a `|` block became top-level keys of a
 * service-account-token Secret named pwned in kube-system.
 */
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { parseStackConfig } from "../../components/stack";
import { chartValues } from "../foundation/chart-values";
import { helmBinaries, type HelmResult } from "../../testkit/harness/helm";
import { render } from "../../testkit/harness/pulumi";
import type { ObjectLike } from "../../testkit/harness/validate";
import { SshWorkspace } from "../../components/ssh/ssh-workspace";
import { ConnectGateway } from "../../components/ssh/connect-gateway";

const { templateResult } = chartValues("keys");

const KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIIqHgiy0GmQ2fM0zVj8Ff7R2xjH5l6mQfC1tq7g0nW9e";
/** What the comment carried: the rest of the Secret, as top-level keys after a line break. */
const PAYLOAD = [
  "x",
  "type: kubernetes.io/service-account-token",
  "metadata:",
  "  name: pwned",
  "  namespace: kube-system",
  "  annotations:",
  "    kubernetes.io/service-account.name: default",
  "stringData:",
  "  authorized_keys: x",
];
/** The characters YAML 1.1 reads as line breaks besides LF, and two other controls. */
const BREAKS: [string, string][] = [
  ["CR", "\r"],
  ["NEL (U+0085)", "\u0085"],
  ["LINE SEPARATOR (U+2028)", "\u2028"],
  ["PARAGRAPH SEPARATOR (U+2029)", "\u2029"],
  ["LF", "\n"],
  ["a vertical tab", "\v"],
  ["CSI (U+009B)", "\u009b"],
];
const hostile = (sep: string) => `${KEY} alice@laptop${sep}${PAYLOAD.join(sep)}`;
/** Line breaks to YAML 1.1 (and so to Kubernetes' decoder) other than LF. */
const RAW_BREAK = /[\r\u0085\u2028\u2029]/;

const workspaceValues = (keys: string[]) => ({
  connectGateway: { enabled: true, hostname: "ssh.example.com" },
  workspaces: [{ name: "alice", authorizedKeys: keys }],
});

describe.each(helmBinaries().map((h) => [`helm ${h.major}`, h] as const))("%s", (_label, helm) => {
  const template = (values: unknown, extra: string[] = []) => templateResult(helm, values, extra);

  it.each(BREAKS)("the values schema refuses a key whose comment holds %s", (_what, sep) => {
    const result = template(workspaceValues([hostile(sep)]));
    expect(result.ok).toBe(false);
    expect(result.output).toMatch(/authorizedKeys/);
  });

  it("passes a key with a comment in any script, and writes it back exactly", () => {
    const key = `${KEY} zoë@Λaptop — 笔记本`;
    const result = template(workspaceValues([key, `  ${KEY} second  `]));
    expect(result.ok, result.output).toBe(true);
    const secret = objectsOf(result.output).find((o) => o.kind === "Secret");
    expect((secret as { stringData?: unknown }).stringData).toEqual({ authorized_keys: `${key}\n${KEY} second\n` });
  });

  it.each(BREAKS)(
    "with the schema skipped, a key whose comment holds %s stays the Secret's data: no other object, no raw line break",
    (_what, sep) => {
      const objects = writtenWhole(template(workspaceValues([hostile(sep)]), ["--skip-schema-validation"]));
      const secrets = objects.filter((o) => o.kind === "Secret");
      expect(secrets).toHaveLength(1);
      expect(secrets[0]).toMatchObject({
        type: "Opaque",
        metadata: { name: "entryway-ws-alice-authorized-keys", namespace: "entryway" },
        stringData: { authorized_keys: `${hostile(sep)}\n` },
      });
    },
  );

  it("with the schema skipped, a runner's text with line breaks stays the seed's data", () => {
    const name = `rte${PAYLOAD.join("\n")}\u2028${PAYLOAD.join("\u2028")}`;
    const result = template(
      {
        ansibleForms: {
          enabled: true,
          existingSecrets: { keys: "forms-keys", database: "forms-db", rteToken: "forms-rte-token" },
          runners: { items: [{ name, type: "awx", uri: "https://awx.example.com" }] },
        },
      },
      ["--skip-schema-validation"],
    );
    const objects = writtenWhole(result);
    const seed = objects.find((o) => o.kind === "ConfigMap" && o.metadata?.name?.endsWith("-seed")) as unknown as {
      data: Record<string, string>;
    };
    // The seed itself is what toYaml wrote (go-yaml keeps U+2028 raw inside its own block scalar,
    // indented as its own lines): still the two runners, the second with all of its text.
    const items = (
      parseAllDocuments(seed.data["seed.yaml"])[0].toJS() as { runners: { items: { name: string; type: string }[] } }
    ).runners.items;
    expect(items.map((r) => r.type)).toEqual(["rte", "awx"]);
    const unindented = (text: string) => text.replace(/\u2028 */g, "\u2028");
    expect(unindented(items[1].name)).toBe(unindented(name));
  });
});

function objectsOf(output: string): ObjectLike[] {
  return parseAllDocuments(output)
    .map((doc) => doc.toJS() as ObjectLike | null)
    .filter((o): o is ObjectLike => o !== null);
}

/**
 * The objects of a rendering that succeeded with the hostile text kept inside its own value: not
 * one character a YAML 1.1 reader takes for a line break (whatever parser reads this output sees
 * the lines this test's parser sees), and no object the payload names.
 */
function writtenWhole(result: HelmResult): ObjectLike[] {
  expect(result.ok, result.output).toBe(true);
  expect(result.output).not.toMatch(RAW_BREAK);
  const objects = objectsOf(result.output);
  expect(objects.some((o) => o.metadata?.name === "pwned" || o.metadata?.namespace === "kube-system")).toBe(false);
  return objects;
}

describe("the stack config and the SshWorkspace component", () => {
  it.each(BREAKS)("the stack config schema refuses a key whose comment holds %s", (_what, sep) => {
    expect(() =>
      parseStackConfig({
        namespace: "entryway",
        connectGateway: {},
        workspaces: [{ name: "alice", authorizedKeys: [hostile(sep)] }],
      }),
    ).toThrow(/authorizedKeys\/0 must match pattern/);
  });

  it.each(BREAKS)("the component refuses a key whose comment holds %s at preview", async (_what, sep) => {
    await expect(
      render(() => {
        const gateway = new ConnectGateway("entryway", { namespace: "dev-connect", hostname: "ssh.example.com" });
        new SshWorkspace("entryway-ws-alice", {
          gateway: gateway.registration,
          namespace: "dev",
          authorizedKeys: [hostile(sep)],
        });
      }),
    ).rejects.toThrow(/is not an OpenSSH public key on one line/);
  });

  it("both take a key with a comment in any script", async () => {
    const keys = [`${KEY} zoë@Λaptop — 笔记本`, `${KEY}\n`];
    await render(() => {
      const gateway = new ConnectGateway("entryway", { namespace: "dev-connect", hostname: "ssh.example.com" });
      new SshWorkspace("entryway-ws-alice", { gateway: gateway.registration, namespace: "dev", authorizedKeys: keys });
    });
    expect(() =>
      parseStackConfig({
        namespace: "entryway",
        connectGateway: {},
        workspaces: [{ name: "alice", authorizedKeys: keys }],
      }),
    ).not.toThrow();
  });
});
