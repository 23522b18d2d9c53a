/**
 * ConnectGateway: a DEDICATED Istio ingress gateway for SSH over HTTP CONNECT. Its own Deployment
 * (Istio's gateway injection), Service and one port that accepts CONNECT (HTTP/1.1, HTTP/1.0 and
 * HTTP/2), an AuthorizationPolicy that admits only CONNECT, and optional TLS on the CONNECT hop.
 *
 * The listener-level EnvoyFilter is made once here and never changes: workspaces register with
 * their own VIRTUAL_HOST ADD patches (SshWorkspace), so adding or removing one leaves the
 * listener, and every live SSH session on it, alone.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { childObjects, withDependencies, type ChildObjects } from "../shared/children";
import { selectorLabels } from "../shared/labels";
import { connectGatewayAlerts, prometheusRule, scrapeMonitor } from "../shared/monitoring";
import { objectName, serviceFqdn } from "../shared/names";
import { podMetadata, podPlacement } from "../shared/pod";
import {
  DEFAULT_DNS,
  DEFAULT_ISTIOD,
  dnsEgressRule,
  ISTIO_HEALTH_PORT,
  ISTIO_METRICS_PORT,
  ISTIOD_XDS_PORT,
  peerIn,
  type InClusterPeer,
} from "../shared/network";
import { proxyPodSecurityContext, restrictedContainerSecurityContext } from "../shared/security";
import type { ConnectGatewayArgs } from "./connect-gateway-args";
import { WORKSPACE_SSHD_PORT, type ConnectGatewayRegistration } from "./contract";
import { CONNECT_PORT_NAME, connectFilterSpec, gatewayRouteConfigurationName } from "./envoy-filters";
import { connectGatewayProblems } from "./validate";

export * from "./connect-gateway-args";

/** The Istio proxy's uid in gateway pods. */
const ISTIO_PROXY_UID = 1337;

/** The names, labels and peers every step shares (the chart's templates/ssh/_helpers.tpl). */
interface Plan extends ChildObjects {
  readonly name: string;
  readonly args: ConnectGatewayArgs;
  readonly port: number;
  readonly ns: string;
  readonly gw: string;
  readonly tls: boolean;
  readonly workspacePeers: k8s.types.input.networking.v1.NetworkPolicyPeer[];
}

function plan(
  name: string,
  args: ConnectGatewayArgs,
  parent: pulumi.Resource,
  opts: pulumi.ComponentResourceOptions | undefined,
): Plan {
  const ns = args.namespace;
  return {
    ...childObjects({ name: "connect-gateway", instance: name }, args.labels, ns, parent, opts),
    name,
    args,
    port: args.port ?? 2222,
    ns,
    gw: objectName(name, "connect-gateway"),
    tls: args.tls !== undefined,
    workspacePeers: args.workspaces
      ? [...new Set(args.workspaces.map((ws) => ws.namespace))]
          .sort()
          .map((namespace) =>
            peerIn({ namespace, podSelector: selectorLabels({ name: "ssh-workspace", instance: name }) }),
          )
      : [{ namespaceSelector: {}, podSelector: { matchLabels: { "app.kubernetes.io/name": "ssh-workspace" } } }],
  };
}

// ConnectGateway, made in the order of the chart's templates/ssh/connect-gateway.yaml:
// ServiceAccount and RBAC, Deployment, Service, PodDisruptionBudget, HorizontalPodAutoscaler,
// NetworkPolicy, Gateway, EnvoyFilter, AuthorizationPolicy. Every problem in the arguments is
// reported at once, before any object is made.
/**
 * The SSH CONNECT gateway: an Istio gateway on one dedicated port that tunnels `CONNECT
 * <workspace>:22` to the workspaces registered on it, in a namespace of its own, behind a
 * LoadBalancer (or NodePort) Service, with optional TLS and client address ranges. Pass its
 * `registration` output to each SshWorkspace.
 */
export class ConnectGateway extends pulumi.ComponentResource {
  /** The gateway's object name (Deployment, Service, Gateway, ...). */
  public readonly gatewayName: string;
  /** The gateway's namespace. */
  public readonly namespace: string;
  /** The CONNECT port. */
  public readonly port: number;
  /** `host:port` users reach (hostname, or the Service's in-cluster name when none is given). */
  public readonly address: string;
  /** The Service's in-cluster DNS name. */
  public readonly serviceFqdn: string;
  /** The Envoy route configuration workspaces add virtual hosts to. */
  public readonly routeConfigurationName: string;
  /** The listener-level EnvoyFilter's name (made once; never changes). */
  public readonly connectFilterName: string;
  /** The load balancer's address once assigned (LoadBalancer only). */
  public readonly loadBalancerAddress: pulumi.Output<string | undefined>;
  /** Everything a workspace needs to register here. */
  public readonly registration: ConnectGatewayRegistration;

  constructor(name: string, args: ConnectGatewayArgs, opts?: pulumi.ComponentResourceOptions) {
    super("entryway:index:ConnectGateway", name, {}, opts);
    const problems = connectGatewayProblems(name, args);
    if (problems.length > 0) throw new pulumi.ResourceError(problems.join("\n"), this);
    const p = plan(name, args, this, opts);

    this.gatewayName = p.gw;
    this.namespace = p.ns;
    this.port = p.port;
    this.serviceFqdn = serviceFqdn(p.gw, p.ns);
    this.address = `${args.hostname ?? this.serviceFqdn}:${p.port}`;
    this.routeConfigurationName = gatewayRouteConfigurationName(
      p.port,
      p.tls ? { portName: CONNECT_PORT_NAME, gatewayName: p.gw, namespace: p.ns } : undefined,
    );
    this.connectFilterName = objectName(name, "connect-gateway", "connect");
    const dns = args.dns ?? DEFAULT_DNS;
    this.registration = {
      gatewayName: p.gw,
      namespace: p.ns,
      port: p.port,
      selector: p.selector,
      routeConfigurationName: this.routeConfigurationName,
      address: this.address,
      tls: p.tls,
      dns,
    };

    const { serviceAccount, sdsAccess } = this.rbac(p);
    this.deployment(p, serviceAccount);
    const service = this.service(p);
    this.disruptionBudget(p);
    this.autoscaler(p);
    this.networkPolicy(p, dns);
    this.gateway(p, sdsAccess);
    this.connectFilter(p, this.connectFilterName);
    this.authorizationPolicy(p);
    this.monitoring(p);

    this.loadBalancerAddress = service.status.apply((status) => {
      const ingress = status?.loadBalancer?.ingress?.[0];
      return ingress?.hostname ?? ingress?.ip;
    });

    this.registerOutputs({
      gatewayName: this.gatewayName,
      namespace: this.namespace,
      port: this.port,
      address: this.address,
      routeConfigurationName: this.routeConfigurationName,
    });
  }

  /**
   * The ServiceAccount, and with TLS the Role and RoleBinding that let istiod serve the
   * credentialName Secret to it: a SubjectAccessReview for verb list, resource secrets, the whole
   * namespace (istio pilot/pkg/credentials/kube/secrets.go, CredentialsController.Authorize), so
   * resourceNames cannot narrow it. Istio's gateway chart grants the same
   * (manifests/charts/gateway/templates/role.yaml). Hence the namespace of its own. Returns the
   * ServiceAccount and the Role and RoleBinding (none without TLS), which the Gateway waits for.
   */
  private rbac(p: Plan): { serviceAccount: k8s.core.v1.ServiceAccount; sdsAccess: pulumi.Resource[] } {
    const serviceAccount = new k8s.core.v1.ServiceAccount(p.gw, { metadata: p.meta(p.gw) }, p.child);
    const sdsAccess: pulumi.Resource[] = [];
    if (p.tls) {
      const sds = objectName(p.name, "connect-gateway-sds");
      const role = new k8s.rbac.v1.Role(
        sds,
        {
          metadata: p.meta(sds),
          rules: [{ apiGroups: [""], resources: ["secrets"], verbs: ["get", "watch", "list"] }],
        },
        p.child,
      );
      const binding = new k8s.rbac.v1.RoleBinding(
        sds,
        {
          metadata: p.meta(sds),
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: sds },
          subjects: [{ kind: "ServiceAccount", name: p.gw, namespace: p.ns }],
        },
        p.child,
      );
      sdsAccess.push(role, binding);
    }
    return { serviceAccount, sdsAccess };
  }

  /** The gateway's pods: Istio's gateway injection fills in the proxy. */
  private deployment(p: Plan, serviceAccount: k8s.core.v1.ServiceAccount): void {
    const { args } = p;
    const injectionLabels: Record<string, string> = args.revision
      ? { "istio.io/rev": args.revision }
      : { "sidecar.istio.io/inject": "true" };
    new k8s.apps.v1.Deployment(
      p.gw,
      {
        metadata: p.meta(p.gw),
        spec: {
          ...(args.autoscaling ? {} : { replicas: args.replicas ?? 2 }),
          selector: { matchLabels: p.selector },
          template: {
            metadata: podMetadata({ ...p.labels, ...injectionLabels }, args, {
              "inject.istio.io/templates": "gateway",
            }),
            spec: {
              serviceAccountName: serviceAccount.metadata.name,
              ...podPlacement(args, args.global),
              // The service-account token stays mounted: the proxy authenticates to istiod with a
              // token, the projected istio-token under Istio's default jwtPolicy third-party-jwt
              // (istio manifests/charts/istio-control/istio-discovery/files/gateway-injection-template.yaml),
              // but the automounted one under first-party-jwt (pilot/cmd/pilot-agent options getJwtPath:
              // /var/run/secrets/kubernetes.io/serviceaccount/token), and istio/istio#22193 shows
              // proxies failing without it. The token can do no more than the SDS Role (rbac).
              // The proxy's uid on its container only (istioctl analyze IST0144).
              securityContext: proxyPodSecurityContext(ISTIO_PROXY_UID),
              containers: [
                {
                  // "auto": Istio's gateway injection replaces the image with its proxy.
                  name: "istio-proxy",
                  image: "auto",
                  ...(args.imagePullPolicy ? { imagePullPolicy: args.imagePullPolicy } : {}),
                  ports: [
                    { name: CONNECT_PORT_NAME, containerPort: p.port, protocol: "TCP" },
                    { name: "http-envoy-prom", containerPort: ISTIO_METRICS_PORT, protocol: "TCP" },
                  ],
                  resources: args.resources ?? {
                    requests: { cpu: "100m", memory: "128Mi" },
                    limits: { memory: "512Mi" },
                  },
                  securityContext: restrictedContainerSecurityContext({ runAs: { user: ISTIO_PROXY_UID } }),
                },
              ],
            },
          },
        },
      },
      p.child,
    );
  }

  /** The Service users reach, with the one CONNECT port. */
  private service(p: Plan): k8s.core.v1.Service {
    const { args, port } = p;
    const serviceType = args.serviceType ?? "LoadBalancer";
    const service = new k8s.core.v1.Service(
      p.gw,
      {
        metadata: { ...p.meta(p.gw), ...(args.serviceAnnotations ? { annotations: args.serviceAnnotations } : {}) },
        spec: {
          type: serviceType,
          selector: p.selector,
          // Keep the client's address (the AuthorizationPolicy's remoteIpBlocks judge it), and let a
          // cloud load balancer drop other sources before they reach the cluster.
          ...(serviceType === "ClusterIP" ? {} : { externalTrafficPolicy: "Local" }),
          ...(serviceType === "LoadBalancer" && (args.allowedSourceRanges ?? []).length > 0
            ? { loadBalancerSourceRanges: args.allowedSourceRanges }
            : {}),
          ports: [
            {
              name: "tcp-connect",
              port,
              targetPort: port,
              protocol: "TCP",
              ...(args.nodePort !== undefined ? { nodePort: args.nodePort } : {}),
            },
          ],
        },
      },
      p.child,
    );
    return service;
  }

  /** One gateway pod at a time may be evicted. */
  private disruptionBudget(p: Plan): void {
    new k8s.policy.v1.PodDisruptionBudget(
      p.gw,
      {
        metadata: p.meta(p.gw),
        spec: { maxUnavailable: 1, selector: { matchLabels: p.selector } },
      },
      p.child,
    );
  }

  /** A HorizontalPodAutoscaler, when autoscaling is on. */
  private autoscaler(p: Plan): void {
    const { gw } = p;
    const autoscaling = p.args.autoscaling;
    if (!autoscaling) return;
    new k8s.autoscaling.v2.HorizontalPodAutoscaler(
      gw,
      {
        metadata: p.meta(gw),
        spec: {
          scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: gw },
          minReplicas: autoscaling.minReplicas ?? 2,
          maxReplicas: autoscaling.maxReplicas ?? 5,
          metrics: [
            {
              type: "Resource",
              resource: {
                name: "cpu",
                target: { type: "Utilization", averageUtilization: autoscaling.targetCPUUtilizationPercentage ?? 80 },
              },
            },
          ],
        },
      },
      p.child,
    );
  }

  /**
   * In: the CONNECT port from anywhere (the AuthorizationPolicy narrows by client address), the
   * proxy's readiness port (kubelet, load balancer health checks) and its metrics port, as Istio's
   * gateway chart admits (manifests/charts/gateway/templates/networkpolicy.yaml).
   * Out: DNS, istiod (xDS and certificates on 15012, the injected CA_ADDR) and the sshd port of
   * workspace pods (Envoy dials the endpoints, so the pod port, not the Service's 22).
   */
  private networkPolicy(p: Plan, dns: InClusterPeer): void {
    const { args, port } = p;
    new k8s.networking.v1.NetworkPolicy(
      p.gw,
      {
        metadata: p.meta(p.gw),
        spec: {
          podSelector: { matchLabels: p.selector },
          policyTypes: ["Ingress", "Egress"],
          ingress: [
            { ports: [port, ISTIO_HEALTH_PORT, ISTIO_METRICS_PORT].map((n) => ({ port: n, protocol: "TCP" })) },
          ],
          egress: [
            dnsEgressRule(dns),
            { to: [peerIn(args.istiod ?? DEFAULT_ISTIOD)], ports: [{ port: ISTIOD_XDS_PORT, protocol: "TCP" }] },
            // sshd on the declared workspaces only (an empty `to` would be every destination: no rule then).
            ...(p.workspacePeers.length > 0
              ? [{ to: p.workspacePeers, ports: [{ port: WORKSPACE_SSHD_PORT, protocol: "TCP" }] }]
              : []),
          ],
        },
      },
      p.child,
    );
  }

  /**
   * The Istio Gateway: the server that makes Istio open the port, HTTPS with TLS. With TLS it waits
   * for the SDS Role and RoleBinding: istiod asks whether the proxy may read the credentialName
   * Secret when it first pushes the server, and keeps a refusal for a minute (cacheTTL in istio
   * pilot/pkg/credentials/kube/secrets.go), so a Gateway made first leaves the port without its
   * certificate for that long (seen on the real node).
   */
  private gateway(p: Plan, sdsAccess: pulumi.Resource[]): void {
    const { args, port, ns, gw, tls } = p;
    new k8s.apiextensions.CustomResource(
      gw,
      {
        apiVersion: "networking.istio.io/v1",
        kind: "Gateway",
        metadata: p.meta(gw),
        spec: {
          selector: p.selector,
          servers: [
            tls
              ? {
                  port: { number: port, name: CONNECT_PORT_NAME, protocol: "HTTPS" },
                  hosts: [args.hostname ?? "*"],
                  tls: { mode: "SIMPLE", credentialName: args.tls!.credentialName, minProtocolVersion: "TLSV1_2" },
                }
              : {
                  // A host no VirtualService binds: the server exists only so Istio opens the port.
                  port: { number: port, name: CONNECT_PORT_NAME, protocol: "HTTP" },
                  hosts: [`${ns}/${gw}.connect.invalid`],
                },
          ],
        },
      },
      withDependencies(p.child, sdsAccess),
    );
  }

  /** The listener-level EnvoyFilter (connectFilterSpec): made once, never changed by a workspace. */
  private connectFilter(p: Plan, filterName: string): void {
    new k8s.apiextensions.CustomResource(
      filterName,
      {
        apiVersion: "networking.istio.io/v1alpha3",
        kind: "EnvoyFilter",
        metadata: p.meta(filterName),
        spec: connectFilterSpec(p.selector, p.port),
      },
      p.child,
    );
  }

  /**
   * monitoring: the PodMonitor of the proxy's Envoy statistics and the PrometheusRule, when asked.
   * The Service carries only the CONNECT port, so a PodMonitor scrapes the pods by the name the
   * Deployment gives port 15090, http-envoy-prom, at Envoy's /stats/prometheus (the path Istio's
   * own prometheus-operator example scrapes: istio samples/addons/extras/prometheus-operator.yaml).
   */
  private monitoring(p: Plan): void {
    const monitoring = p.args.monitoring;
    scrapeMonitor(
      `${p.name}-connect-gateway-podmonitor`,
      "PodMonitor",
      monitoring?.serviceMonitor,
      p.meta(p.gw),
      p.selector,
      { port: "http-envoy-prom", path: "/stats/prometheus" },
      p.child,
    );
    prometheusRule(
      `${p.name}-connect-gateway-rules`,
      monitoring?.prometheusRule,
      p.meta(p.gw),
      "entryway-connect-gateway",
      connectGatewayAlerts(p.ns),
      p.child,
    );
  }

  /** Admit CONNECT on the port only, from allowedSourceRanges when given. */
  private authorizationPolicy(p: Plan): void {
    const { args, port } = p;
    const cidrs = args.allowedSourceRanges ?? [];
    new k8s.apiextensions.CustomResource(
      p.gw,
      {
        apiVersion: "security.istio.io/v1",
        kind: "AuthorizationPolicy",
        metadata: p.meta(p.gw),
        spec: {
          selector: { matchLabels: p.selector },
          action: "ALLOW",
          rules: [
            {
              ...(cidrs.length > 0 ? { from: [{ source: { remoteIpBlocks: cidrs } }] } : {}),
              to: [{ operation: { methods: ["CONNECT"], ports: [String(port)] } }],
            },
          ],
        },
      },
      p.child,
    );
  }
}
