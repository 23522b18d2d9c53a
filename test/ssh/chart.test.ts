/**
 * The chart's SSH section under Helm 4 and Helm 3: what the templates make, that adding a
 * workspace never touches the gateway's listener-level EnvoyFilter, and that bad values fail at
 * template time with a clear message (the strict schema or a `fail` in the templates).
 */
import { describe, expect, it } from "vitest";
import { chart, chartValues } from "../foundation/chart-values";
import { helmBinaries, helmTemplate } from "../../testkit/harness/helm";
import { assertValidObjects, type ObjectLike } from "../../testkit/harness/validate";
import { checkEnvoyFilter } from "../../testkit/harness/envoy";
import { parseStackConfig, Stack } from "../../components/stack";
import { render } from "../../testkit/harness/pulumi";

const { valuesFile } = chartValues("ssh-chart");

const KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIIqHgiy0GmQ2fM0zVj8Ff7R2xjH5l6mQfC1tq7g0nW9e alice@laptop";
const ws = (name: string, extra: Record<string, unknown> = {}) => ({ name, authorizedKeys: [KEY], ...extra });
const gateway = (extra: Record<string, unknown> = {}) => ({ enabled: true, hostname: "ssh.example.com", ...extra });

const find = (objects: ObjectLike[], kind: string, name: string) => {
  const found = objects.find((o) => o.kind === kind && o.metadata?.name === name);
  if (!found) throw new Error(`no ${kind}/${name}`);
  return found;
};

describe.each(helmBinaries().map((h) => [`helm ${h.major}`, h] as const))("%s", (_label, helm) => {
  const template = (values: unknown) => helmTemplate(helm, chart, { valuesFiles: [valuesFile(values)] });

  it("adding or removing a workspace never changes the listener-level EnvoyFilter", async () => {
    const none = template({ connectGateway: gateway() });
    const one = template({ connectGateway: gateway(), workspaces: [ws("alice")] });
    const two = template({ connectGateway: gateway(), workspaces: [ws("alice"), ws("bob")] });
    const listener = (objects: ObjectLike[]) => find(objects, "EnvoyFilter", "entryway-connect-gateway-connect");
    expect(listener(one)).toEqual(listener(none));
    expect(listener(two)).toEqual(listener(one));
    // Nothing that existed changes (the gateway's egress selects this release's workspaces by
    // namespace, and bob's is one already listed); bob brings only his own objects.
    const key = (o: ObjectLike) => `${o.kind}/${o.metadata?.namespace}/${o.metadata?.name}`;
    const before = new Map(one.map((o) => [key(o), o]));
    for (const object of two) {
      if (before.has(key(object))) expect(object).toEqual(before.get(key(object)));
      else expect(object.metadata?.name).toMatch(/^entryway-ws-bob/);
    }
    // A workspace in a namespace not yet listed does widen the gateway's egress, to that namespace.
    const elsewhere = template({
      connectGateway: gateway(),
      workspaces: [ws("alice"), { ...ws("carol"), namespace: "team-c" }],
    });
    const sshdPeers = (objects: ObjectLike[]) =>
      (
        find(objects, "NetworkPolicy", "entryway-connect-gateway") as unknown as {
          spec: {
            egress: {
              to?: { namespaceSelector?: { matchLabels?: Record<string, string> } }[];
              ports: { port: number }[];
            }[];
          };
        }
      ).spec.egress
        .find((rule) => rule.ports.some((p) => p.port === 2222))
        ?.to?.map((peer) => peer.namespaceSelector?.matchLabels?.["kubernetes.io/metadata.name"]);
    expect(sshdPeers(two)).toEqual(sshdPeers(one));
    expect(sshdPeers(elsewhere)).toEqual([...sshdPeers(one)!, "team-c"].sort());
    await assertValidObjects(two);
    expect((await Promise.all(two.filter((o) => o.kind === "EnvoyFilter").map(checkEnvoyFilter))).flat()).toEqual([]);
  });

  it("with TLS, workspaces patch Istio's https.<port>.<portName>.<gateway>.<namespace> route configuration", () => {
    const objects = template({
      connectGateway: gateway({ tls: { enabled: true, credentialName: "cert" } }),
      workspaces: [ws("alice")],
    });
    const route = find(objects, "EnvoyFilter", "entryway-ws-alice-route") as unknown as {
      spec: { configPatches: { match: unknown }[] };
    };
    expect(route.spec.configPatches[0].match).toEqual({
      context: "GATEWAY",
      routeConfiguration: { portNumber: 2222, name: "https.2222.connect.entryway-connect-gateway.entryway-connect" },
    });
    expect(objects.filter((o) => o.kind === "Role").map((o) => `${o.metadata?.namespace}/${o.metadata?.name}`)).toEqual(
      ["entryway-connect/entryway-connect-gateway-sds"],
    );
  });

  it("runs the gateway in a namespace of its own (made unless createNamespace: false) that holds no Secret, each owned namespace with one default deny", () => {
    const objects = template({
      connectGateway: gateway({ tls: { enabled: true, credentialName: "cert" } }),
      workspaces: [ws("alice")],
    });
    const inConnect = objects
      .filter((o) => o.metadata?.namespace === "entryway-connect")
      .map((o) => `${o.kind}/${o.metadata?.name}`)
      .sort();
    expect(inConnect).toEqual([
      "AuthorizationPolicy/entryway-connect-gateway",
      "Deployment/entryway-connect-gateway",
      "EnvoyFilter/entryway-connect-gateway-connect",
      "EnvoyFilter/entryway-ws-alice-route",
      "Gateway/entryway-connect-gateway",
      "NetworkPolicy/entryway-allow-dns",
      "NetworkPolicy/entryway-connect-gateway",
      "NetworkPolicy/entryway-default-deny",
      "PodDisruptionBudget/entryway-connect-gateway",
      "Role/entryway-connect-gateway-sds",
      "RoleBinding/entryway-connect-gateway-sds",
      "Service/entryway-connect-gateway",
      "ServiceAccount/entryway-connect-gateway",
    ]);
    expect(find(objects, "Namespace", "entryway-connect").metadata?.labels?.["app.kubernetes.io/part-of"]).toBe(
      "entryway",
    );
    const denies = objects.filter((o) => o.kind === "NetworkPolicy" && o.metadata?.name === "entryway-default-deny");
    expect(denies.map((o) => o.metadata?.namespace).sort()).toEqual(["entryway", "entryway-connect"]);
    const made = template({ connectGateway: gateway({ namespace: "edge-ssh", createNamespace: false }) });
    expect(made.some((o) => o.kind === "Namespace")).toBe(false);
    expect(find(made, "Deployment", "entryway-connect-gateway").metadata?.namespace).toBe("edge-ssh");
  });

  it("writes the authorized keys file as the component does (one key a line), and mounts it read-only", () => {
    const second = "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBHGq alice@desktop";
    const objects = template({
      connectGateway: gateway(),
      workspaces: [ws("alice", { authorizedKeys: [KEY, `  ${second}  `] })],
    });
    expect(
      (find(objects, "Secret", "entryway-ws-alice-authorized-keys") as { stringData?: unknown }).stringData,
    ).toEqual({ authorized_keys: `${KEY}\n${second}\n` });
    const pod = (
      find(objects, "StatefulSet", "entryway-ws-alice") as unknown as {
        spec: { template: { spec: { containers: { volumeMounts: unknown[] }[] } } };
      }
    ).spec.template.spec;
    expect(pod.containers[0].volumeMounts).toContainEqual({
      name: "authorized-keys",
      mountPath: "/etc/entryway/keys",
      readOnly: true,
    });
  });

  it("sets the workspace PDB from disruption: never (default, maxUnavailable 0) or allowed (1)", () => {
    const objects = template({
      connectGateway: gateway(),
      workspaces: [ws("alice"), ws("bob", { disruption: "allowed" })],
    });
    const maxUnavailable = (name: string) =>
      (find(objects, "PodDisruptionBudget", name) as unknown as { spec: { maxUnavailable: number } }).spec
        .maxUnavailable;
    expect(maxUnavailable("entryway-ws-alice")).toBe(0);
    expect(maxUnavailable("entryway-ws-bob")).toBe(1);
    expect(() =>
      template({ connectGateway: gateway(), workspaces: [ws("alice", { disruption: "sometimes" })] }),
    ).toThrow(/disruption/);
  });

  it("makes nothing for SSH when the section is off", () => {
    const objects = template({});
    expect(objects.filter((o) => /connect-gateway|-ws-/.test(o.metadata?.name ?? ""))).toEqual([]);
  });

  it.each([
    [
      "two workspaces with the same domain",
      { connectGateway: gateway(), workspaces: [ws("alice"), ws("alice")] },
      /domain entryway-ws-alice\.entryway\.svc\.cluster\.local is already routed by workspace entryway-ws-alice .*Envoy would reject every route on port 2222/,
    ],
    ["port 80", { connectGateway: gateway({ port: 80 }) }, /connectGateway\.port 80 is reserved/],
    ["port 443", { connectGateway: gateway({ port: 443 }) }, /connectGateway\.port 443 is reserved/],
    ["workspaces without the gateway", { workspaces: [ws("alice")] }, /workspaces need connectGateway\.enabled: true/],
    [
      "both key sources",
      { connectGateway: gateway(), workspaces: [ws("alice", { authorizedKeysSecret: { name: "k" } })] },
      /give exactly one of authorizedKeys .* and authorizedKeysSecret/,
    ],
    [
      "no key source",
      { connectGateway: gateway(), workspaces: [{ name: "alice" }] },
      /give exactly one of authorizedKeys .* and authorizedKeysSecret/,
    ],
    [
      "TLS without a certificate",
      { connectGateway: gateway({ tls: { enabled: true } }) },
      /connectGateway\.tls\.credentialName must name a Secret/,
    ],
    [
      "TLS with a short hostname",
      { connectGateway: gateway({ hostname: "localhost", tls: { enabled: true, credentialName: "cert" } }) },
      /connectGateway\.hostname "localhost" must be a fully qualified name with tls/,
    ],
    [
      "a nodePort on ClusterIP",
      { connectGateway: gateway({ serviceType: "ClusterIP", nodePort: 30001 }) },
      /nodePort needs serviceType NodePort or LoadBalancer/,
    ],
    [
      "a private key as an authorized key",
      {
        connectGateway: gateway(),
        workspaces: [ws("alice", { authorizedKeys: ["-----BEGIN OPENSSH PRIVATE KEY-----"] })],
      },
      /authorizedKeys/,
    ],
    ["a misspelt key", { connectGateway: gateway({ hostnme: "x" }) }, /hostnme/],
    ["a bad CIDR", { connectGateway: gateway({ allowedSourceRanges: ["10.0.0.0"] }) }, /allowedSourceRanges/],
    [
      "an idle timeout without unit",
      { connectGateway: gateway(), workspaces: [ws("alice", { idleTimeout: "1h" })] },
      /idleTimeout/,
    ],
    [
      "the gateway in the release namespace",
      { connectGateway: gateway({ namespace: "entryway" }) },
      /connectGateway\.namespace must differ from the release namespace entryway/,
    ],
    [
      "a workspace in the gateway's namespace",
      { connectGateway: gateway(), workspaces: [ws("alice", { namespace: "entryway-connect" })] },
      /workspaces\[alice\]: namespace entryway-connect is the connect gateway's/,
    ],
    [
      "remote forwarding",
      { connectGateway: gateway(), workspaces: [ws("alice", { tcpForwarding: "remote" })] },
      /tcpForwarding/,
    ],
  ])("fails at template time on %s", (_what, values, message) => {
    expect(() => template(values)).toThrow(message);
  });
});

describe("the same bad input at preview (Pulumi Stack)", () => {
  const stack = (config: Record<string, unknown>) =>
    render(() => new Stack("bad", parseStackConfig({ namespace: "entryway", createNamespace: false, ...config })));
  it.each([
    [
      "two workspaces with the same domain",
      { connectGateway: {}, workspaces: [ws("alice"), ws("alice")] },
      /domain entryway-ws-alice\.entryway\.svc\.cluster\.local is already routed by workspace entryway-ws-alice .*Envoy would reject every route on port 2222/,
    ],
    ["port 80", { connectGateway: { port: 80 } }, /port 80 is reserved/],
    [
      "TLS with a short hostname",
      { connectGateway: { hostname: "localhost", tls: { credentialName: "cert" } } },
      /with tls, hostname "localhost" must be a fully qualified name/,
    ],
    ["workspaces without the gateway", { workspaces: [ws("alice")] }, /workspaces need a connectGateway section/],
    [
      "both key sources",
      { connectGateway: {}, workspaces: [ws("alice", { authorizedKeysSecret: { name: "k" } })] },
      /exactly one of authorizedKeys and authorizedKeysSecret/,
    ],
    [
      "the gateway in the stack's namespace",
      { connectGateway: { namespace: "entryway" } },
      /connectGateway\.namespace must differ from the stack's namespace entryway/,
    ],
    [
      "a workspace in the gateway's namespace",
      { connectGateway: {}, workspaces: [ws("alice", { namespace: "entryway-connect" })] },
      /namespace entryway-connect is the connect gateway's/,
    ],
  ])("fails on %s", async (_what, config, message) => {
    await expect(stack(config)).rejects.toThrow(message);
  });

  it("rejects a misspelt key by the stack config schema", () => {
    expect(() => parseStackConfig({ namespace: "entryway", connectGateway: { hostnme: "x" } })).toThrow(
      /\/connectGateway must NOT have additional properties "hostnme"/,
    );
  });
});
