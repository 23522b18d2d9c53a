import * as pulumi from "@pulumi/pulumi";
import { describe, expect, it } from "vitest";
import { ConnectGateway, type ConnectGatewayArgs } from "../../components/ssh/connect-gateway";
import { NetworkProtocol, SshWorkspace, type SshWorkspaceArgs } from "../../components/ssh/ssh-workspace";
import { childrenOf, findManifest, outputOf, render, type Manifest } from "../../testkit/harness/pulumi";
import { assertValidObjects } from "../../testkit/harness/validate";
import { checkEnvoyFilter } from "../../testkit/harness/envoy";
import { DNS_RULE, namespacePeer } from "../foundation/network-peers";

const KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIIqHgiy0GmQ2fM0zVj8Ff7R2xjH5l6mQfC1tq7g0nW9e alice@laptop";

type WorkspaceSpec = Omit<SshWorkspaceArgs, "gateway" | "namespace"> & { name: string; namespace?: string };

function program(
  gatewayArgs: Partial<ConnectGatewayArgs>,
  workspaces: WorkspaceSpec[],
  captured: { gateway?: ConnectGateway; workspaces: SshWorkspace[] } = { workspaces: [] },
) {
  return () => {
    const gateway = new ConnectGateway("entryway", {
      namespace: "dev-connect",
      hostname: "ssh.example.com",
      ...gatewayArgs,
    });
    captured.gateway = gateway;
    for (const { name, ...rest } of workspaces) {
      captured.workspaces.push(
        new SshWorkspace(`entryway-ws-${name}`, {
          gateway: gateway.registration,
          authorizedKeys: [KEY],
          namespace: "dev",
          ...rest,
        }),
      );
    }
  };
}

async function expectValid(manifests: Manifest[]) {
  await assertValidObjects(manifests);
  const envoyErrors = (
    await Promise.all(manifests.filter((m) => m.kind === "EnvoyFilter").map(checkEnvoyFilter))
  ).flat();
  expect(envoyErrors).toEqual([]);
}

/** The error a render fails with. */
async function failure(rendering: Promise<unknown>): Promise<Error> {
  try {
    await rendering;
  } catch (error) {
    return error as Error;
  }
  throw new Error("the render did not fail");
}

const specOf = (m: Manifest) => m.spec as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe("ConnectGateway", () => {
  it("makes a dedicated injected gateway whose one port accepts CONNECT, and every object is valid", async () => {
    const { manifests, resources } = await render(program({}, []));
    await expectValid(manifests);
    const component = resources.find((r) => r.type === "entryway:index:ConnectGateway")!;
    expect(childrenOf(resources, component.urn).length).toBe(manifests.length);
    expect(manifests.every((m) => m.metadata.namespace === "dev-connect")).toBe(true);

    const deployment = specOf(findManifest(manifests, "Deployment", "entryway-connect-gateway"));
    expect(deployment.template.metadata.annotations).toEqual({ "inject.istio.io/templates": "gateway" });
    expect(deployment.template.metadata.labels["sidecar.istio.io/inject"]).toBe("true");
    expect(deployment.template.spec.containers[0]).toMatchObject({ name: "istio-proxy", image: "auto" });
    expect(deployment.template.spec.containers[0].securityContext).toMatchObject({
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ["ALL"] },
    });

    const service = specOf(findManifest(manifests, "Service", "entryway-connect-gateway"));
    expect(service.type).toBe("LoadBalancer");
    expect(service.ports).toEqual([{ name: "tcp-connect", port: 2222, targetPort: 2222, protocol: "TCP" }]);

    const gw = specOf(findManifest(manifests, "Gateway", "entryway-connect-gateway"));
    expect(gw.servers).toEqual([
      {
        port: { number: 2222, name: "connect", protocol: "HTTP" },
        hosts: ["dev-connect/entryway-connect-gateway.connect.invalid"],
      },
    ]);

    const filter = specOf(findManifest(manifests, "EnvoyFilter", "entryway-connect-gateway-connect"));
    expect(filter.configPatches).toHaveLength(1);
    expect(filter.configPatches[0].applyTo).toBe("NETWORK_FILTER");
    expect(filter.configPatches[0].match.listener.portNumber).toBe(2222);
    expect(filter.configPatches[0].patch.value.typed_config).toMatchObject({
      upgrade_configs: [{ upgrade_type: "CONNECT" }],
      http_protocol_options: { accept_http_10: true },
      http2_protocol_options: { allow_connect: true },
      stream_idle_timeout: "0s",
    });
    // Never an open proxy.
    expect(JSON.stringify(manifests)).not.toMatch(/dynamic_forward_proxy|original_dst|cluster_header/);

    const authz = specOf(findManifest(manifests, "AuthorizationPolicy", "entryway-connect-gateway"));
    expect(authz).toEqual({
      selector: { matchLabels: deployment.selector.matchLabels },
      action: "ALLOW",
      rules: [{ to: [{ operation: { methods: ["CONNECT"], ports: ["2222"] } }] }],
    });
    expect(manifests.map((m) => m.kind)).not.toContain("Role");
    expect(manifests.map((m) => m.kind)).not.toContain("HorizontalPodAutoscaler");

    // In: CONNECT, readiness and metrics. Out: DNS, istiod's 15012 and workspace pods' sshd only.
    const np = specOf(findManifest(manifests, "NetworkPolicy", "entryway-connect-gateway"));
    expect(np.policyTypes).toEqual(["Ingress", "Egress"]);
    expect(np.ingress).toEqual([
      {
        ports: [
          { port: 2222, protocol: "TCP" },
          { port: 15021, protocol: "TCP" },
          { port: 15090, protocol: "TCP" },
        ],
      },
    ]);
    expect(np.egress).toEqual([
      DNS_RULE,
      {
        to: [namespacePeer("istio-system", { app: "istiod" })],
        ports: [{ port: 15012, protocol: "TCP" }],
      },
      {
        to: [{ namespaceSelector: {}, podSelector: { matchLabels: { "app.kubernetes.io/name": "ssh-workspace" } } }],
        ports: [{ port: 2222, protocol: "TCP" }],
      },
    ]);
  });

  it("takes the cluster DNS and istiod of a cluster that differs from the defaults", async () => {
    const { manifests } = await render(
      program(
        {
          dns: { namespace: "dns", podSelector: { app: "coredns" } },
          istiod: { namespace: "istio-1-26", podSelector: { app: "istiod", "istio.io/rev": "1-26" } },
        },
        [{ name: "alice" }],
      ),
    );
    const peers = (name: string) =>
      specOf(findManifest(manifests, "NetworkPolicy", name)).egress.flatMap((rule: { to: unknown[] }) => rule.to);
    expect(peers("entryway-connect-gateway")).toContainEqual(namespacePeer("dns", { app: "coredns" }));
    expect(peers("entryway-connect-gateway")).toContainEqual(
      namespacePeer("istio-1-26", { app: "istiod", "istio.io/rev": "1-26" }),
    );
    expect(peers("entryway-ws-alice")).toEqual([namespacePeer("dns", { app: "coredns" })]);
  });

  it("takes a port, a service type, annotations, client CIDRs and an HPA", async () => {
    const { manifests } = await render(
      program(
        {
          port: 8022,
          serviceType: "NodePort",
          nodePort: 30222,
          serviceAnnotations: { "example.com/lb": "internal" },
          allowedSourceRanges: ["10.0.0.0/8", "192.168.1.0/24"],
          autoscaling: { minReplicas: 2, maxReplicas: 4 },
        },
        [],
      ),
    );
    await expectValid(manifests);
    const service = findManifest(manifests, "Service", "entryway-connect-gateway");
    expect(service.metadata.annotations).toEqual({ "example.com/lb": "internal" });
    expect(specOf(service)).toMatchObject({
      type: "NodePort",
      externalTrafficPolicy: "Local",
      ports: [{ port: 8022, targetPort: 8022, nodePort: 30222 }],
    });
    expect(specOf(findManifest(manifests, "AuthorizationPolicy", "entryway-connect-gateway")).rules).toEqual([
      {
        from: [{ source: { remoteIpBlocks: ["10.0.0.0/8", "192.168.1.0/24"] } }],
        to: [{ operation: { methods: ["CONNECT"], ports: ["8022"] } }],
      },
    ]);
    expect(specOf(findManifest(manifests, "HorizontalPodAutoscaler", "entryway-connect-gateway"))).toMatchObject({
      minReplicas: 2,
      maxReplicas: 4,
    });
    expect(specOf(findManifest(manifests, "Deployment", "entryway-connect-gateway")).replicas).toBeUndefined();
    expect(specOf(service).loadBalancerSourceRanges).toBeUndefined(); // NodePort: no cloud load balancer
  });

  it("passes the client CIDRs to a LoadBalancer as loadBalancerSourceRanges", async () => {
    const { manifests } = await render(program({ allowedSourceRanges: ["203.0.113.0/24"] }, []));
    await expectValid(manifests);
    expect(specOf(findManifest(manifests, "Service", "entryway-connect-gateway"))).toMatchObject({
      type: "LoadBalancer",
      externalTrafficPolicy: "Local",
      loadBalancerSourceRanges: ["203.0.113.0/24"],
    });
  });

  it("with TLS: an HTTPS server, the SDS Role, and workspaces patch Istio's https route configuration", async () => {
    const captured = { workspaces: [] as SshWorkspace[] } as { gateway?: ConnectGateway; workspaces: SshWorkspace[] };
    const { manifests } = await render(
      program({ tls: { credentialName: "ssh-gateway-cert" } }, [{ name: "alice" }], captured),
    );
    await expectValid(manifests);
    expect(specOf(findManifest(manifests, "Gateway", "entryway-connect-gateway")).servers).toEqual([
      {
        port: { number: 2222, name: "connect", protocol: "HTTPS" },
        hosts: ["ssh.example.com"],
        tls: { mode: "SIMPLE", credentialName: "ssh-gateway-cert", minProtocolVersion: "TLSV1_2" },
      },
    ]);
    // istio: https.<port>.<portName>.<gatewayName>.<namespace>
    expect(captured.gateway!.routeConfigurationName).toBe("https.2222.connect.entryway-connect-gateway.dev-connect");
    const route = specOf(findManifest(manifests, "EnvoyFilter", "entryway-ws-alice-route"));
    expect(route.configPatches[0].match.routeConfiguration).toEqual({
      portNumber: 2222,
      name: "https.2222.connect.entryway-connect-gateway.dev-connect",
    });
    const role = findManifest(manifests, "Role", "entryway-connect-gateway-sds");
    expect(role.rules).toEqual([{ apiGroups: [""], resources: ["secrets"], verbs: ["get", "watch", "list"] }]);
    expect(findManifest(manifests, "RoleBinding", "entryway-connect-gateway-sds").subjects).toEqual([
      { kind: "ServiceAccount", name: "entryway-connect-gateway", namespace: "dev-connect" },
    ]);
    expect(await outputOf(captured.workspaces[0].sshConfig)).toContain(
      "ProxyCommand entryway connect-proxy --tls ssh.example.com:2222 %h %p",
    );
  });

  it("imagePullPolicy reaches the proxy container (Istio's injection keeps the pod's own value); none by default", async () => {
    const container = async (args: Partial<ConnectGatewayArgs>) =>
      specOf(findManifest((await render(program(args, []))).manifests, "Deployment", "entryway-connect-gateway"))
        .template.spec.containers[0];
    expect((await container({ imagePullPolicy: "IfNotPresent" })).imagePullPolicy).toBe("IfNotPresent");
    expect((await container({})).imagePullPolicy).toBeUndefined();
  });

  it("with TLS the Gateway waits for the SDS Role and RoleBinding (istiod keeps a refusal for a minute), without TLS for nothing of them", async () => {
    const waits = async (tls: boolean): Promise<string[]> => {
      const made = new Map<pulumi.Resource, string>();
      let gatewayDependsOn: unknown;
      await render(() => {
        new ConnectGateway(
          "entryway",
          {
            namespace: "dev-connect",
            hostname: "ssh.example.com",
            ...(tls ? { tls: { credentialName: "cert" } } : {}),
          },
          {
            transformations: [
              (a) => {
                made.set(a.resource, `${a.type.split(":").at(-1)}/${a.name}`);
                if (a.type === "kubernetes:networking.istio.io/v1:Gateway") gatewayDependsOn = a.opts.dependsOn;
                return undefined;
              },
            ],
          },
        );
      });
      return ((gatewayDependsOn ?? []) as pulumi.Resource[]).map((r) => made.get(r) ?? "?").sort();
    };
    expect(await waits(true)).toEqual([
      "Role/entryway-connect-gateway-sds",
      "RoleBinding/entryway-connect-gateway-sds",
    ]);
    expect(await waits(false)).toEqual([]);
  });

  it.each([
    [{ port: 80 }, /port 80 is reserved/],
    [{ port: 443 }, /port 443 is reserved/],
    [{ port: 70000 }, /port must be 1-65535/],
    [{ serviceType: "ClusterIP" as const, nodePort: 30001 }, /nodePort must be 30000-32767 and needs serviceType/],
    [{ allowedSourceRanges: ["10.0.0.0"] }, /"10.0.0.0" is not a CIDR/],
    [{ hostname: "SSH Example" }, /hostname "SSH Example" is not a lower-case DNS name/],
    // Istio's validation refuses a TLS Gateway host without a dot (test/ssh/istiod.test.ts shows istiod refusing it).
    [
      { hostname: "localhost", tls: { credentialName: "cert" } },
      /with tls, hostname "localhost" must be a fully qualified name/,
    ],
    [{ autoscaling: { minReplicas: 5, maxReplicas: 2 } }, /minReplicas <= maxReplicas/],
    [{ namespace: "Dev_Connect" }, /namespace "Dev_Connect" is not a namespace name/],
  ])("refuses %j at preview", async (bad, message) => {
    await expect(render(program(bad as Partial<ConnectGatewayArgs>, []))).rejects.toThrow(message);
  });

  it("reports every problem at once, one a line, as an error of the component", async () => {
    const error = await failure(
      render(program({ port: 80, hostname: "SSH Example", autoscaling: { minReplicas: 5, maxReplicas: 2 } }, [])),
    );
    expect(pulumi.ResourceError.isInstance(error)).toBe(true);
    expect(error.message.split("\n")).toEqual([
      "ConnectGateway entryway: port 80 is reserved (80/443 carry web traffic; 150xx are Istio's); pick a dedicated port such as 2222",
      'ConnectGateway entryway: hostname "SSH Example" is not a lower-case DNS name',
      "ConnectGateway entryway: autoscaling needs 1 <= minReplicas <= maxReplicas",
    ]);
  });
});

describe("SshWorkspace", () => {
  it("makes a restricted sshd StatefulSet with a home volume, PDB, Service tcp-ssh, NetworkPolicy and its route", async () => {
    const captured = { workspaces: [] as SshWorkspace[] } as { gateway?: ConnectGateway; workspaces: SshWorkspace[] };
    const { manifests, resources } = await render(
      program(
        {},
        [
          {
            name: "alice",
            namespace: "team-a",
            storage: { size: "20Gi", storageClassName: "fast" },
            idleTimeout: "7200s",
          },
        ],
        captured,
      ),
    );
    await expectValid(manifests);
    const component = resources.find((r) => r.type === "entryway:index:SshWorkspace")!;
    expect(
      childrenOf(resources, component.urn)
        .map((r) => r.type)
        .sort(),
    ).toEqual([
      "kubernetes:apps/v1:StatefulSet",
      "kubernetes:core/v1:Secret",
      "kubernetes:core/v1:Service",
      "kubernetes:networking.istio.io/v1alpha3:EnvoyFilter",
      "kubernetes:networking.k8s.io/v1:NetworkPolicy",
      "kubernetes:policy/v1:PodDisruptionBudget",
    ]);

    const sts = specOf(findManifest(manifests, "StatefulSet", "entryway-ws-alice"));
    expect(findManifest(manifests, "StatefulSet", "entryway-ws-alice").metadata.namespace).toBe("team-a");
    const pod = sts.template.spec;
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 1000,
      fsGroup: 1000,
      seccompProfile: { type: "RuntimeDefault" },
    });
    expect(pod.containers[0].securityContext).toMatchObject({
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ["ALL"] },
    });
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.containers[0].volumeMounts).toContainEqual({ name: "home", mountPath: "/home/dev" });
    expect(sts.volumeClaimTemplates[0].spec).toEqual({
      accessModes: ["ReadWriteOnce"],
      storageClassName: "fast",
      resources: { requests: { storage: "20Gi" } },
    });
    expect(specOf(findManifest(manifests, "PodDisruptionBudget", "entryway-ws-alice")).maxUnavailable).toBe(0); // disruption: never
    expect(specOf(findManifest(manifests, "Service", "entryway-ws-alice")).ports).toEqual([
      { name: "tcp-ssh", port: 22, targetPort: 2222, protocol: "TCP" },
    ]);
    findManifest(manifests, "Secret", "entryway-ws-alice-authorized-keys"); // its data is redacted in manifests
    const secret = resources.find((r) => r.type === "kubernetes:core/v1:Secret")!;
    expect((secret.inputs as { stringData: unknown }).stringData).toEqual({ authorized_keys: `${KEY}\n` });

    const np = specOf(findManifest(manifests, "NetworkPolicy", "entryway-ws-alice"));
    const gatewayPods = specOf(findManifest(manifests, "Deployment", "entryway-connect-gateway")).selector.matchLabels;
    expect(np.policyTypes).toEqual(["Ingress", "Egress"]);
    expect(np.ingress).toEqual([
      {
        from: [namespacePeer("dev-connect", gatewayPods)],
        ports: [{ port: 2222, protocol: "TCP" }],
      },
    ]);
    // Default egress: the cluster DNS only.
    expect(np.egress).toEqual([DNS_RULE]);
    expect(pod.containers[0].env).toContainEqual({ name: "ENTRYWAY_TCP_FORWARDING", value: "no" });

    const route = findManifest(manifests, "EnvoyFilter", "entryway-ws-alice-route");
    expect(route.metadata.namespace).toBe("dev-connect"); // the gateway's namespace
    expect(route.metadata.annotations).toEqual({
      "envoyfilter.istio.io/referenced-services": "team-a/entryway-ws-alice.team-a.svc.cluster.local",
    });
    expect(specOf(route)).toEqual({
      workloadSelector: { labels: gatewayPods },
      configPatches: [
        {
          applyTo: "VIRTUAL_HOST",
          match: { context: "GATEWAY", routeConfiguration: { portNumber: 2222, name: "http.2222" } },
          patch: {
            operation: "ADD",
            value: {
              name: "entryway-ws-alice.team-a",
              // No port in the domain: Istio's gateways ignore it in host matching; the route pins it.
              domains: ["entryway-ws-alice.team-a.svc.cluster.local"],
              routes: [
                {
                  match: {
                    connect_matcher: {},
                    headers: [
                      { name: ":authority", string_match: { exact: "entryway-ws-alice.team-a.svc.cluster.local:22" } },
                    ],
                  },
                  route: {
                    cluster: "outbound|22||entryway-ws-alice.team-a.svc.cluster.local",
                    timeout: "0s",
                    idle_timeout: "7200s",
                    upgrade_configs: [{ upgrade_type: "CONNECT", connect_config: {} }],
                  },
                },
              ],
            },
          },
        },
      ],
    });

    expect(await outputOf(captured.workspaces[0].sshConfig)).toBe(
      [
        "Host entryway-ws-alice",
        "  HostName entryway-ws-alice.team-a.svc.cluster.local",
        "  Port 22",
        "  User dev",
        "  ProxyCommand entryway connect-proxy ssh.example.com:2222 %h %p",
        "  ServerAliveInterval 30",
        "",
      ].join("\n"),
    );
  });

  it("takes local forwarding and an egress allow-list", async () => {
    const internet = {
      to: [{ ipBlock: { cidr: "0.0.0.0/0", except: ["10.0.0.0/8"] } }],
      ports: [{ port: 443, protocol: NetworkProtocol.TCP }],
    };
    const { manifests } = await render(program({}, [{ name: "alice", tcpForwarding: "local", egress: [internet] }]));
    await expectValid(manifests);
    expect(
      specOf(findManifest(manifests, "StatefulSet", "entryway-ws-alice")).template.spec.containers[0].env,
    ).toContainEqual({ name: "ENTRYWAY_TCP_FORWARDING", value: "local" });
    expect(specOf(findManifest(manifests, "NetworkPolicy", "entryway-ws-alice")).egress[1]).toEqual(internet);
  });

  it("lets drains move the workspace with disruption: allowed (the PDB stays, with maxUnavailable 1)", async () => {
    const { manifests } = await render(program({}, [{ name: "alice", disruption: "allowed" }]));
    expect(specOf(findManifest(manifests, "PodDisruptionBudget", "entryway-ws-alice")).maxUnavailable).toBe(1);
    await expect(render(program({}, [{ name: "bob", disruption: "sometimes" as "never" }]))).rejects.toThrow(
      /disruption must be "never" or "allowed"/,
    );
  });

  it("takes the alias of its ssh config block", async () => {
    const captured = { workspaces: [] as SshWorkspace[] } as { gateway?: ConnectGateway; workspaces: SshWorkspace[] };
    await render(program({}, [{ name: "alice", sshAlias: "alice-dev" }], captured));
    expect(await outputOf(captured.workspaces[0].sshConfig)).toMatch(
      /^Host alice-dev\n {2}HostName entryway-ws-alice\.dev\.svc\.cluster\.local\n/,
    );
  });

  it("mounts an existing Secret's key instead of making one", async () => {
    const { manifests } = await render(
      program({}, [
        { name: "bob", authorizedKeys: undefined, authorizedKeysSecret: { name: "bob-keys", key: "keys" } },
      ]),
    );
    await expectValid(manifests);
    expect(manifests.filter((m) => m.kind === "Secret")).toEqual([]);
    const volumes = specOf(findManifest(manifests, "StatefulSet", "entryway-ws-bob")).template.spec.volumes;
    expect(volumes).toContainEqual({
      name: "authorized-keys",
      secret: { secretName: "bob-keys", defaultMode: 0o444, items: [{ key: "keys", path: "authorized_keys" }] },
    });
  });

  it("refuses two workspaces with the same domain on one gateway at preview", async () => {
    // Same name in the same namespace, via two different resource names that make one object name.
    await expect(
      render(() => {
        const gateway = new ConnectGateway("entryway", { namespace: "dev-connect" });
        new SshWorkspace("entryway-ws-alice", {
          gateway: gateway.registration,
          namespace: "dev",
          authorizedKeys: [KEY],
        });
        new SshWorkspace("Entryway-WS-Alice", {
          gateway: gateway.registration,
          namespace: "dev",
          authorizedKeys: [KEY],
        });
      }),
    ).rejects.toThrow(
      /domain entryway-ws-alice\.dev\.svc\.cluster\.local is already routed by workspace entryway-ws-alice .*Envoy would reject every route/,
    );
  });

  it.each([
    [{ authorizedKeys: [] }, /authorizedKeys is empty/],
    [{ authorizedKeys: ["-----BEGIN OPENSSH PRIVATE KEY-----"] }, /is not an OpenSSH public key/],
    [{ authorizedKeysSecret: { name: "x" } }, /exactly one of authorizedKeys and authorizedKeysSecret/],
    [{ user: "Root User" }, /user "Root User" is not a valid login name/],
    [{ uid: 0 }, /uid must be a non-root user id/],
    [{ idleTimeout: "1h" }, /idleTimeout must be seconds/],
    [{ sshAlias: "alice dev" }, /SshWorkspace entryway-ws-carol: alias "alice dev" must be/],
    [
      { namespace: "dev-connect" },
      /namespace dev-connect is the connect gateway's; a workspace \(and its keys Secret\) runs in another namespace/,
    ],
    [{ tcpForwarding: "remote" }, /tcpForwarding must be "none" or "local"/],
  ])("refuses %j at preview", async (bad, message) => {
    await expect(render(program({}, [{ name: "carol", ...(bad as Partial<SshWorkspaceArgs>) }]))).rejects.toThrow(
      message,
    );
  });

  it("reports every problem at once, one a line, as an error of the component", async () => {
    const error = await failure(
      render(program({}, [{ name: "carol", uid: 0, authorizedKeys: [], idleTimeout: "1h" }])),
    );
    expect(pulumi.ResourceError.isInstance(error)).toBe(true);
    expect(error.message.split("\n")).toEqual([
      "SshWorkspace entryway-ws-carol: uid must be a non-root user id (>= 1), not 0",
      "SshWorkspace entryway-ws-carol: authorizedKeys is empty: nobody could log in",
      'SshWorkspace entryway-ws-carol: idleTimeout must be seconds like "3600s", not "1h"',
    ]);
  });

  it("adding or removing a workspace never changes the gateway's listener-level EnvoyFilter", async () => {
    const one = await render(program({}, [{ name: "alice" }]));
    const two = await render(program({}, [{ name: "alice" }, { name: "bob" }]));
    const none = await render(program({}, []));
    const listener = (r: { manifests: Manifest[] }) =>
      findManifest(r.manifests, "EnvoyFilter", "entryway-connect-gateway-connect");
    expect(listener(two)).toEqual(listener(one));
    expect(listener(none)).toEqual(listener(one));
    // Only the new workspace's own objects appear; nothing that existed changes.
    const key = (m: Manifest) => `${m.kind}/${m.metadata.namespace}/${m.metadata.name}`;
    const before = new Map(one.manifests.map((m) => [key(m), m]));
    for (const m of two.manifests) {
      if (before.has(key(m))) expect(m).toEqual(before.get(key(m)));
      else expect(m.metadata.name).toMatch(/^entryway-ws-bob/);
    }
    const envoyFilters = two.manifests
      .filter((m) => m.kind === "EnvoyFilter")
      .map((m) => m.metadata.name)
      .sort();
    expect(envoyFilters).toEqual([
      "entryway-connect-gateway-connect",
      "entryway-ws-alice-route",
      "entryway-ws-bob-route",
    ]);
  });
});
