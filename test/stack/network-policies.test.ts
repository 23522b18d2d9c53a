/**
 * The NetworkPolicies the stack renders, walked with a model of Kubernetes NetworkPolicy
 * (testkit/harness/network-policy.ts) over the shipped stacks (Pulumi.<env>.yaml through the Stack)
 * and every chart scenario (Helm 4):
 *  - every namespace the stack owns (its own and the connect gateway's) has exactly one default
 *    deny, and no other namespace has one;
 *  - every pod in an owned namespace may ask the cluster DNS;
 *  - every port a Service sends to is admitted on the pods it selects (so the default deny cuts
 *    nothing a client must reach);
 *  - the SSH path: the internet reaches the gateway's CONNECT port, the gateway reaches istiod's
 *    15012 and every workspace's sshd and nothing else; a workspace takes SSH only from the gateway
 *    and reaches only DNS and its egress allow-list.
 * The Istio gateway model (test/ssh) ignores NetworkPolicies; this is where they are checked.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { parseStackConfig, Stack } from "../../components/stack";
import { DEFAULT_DNS, DEFAULT_ISTIOD, type InClusterPeer } from "../../components/shared/network";
import { chartScenarios, helmBinaries, helmTemplate, repoRoot } from "../../testkit/harness/helm";
import { allows, networkPolicies, podsOf, portAdmitted, type PodEndpoint } from "../../testkit/harness/network-policy";
import { render } from "../../testkit/harness/pulumi";
import type { ObjectLike } from "../../testkit/harness/validate";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface FrontEnd {
  readonly name: string;
  readonly objects: ObjectLike[];
  /** The namespaces the stack owns. */
  readonly owned: string[];
  readonly dns: InClusterPeer;
}

async function stackFronts(): Promise<FrontEnd[]> {
  const stacks = ["dev", "prod.example"];
  const fronts: FrontEnd[] = [];
  for (const stack of stacks) {
    const document = parse(readFileSync(path.join(repoRoot, `Pulumi.${stack}.yaml`), "utf8")) as {
      config: Record<string, unknown>;
    };
    const config = parseStackConfig(document.config["entryway:stack"]);
    let made: Stack | undefined;
    const { manifests } = await render(() => (made = new Stack(stack, config)));
    fronts.push({
      name: `Pulumi.${stack}.yaml`,
      objects: manifests as ObjectLike[],
      owned: [config.namespace, ...(made!.connectNamespace ? [made!.connectNamespace] : [])],
      dns: config.networkPolicy?.dns ?? DEFAULT_DNS,
    });
  }
  return fronts;
}

function chartFronts(): FrontEnd[] {
  const chart = path.join(repoRoot, "charts/entryway");
  const scenarios = chartScenarios().find((c) => c.chart === chart)!.scenarios;
  return scenarios.map((scenario) => {
    const values = (parse(readFileSync(scenario, "utf8")) ?? {}) as Json;
    const gateway = values.connectGateway ?? {};
    return {
      name: `chart ${path.basename(scenario)}`,
      objects: helmTemplate(helmBinaries()[0], chart, {
        valuesFiles: [scenario],
        releaseName: "entryway",
        namespace: "entryway",
      }),
      owned: ["entryway", ...(gateway.enabled ? [gateway.namespace || "entryway-connect"] : [])],
      dns: values.networkPolicy?.dns ?? DEFAULT_DNS,
    };
  });
}

const podIn = (peer: InClusterPeer): PodEndpoint => ({ namespace: peer.namespace, labels: peer.podSelector });
const isDefaultDeny = (o: ObjectLike & { spec: Json }) =>
  Object.keys(o.spec.podSelector ?? {}).length === 0 &&
  JSON.stringify(o.spec.policyTypes) === JSON.stringify(["Ingress", "Egress"]) &&
  !o.spec.ingress?.length &&
  !o.spec.egress?.length;
const INTERNET = { ip: "198.51.100.7" };

describe("the model of NetworkPolicy itself", () => {
  const ns = "app";
  const pod: PodEndpoint = { namespace: ns, labels: { app: "web" }, ports: [{ name: "http", containerPort: 8080 }] };
  const client: PodEndpoint = { namespace: "clients", labels: { role: "client" } };
  const policy = (spec: Json) =>
    ({
      apiVersion: "networking.k8s.io/v1",
      kind: "NetworkPolicy",
      metadata: { name: "p", namespace: ns },
      spec,
    }) as ObjectLike & { spec: Json };

  it("denies everything under a default deny alone, and admits what an added policy allows (named ports resolved)", () => {
    const deny = policy({ podSelector: {}, policyTypes: ["Ingress", "Egress"] });
    expect(allows([], client, pod, 8080)).toBe(true); // no policy: not isolated
    expect(allows([deny], client, pod, 8080)).toBe(false);
    expect(allows([deny], pod, podIn(DEFAULT_DNS), 53, "UDP")).toBe(false);
    expect(portAdmitted([deny], pod, 8080)).toBe(false);
    const web = policy({
      podSelector: { matchLabels: { app: "web" } },
      policyTypes: ["Ingress"],
      ingress: [{ ports: [{ port: "http" }] }],
    });
    expect(allows([deny, web], client, pod, 8080)).toBe(true);
    expect(allows([deny, web], client, pod, 8081)).toBe(false);
  });

  it("reads namespaceSelector and podSelector in one peer as AND, in two peers as OR, and ipBlock with except", () => {
    const both = (peers: Json[]) => [policy({ podSelector: {}, policyTypes: ["Ingress"], ingress: [{ from: peers }] })];
    const stranger: PodEndpoint = { namespace: "clients", labels: { role: "other" } };
    const and = both([
      {
        namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "clients" } },
        podSelector: { matchLabels: { role: "client" } },
      },
    ]);
    expect(allows(and, client, pod, 8080)).toBe(true);
    expect(allows(and, stranger, pod, 8080)).toBe(false);
    const or = both([
      { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "clients" } } },
      { podSelector: { matchLabels: { role: "client" } } },
    ]);
    expect(allows(or, stranger, pod, 8080)).toBe(true);
    const block = both([{ ipBlock: { cidr: "0.0.0.0/0", except: ["10.0.0.0/8"] } }]);
    expect(allows(block, INTERNET, pod, 8080)).toBe(true);
    expect(allows(block, { ip: "10.1.2.3" }, pod, 8080)).toBe(false);
    expect(allows(block, client, pod, 8080)).toBe(false);
  });
});

describe("the stack's NetworkPolicies", async () => {
  const fronts = [...(await stackFronts()), ...chartFronts()];

  it("covers the shipped stacks and every chart scenario", () => {
    expect(fronts.map((f) => f.name)).toEqual(
      expect.arrayContaining([
        "Pulumi.dev.yaml",
        "Pulumi.prod.example.yaml",
        "chart default.yaml",
        "chart ssh-tls.yaml",
      ]),
    );
  });

  describe.each(fronts.map((f) => [f.name, f] as const))("%s", (_name, front) => {
    const policies = networkPolicies(front.objects);
    const pods = podsOf(front.objects);

    it("has exactly one default deny in every namespace the stack owns, and none elsewhere", () => {
      const denies = policies
        .filter(isDefaultDeny)
        .map((p) => p.metadata!.namespace!)
        .sort();
      expect(denies).toEqual([...front.owned].sort());
    });

    it("lets every pod in an owned namespace ask the cluster DNS", () => {
      const owned = pods.filter((p) => front.owned.includes(p.namespace));
      for (const pod of owned)
        expect({
          pod: pod.name,
          dns: allows(policies, pod, podIn(front.dns), 53, "UDP") && allows(policies, pod, podIn(front.dns), 53, "TCP"),
        }).toEqual({ pod: pod.name, dns: true });
    });

    it("admits every port a Service sends to on the pods it selects", () => {
      for (const service of front.objects.filter((o) => o.kind === "Service") as (ObjectLike & { spec: Json })[]) {
        const selected = pods.filter(
          (p) =>
            p.namespace === service.metadata?.namespace &&
            Object.entries((service.spec.selector ?? {}) as Record<string, string>).every(
              ([k, v]) => p.labels[k] === v,
            ),
        );
        for (const pod of selected) {
          for (const servicePort of service.spec.ports as Json[]) {
            const target = servicePort.targetPort ?? servicePort.port;
            const port = typeof target === "number" ? target : pod.ports!.find((p) => p.name === target)!.containerPort;
            expect({
              service: service.metadata?.name,
              pod: pod.name,
              port,
              admitted: portAdmitted(policies, pod, port, servicePort.protocol ?? "TCP"),
            }).toEqual({ service: service.metadata?.name, pod: pod.name, port, admitted: true });
          }
        }
      }
    });

    const gateway = pods.find((p) => p.labels["app.kubernetes.io/name"] === "connect-gateway");
    const workspaces = pods.filter((p) => p.labels["app.kubernetes.io/name"] === "ssh-workspace");
    // Only where there is a gateway (no test is made, and none skipped, elsewhere).
    if (gateway)
      it("lets the SSH path through and nothing else: internet -> gateway -> istiod and workspaces", () => {
        const connectPort = gateway!.ports!.find((p) => p.name === "connect")!.containerPort;
        for (const port of [connectPort, 15021, 15090]) expect(allows(policies, INTERNET, gateway!, port)).toBe(true);
        expect(allows(policies, INTERNET, gateway!, 15000)).toBe(false); // Envoy's admin port
        expect(allows(policies, gateway!, podIn(DEFAULT_ISTIOD), 15012)).toBe(true);
        expect(allows(policies, gateway!, podIn(DEFAULT_ISTIOD), 15010)).toBe(false); // istiod's plaintext xDS
        expect(allows(policies, gateway!, { ip: "203.0.113.9" }, 443)).toBe(false);
        const others = pods.filter((p) => p !== gateway && !workspaces.includes(p));
        for (const other of others)
          for (const port of other.ports ?? [])
            expect(allows(policies, gateway!, other, port.containerPort)).toBe(false);
        const stranger: PodEndpoint = { namespace: front.owned[0], labels: { app: "stranger" } };
        // A workspace of this instance in a namespace the stack declares none in, and another
        // instance's workspace beside a real one. (A pod in a declared namespace carrying this
        // instance's labels is admitted whatever its component label says: whoever may create it
        // could copy a real workspace's component label too, so selecting by component would add
        // nothing but an update of the policy for every workspace added.)
        for (const impostor of [
          {
            namespace: "elsewhere",
            labels: {
              "app.kubernetes.io/name": "ssh-workspace",
              "app.kubernetes.io/instance": "entryway",
              "app.kubernetes.io/component": "alice",
            },
          },
          ...workspaces.map((ws) => ({
            namespace: ws.namespace,
            labels: { ...ws.labels, "app.kubernetes.io/instance": "another-release" },
          })),
        ]) {
          expect(allows(policies, gateway!, impostor, 2222), JSON.stringify(impostor)).toBe(false);
        }
        for (const workspace of workspaces) {
          expect(allows(policies, gateway!, workspace, 2222)).toBe(true);
          expect(allows(policies, INTERNET, workspace, 2222)).toBe(false);
          expect(allows(policies, stranger, workspace, 2222)).toBe(false);
          expect(allows(policies, workspace, stranger, 8000)).toBe(false);
          expect(allows(policies, workspace, podIn(front.dns), 53, "UDP")).toBe(true);
          expect(allows(policies, workspace, { ip: "10.1.2.3" }, 443)).toBe(false); // the cluster's range: never by default or by the example allow-list
        }
      });
  });

  it("a workspace's egress allow-list opens exactly what it names (chart ssh-several-workspaces: bob, 443 outside 10.0.0.0/8)", () => {
    const front = fronts.find((f) => f.name === "chart ssh-several-workspaces.yaml")!;
    const policies = networkPolicies(front.objects);
    const [alice, bob] = ["entryway-ws-alice", "entryway-ws-bob"].map((name) =>
      podsOf(front.objects).find((p) => p.labels["app.kubernetes.io/component"] === name)!,
    );
    expect(allows(policies, bob, INTERNET, 443)).toBe(true);
    expect(allows(policies, bob, INTERNET, 80)).toBe(false);
    expect(allows(policies, alice, INTERNET, 443)).toBe(false);
    // bob's namespace (team-b) is not the stack's: his own policy still isolates him, DNS included.
    expect(front.owned).not.toContain(bob.namespace);
    expect(allows(policies, bob, podIn(front.dns), 53, "UDP")).toBe(true);
    expect(allows(policies, bob, podIn(DEFAULT_DNS), 53, "UDP")).toBe(false); // CoreDNS under its own labels in this scenario
  });
});
