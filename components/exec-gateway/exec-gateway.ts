/**
 * ExecGateway: the exec gateway service (gateway/) on Kubernetes. A non-root Deployment behind a
 * ClusterIP Service, its own ServiceAccount with least-privilege RBAC (exec into pods only in
 * the namespaces it may enter), the authorizer's settings (secrets from Secrets), a PDB, an
 * optional HPA, a NetworkPolicy, and optional WebSocket exposure with TLS through an Istio
 * Gateway + VirtualService or an Ingress.
 *
 * The chart's templates/exec-gateway/ make the same objects with the same names and specs; the
 * parity test (test/parity) keeps the two front ends equal.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { standardLabels, selectorLabels } from "../shared/labels";
import { imageReference } from "../shared/image";
import { execGatewayAlerts, prometheusRule, scrapeMonitor } from "../shared/monitoring";
import { objectName, serviceFqdn } from "../shared/names";
import { dnsEgressRule } from "../shared/network";
import type { SecretKeyRef } from "../shared/secret";
import { httpGetProbe, podMetadata, podPlacement } from "../shared/pod";
import { restrictedContainerSecurityContext, restrictedPodSecurityContext } from "../shared/security";
import { configChecksums, helmToJson } from "../shared/config-file";
import type { ConfigMapKeyRef, ExecGatewayArgs, ExecGatewayRecordingsS3Args } from "./args";
import {
  DEBUG_RULE,
  EXEC_GATEWAY_CA_DIR,
  EXEC_GATEWAY_CA_FILE,
  EXEC_GATEWAY_CONFIG_DIR,
  EXEC_GATEWAY_CONFIG_FILE,
  EXEC_GATEWAY_IMAGE,
  EXEC_GATEWAY_METRICS_PORT,
  EXEC_GATEWAY_PATH,
  EXEC_GATEWAY_PORT,
  EXEC_GATEWAY_PUBLIC_PATHS,
  EXEC_GATEWAY_RECORD_DIR,
  EXEC_GATEWAY_RECORDING_PATHS,
  EXEC_RULES,
  REVIEW_RULES,
} from "./contract";
import { execGatewayConfig, gatewayEnv, webhookUrl } from "./settings";
import { ownNamespaceProblems, throwProblems, validateExecGatewayArgs } from "./validate";

const DEFAULT_RESOURCES = {
  requests: { cpu: "50m", memory: "64Mi" },
  limits: { memory: "256Mi" },
};

/** The ConfigMap key the gateway's CA bundle comes from: the one made for caBundle, or existingCaConfigMap; none without either. */
function caSource(name: string, args: ExecGatewayArgs): ConfigMapKeyRef | undefined {
  if (args.caBundle !== undefined) return { name: objectName(name, "exec-gateway-ca"), key: EXEC_GATEWAY_CA_FILE };
  return args.existingCaConfigMap;
}

/** The egress port of an S3 endpoint that is not on 443 (an S3-compatible server in or near the cluster). */
function recordingsEgress(s3: ExecGatewayRecordingsS3Args | undefined): { port: number; protocol: string }[] {
  const port = s3?.endpoint ? Number(new URL(s3.endpoint).port || 443) : 443;
  return port === 443 || port === 6443 ? [] : [{ port, protocol: "TCP" }];
}

/** What every step of the constructor shares: the gateway's names, labels and namespace. */
interface GatewayObjects {
  /** The component's name: the prefix of every logical name. */
  name: string;
  args: ExecGatewayArgs;
  /** The objects' name (entryway.execGateway.fullname in the chart). */
  fullName: string;
  labels: Record<string, string>;
  selector: Record<string, string>;
  namespace: pulumi.Output<string>;
  metadata: (objectName: string) => { name: string; namespace: pulumi.Output<string>; labels: Record<string, string> };
  /** Where recordings go: the volume's claim, if any (the chart's entryway.execGateway.recordingsSink). */
  recordingsClaim: string | undefined;
}

// The constructor reads like the chart: one step per file of charts/entryway/templates/exec-gateway/
// (serviceAccount, rbac, secret, configMap, service, pvc, caConfigMap, deployment, pdb, hpa, networkPolicy,
// exposure), each a private method making that file's objects with the same logical names and
// `parent: this`, so no URN depends on how the constructor is laid out.
/**
 * The exec gateway: a shell in a running container over one WebSocket, each session checked by
 * its authorizer (Kubernetes RBAC, a webhook or OIDC) and allowed only into `targetNamespaces`.
 * Deploys the gateway's Deployment, Service, RBAC, settings document, NetworkPolicy and, when
 * asked, its exposure (Istio or Ingress), recordings volume or bucket, autoscaling and debug
 * containers. Outputs its in-cluster and public URLs.
 */
export class ExecGateway extends pulumi.ComponentResource {
  /** The namespace the gateway runs in. */
  public readonly namespace: pulumi.Output<string>;
  /** The gateway's Service name. */
  public readonly serviceName: pulumi.Output<string>;
  /** The in-cluster WebSocket URL (ws://<svc>.<ns>.svc.cluster.local/v1/enter). */
  public readonly internalUrl: pulumi.Output<string>;
  /** The public WebSocket URL (wss://<host>/v1/enter) when exposed, else the internal URL. */
  public readonly url: pulumi.Output<string>;
  /** The ServiceAccount the gateway runs as. */
  public readonly serviceAccountName: pulumi.Output<string>;
  /** The namespaces it may enter (empty with clusterWide). */
  public readonly targetNamespaces: pulumi.Output<string[]>;

  constructor(name: string, args: ExecGatewayArgs, opts?: pulumi.ComponentResourceOptions) {
    super("entryway:index:ExecGateway", name, {}, opts);
    validateExecGatewayArgs(name, args, this);
    // A namespace known only at deployment time is checked once it is known.
    if (typeof args.namespace !== "string") {
      pulumi
        .output(args.namespace)
        .apply((ns) => throwProblems(name, ownNamespaceProblems(ns, args.targetNamespaces ?? []), this));
    }
    const fullName = objectName(name, "exec-gateway");
    const identity = { name: "exec-gateway", instance: name, component: "server" };
    const labels = standardLabels(identity, args.labels);
    const namespace = pulumi.output(args.namespace);
    const gateway: GatewayObjects = {
      name,
      args,
      fullName,
      labels,
      selector: selectorLabels(identity),
      namespace,
      metadata: (objectNameValue) => ({ name: objectNameValue, namespace, labels }),
      // A volume only for the volume sink; the S3 sink needs none.
      recordingsClaim: args.recordings && !args.recordings.s3 ? objectName(name, "exec-gateway-recordings") : undefined,
    };

    const serviceAccount = this.serviceAccount(gateway);
    this.rbac(gateway);
    const webhookSecret = this.secret(gateway);
    const config = this.configMap(gateway);
    const service = this.service(gateway);
    this.pvc(gateway);
    const caConfigMap = this.caConfigMap(gateway);
    this.deployment(gateway, config, webhookSecret, caConfigMap);
    this.pdb(gateway);
    this.hpa(gateway);
    this.networkPolicy(gateway);
    this.exposure(gateway);
    this.monitoring(gateway);

    this.namespace = namespace;
    this.serviceName = service.metadata.name;
    this.serviceAccountName = serviceAccount.metadata.name;
    this.internalUrl = namespace.apply((ns) => `ws://${serviceFqdn(fullName, ns)}${EXEC_GATEWAY_PATH}`);
    this.url = args.exposure ? pulumi.output(`wss://${args.exposure.host}${EXEC_GATEWAY_PATH}`) : this.internalUrl;
    this.targetNamespaces = pulumi.output(args.targetNamespaces ?? []);
    this.registerOutputs({
      namespace: this.namespace,
      serviceName: this.serviceName,
      serviceAccountName: this.serviceAccountName,
      internalUrl: this.internalUrl,
      url: this.url,
      targetNamespaces: this.targetNamespaces,
    });
  }

  /** serviceaccount.yaml: the identity the gateway execs with. */
  private serviceAccount({ name, args, fullName, metadata }: GatewayObjects): k8s.core.v1.ServiceAccount {
    return new k8s.core.v1.ServiceAccount(
      `${name}-exec-gateway`,
      {
        metadata: {
          ...metadata(fullName),
          ...(args.serviceAccountAnnotations ? { annotations: args.serviceAccountAnnotations } : {}),
        },
      },
      { parent: this },
    );
  }

  /**
   * rbac.yaml: exec rights as one Role + RoleBinding per namespace it may enter, a ClusterRole
   * only on request; debug containers' rule only when they are configured (least privilege); the
   * review rights of the kubernetes authorizer.
   */
  private rbac({ name, args, fullName, labels, namespace }: GatewayObjects): void {
    const subject = { kind: "ServiceAccount", name: fullName, namespace };
    const execRules = args.debugContainers ? [...EXEC_RULES, DEBUG_RULE] : EXEC_RULES;
    for (const target of args.targetNamespaces ?? []) {
      new k8s.rbac.v1.Role(
        `${name}-exec-gateway-${target}`,
        { metadata: { name: fullName, namespace: target, labels }, rules: execRules },
        { parent: this },
      );
      new k8s.rbac.v1.RoleBinding(
        `${name}-exec-gateway-${target}`,
        {
          metadata: { name: fullName, namespace: target, labels },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: fullName },
          subjects: [subject],
        },
        { parent: this },
      );
    }
    // A cluster-scoped role and its binding to the gateway's ServiceAccount.
    const clusterRole = (part: string, rules: k8s.types.input.rbac.v1.PolicyRule[]) => {
      const clusterName = namespace.apply((ns) => objectName(name, ns, part));
      new k8s.rbac.v1.ClusterRole(
        `${name}-${part}`,
        { metadata: { name: clusterName, labels }, rules },
        { parent: this },
      );
      new k8s.rbac.v1.ClusterRoleBinding(
        `${name}-${part}`,
        {
          metadata: { name: clusterName, labels },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: clusterName },
          subjects: [subject],
        },
        { parent: this },
      );
    };
    if (args.clusterWide) clusterRole("exec-gateway-exec", execRules);
    if ((args.authorizer ?? "kubernetes") === "kubernetes") clusterRole("exec-gateway-review", REVIEW_RULES);
  }

  /** secret.yaml: the webhook URL may hold a credential, so it lives in a Secret, never in the pod spec or the ConfigMap. */
  private secret({ name, args, metadata }: GatewayObjects): SecretKeyRef | undefined {
    if (args.authorizer !== "webhook") return undefined;
    if (!pulumi.Output.isInstance(args.webhook) && args.webhook?.urlSecret) return args.webhook.urlSecret;
    const webhookSecret = { name: objectName(name, "exec-gateway-auth"), key: "webhook-url" };
    new k8s.core.v1.Secret(
      `${name}-exec-gateway-auth`,
      {
        metadata: metadata(webhookSecret.name),
        type: "Opaque",
        stringData: { "webhook-url": pulumi.secret(webhookUrl(args.webhook!)) },
      },
      { parent: this },
    );
    return webhookSecret;
  }

  /** configmap.yaml: the settings document (execGatewayConfig), in the chart's bytes. */
  private configMap({ name, args, fullName, metadata }: GatewayObjects): {
    document: pulumi.Output<string>;
    configMap: k8s.core.v1.ConfigMap;
  } {
    const document = pulumi.output(execGatewayConfig(args)).apply(helmToJson);
    const configMap = new k8s.core.v1.ConfigMap(
      `${name}-exec-gateway`,
      { metadata: metadata(fullName), data: { [EXEC_GATEWAY_CONFIG_FILE]: document } },
      { parent: this },
    );
    return { document, configMap };
  }

  /** ca-configmap.yaml: the CA bundle given as caBundle (an existingCaConfigMap is the user's). */
  private caConfigMap({ name, args, metadata }: GatewayObjects): k8s.core.v1.ConfigMap | undefined {
    if (args.caBundle === undefined) return undefined;
    return new k8s.core.v1.ConfigMap(
      `${name}-exec-gateway-ca`,
      { metadata: metadata(objectName(name, "exec-gateway-ca")), data: { [EXEC_GATEWAY_CA_FILE]: args.caBundle } },
      { parent: this },
    );
  }

  /** service.yaml: the public port and the metrics port, in-cluster. */
  private service({ name, fullName, selector, metadata }: GatewayObjects): k8s.core.v1.Service {
    return new k8s.core.v1.Service(
      `${name}-exec-gateway`,
      {
        metadata: metadata(fullName),
        spec: {
          type: "ClusterIP",
          selector,
          ports: [
            { name: "http", port: 80, targetPort: "http", protocol: "TCP", appProtocol: "http" },
            {
              name: "metrics",
              port: EXEC_GATEWAY_METRICS_PORT,
              targetPort: "metrics",
              protocol: "TCP",
              appProtocol: "http",
            },
          ],
        },
      },
      { parent: this },
    );
  }

  /** monitoring.yaml: the ServiceMonitor of the metrics port and the PrometheusRule, when asked. */
  private monitoring({ name, args, fullName, selector, namespace, metadata }: GatewayObjects): void {
    const opts = { parent: this };
    scrapeMonitor(
      `${name}-exec-gateway-servicemonitor`,
      "ServiceMonitor",
      args.monitoring?.serviceMonitor,
      metadata(fullName),
      selector,
      { port: "metrics", path: "/metrics" },
      opts,
    );
    // A ServiceMonitor's targets get the Service's name as their job label (prometheus-operator
    // ServiceMonitorSpec.jobLabel: "the name of the Kubernetes Service" by default).
    prometheusRule(
      `${name}-exec-gateway-rules`,
      args.monitoring?.prometheusRule,
      metadata(fullName),
      "entryway-exec-gateway",
      namespace.apply((ns) => execGatewayAlerts(fullName, ns)),
      opts,
    );
  }

  /** pvc.yaml: the recordings volume, for the volume sink only. */
  private pvc({ name, args, metadata, recordingsClaim }: GatewayObjects): void {
    const recordings = args.recordings;
    if (!recordings || !recordingsClaim) return;
    new k8s.core.v1.PersistentVolumeClaim(
      `${name}-exec-gateway-recordings`,
      {
        metadata: metadata(recordingsClaim),
        spec: {
          accessModes: [recordings.accessMode ?? "ReadWriteOnce"],
          ...(recordings.storageClassName ? { storageClassName: recordings.storageClassName } : {}),
          resources: { requests: { storage: recordings.size ?? "10Gi" } },
        },
      },
      { parent: this },
    );
  }

  /**
   * deployment.yaml: the gateway's pods, its settings document mounted read-only (a change of it
   * rolls them: checksum/config), its secrets from Secrets.
   */
  private deployment(
    { name, args, fullName, labels, selector, metadata, recordingsClaim }: GatewayObjects,
    config: { document: pulumi.Output<string>; configMap: k8s.core.v1.ConfigMap },
    webhookSecret: SecretKeyRef | undefined,
    caConfigMap: k8s.core.v1.ConfigMap | undefined,
  ): void {
    const ca = caSource(name, args);
    const singleNodeVolume =
      recordingsClaim !== undefined && (args.recordings?.accessMode ?? "ReadWriteOnce") === "ReadWriteOnce";
    new k8s.apps.v1.Deployment(
      `${name}-exec-gateway`,
      {
        metadata: metadata(fullName),
        spec: {
          ...(args.autoscaling ? {} : { replicas: args.replicas ?? 2 }),
          selector: { matchLabels: selector },
          // One pod at a time holds a ReadWriteOnce recordings volume (see ExecGatewayRecordingsArgs).
          strategy: singleNodeVolume
            ? { type: "Recreate" }
            : { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
          template: {
            // The gateway reads its settings and its CA bundle once, at start.
            metadata: podMetadata(
              labels,
              args,
              config.document.apply(
                (document) => configChecksums({ config: document, "ca-bundle": args.caBundle }).annotations ?? {},
              ),
            ),
            spec: {
              serviceAccountName: fullName,
              automountServiceAccountToken: true,
              securityContext: restrictedPodSecurityContext({ user: args.runAsUser ?? 1000 }),
              // The gateway drains open sessions for up to drainTimeoutMs (10 s) on SIGTERM.
              terminationGracePeriodSeconds: 30,
              // Replicas on different nodes where possible: a node's loss drops only its sessions.
              ...podPlacement(args, args.global, [
                {
                  maxSkew: 1,
                  topologyKey: "kubernetes.io/hostname",
                  whenUnsatisfiable: "ScheduleAnyway",
                  labelSelector: { matchLabels: selector },
                },
              ]),
              containers: [
                {
                  name: "gateway",
                  image: imageReference(EXEC_GATEWAY_IMAGE, args.image, args.global),
                  imagePullPolicy: "IfNotPresent",
                  args: ["serve"],
                  ports: [
                    { name: "http", containerPort: EXEC_GATEWAY_PORT, protocol: "TCP" },
                    { name: "metrics", containerPort: EXEC_GATEWAY_METRICS_PORT, protocol: "TCP" },
                  ],
                  env: [
                    ...gatewayEnv(args, webhookSecret),
                    // Node reads it at start: the public roots plus these (nodejs doc/api/cli.md,
                    // NODE_EXTRA_CA_CERTS), for https.request (the S3 client) and fetch alike.
                    ...(ca
                      ? [{ name: "NODE_EXTRA_CA_CERTS", value: `${EXEC_GATEWAY_CA_DIR}/${EXEC_GATEWAY_CA_FILE}` }]
                      : []),
                  ],
                  // The kubelet probes from the node, which a NetworkPolicy always lets through
                  // (kubernetes/website content/en/docs/concepts/services-networking/network-policies.md).
                  livenessProbe: httpGetProbe("/healthz", "http", {
                    periodSeconds: 10,
                    timeoutSeconds: 2,
                    failureThreshold: 3,
                  }),
                  readinessProbe: httpGetProbe("/readyz", "metrics", {
                    periodSeconds: 5,
                    timeoutSeconds: 3,
                    failureThreshold: 2,
                  }),
                  resources: args.resources ?? DEFAULT_RESOURCES,
                  securityContext: restrictedContainerSecurityContext(),
                  volumeMounts: [
                    { name: "tmp", mountPath: "/tmp" },
                    { name: "config", mountPath: EXEC_GATEWAY_CONFIG_DIR, readOnly: true },
                    ...(recordingsClaim ? [{ name: "recordings", mountPath: EXEC_GATEWAY_RECORD_DIR }] : []),
                    ...(ca ? [{ name: "ca", mountPath: EXEC_GATEWAY_CA_DIR, readOnly: true }] : []),
                  ],
                },
              ],
              volumes: [
                { name: "tmp", emptyDir: { sizeLimit: "64Mi" } },
                { name: "config", configMap: { name: fullName } },
                ...(recordingsClaim
                  ? [{ name: "recordings", persistentVolumeClaim: { claimName: recordingsClaim } }]
                  : []),
                // Only the bundle's key, as EXEC_GATEWAY_CA_FILE, whatever the existing ConfigMap calls it.
                ...(ca
                  ? [{ name: "ca", configMap: { name: ca.name, items: [{ key: ca.key, path: EXEC_GATEWAY_CA_FILE }] } }]
                  : []),
              ],
            },
          },
        },
      },
      // New pods read the document once, at start: it is written before the Deployment rolls them.
      { parent: this, dependsOn: caConfigMap ? [config.configMap, caConfigMap] : [config.configMap] },
    );
  }

  /** pdb.yaml: one pod down at a time. */
  private pdb({ name, fullName, selector, metadata }: GatewayObjects): void {
    new k8s.policy.v1.PodDisruptionBudget(
      `${name}-exec-gateway`,
      { metadata: metadata(fullName), spec: { maxUnavailable: 1, selector: { matchLabels: selector } } },
      { parent: this },
    );
  }

  /** hpa.yaml: CPU autoscaling, only when asked for. */
  private hpa({ name, args, fullName, metadata }: GatewayObjects): void {
    if (!args.autoscaling) return;
    new k8s.autoscaling.v2.HorizontalPodAutoscaler(
      `${name}-exec-gateway`,
      {
        metadata: metadata(fullName),
        spec: {
          scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: fullName },
          minReplicas: args.autoscaling.minReplicas,
          maxReplicas: args.autoscaling.maxReplicas,
          metrics: [
            {
              type: "Resource",
              resource: {
                name: "cpu",
                target: {
                  type: "Utilization",
                  averageUtilization: args.autoscaling.targetCPUUtilizationPercentage ?? 70,
                },
              },
            },
          ],
        },
      },
      { parent: this },
    );
  }

  /**
   * networkpolicy.yaml. In: the gateway port only from the ingress side, the metrics port only from
   * the monitoring namespace. Out: DNS, and HTTPS to the API server / webhook / OIDC issuer / S3.
   */
  private networkPolicy({ name, args, fullName, selector, metadata }: GatewayObjects): void {
    const ingressNamespace = args.ingressNamespace ?? "istio-system";
    const monitoringNamespace = args.monitoringNamespace ?? "monitoring";
    new k8s.networking.v1.NetworkPolicy(
      `${name}-exec-gateway`,
      {
        metadata: metadata(fullName),
        spec: {
          podSelector: { matchLabels: selector },
          policyTypes: ["Ingress", "Egress"],
          ingress: [
            {
              from: args.allowFrom ?? [
                { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": ingressNamespace } } },
              ],
              ports: [{ port: "http", protocol: "TCP" }],
            },
            {
              from: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": monitoringNamespace } } }],
              ports: [{ port: "metrics", protocol: "TCP" }],
            },
          ],
          egress: [
            dnsEgressRule(args.dns),
            {
              ports: [
                { port: 443, protocol: "TCP" },
                { port: 6443, protocol: "TCP" },
                ...recordingsEgress(args.recordings?.s3),
              ],
            },
          ],
        },
      },
      { parent: this },
    );
  }

  /** exposure.yaml: the public paths through an Istio Gateway and VirtualService, or an Ingress, with TLS. */
  private exposure({ name, args, fullName, metadata, namespace }: GatewayObjects): void {
    const exposure = args.exposure;
    const publicPaths = [...EXEC_GATEWAY_PUBLIC_PATHS, ...(args.recordings ? EXEC_GATEWAY_RECORDING_PATHS : [])];
    if (exposure?.kind === "istio") {
      new k8s.apiextensions.CustomResource(
        `${name}-exec-gateway-gw`,
        {
          apiVersion: "networking.istio.io/v1",
          kind: "Gateway",
          metadata: metadata(fullName),
          spec: {
            selector: exposure.istioSelector ?? { istio: "ingressgateway" },
            servers: [
              {
                port: { number: 443, name: "https-exec-gateway", protocol: "HTTPS" },
                hosts: [exposure.host],
                tls: { mode: "SIMPLE", credentialName: exposure.tlsSecretName, minProtocolVersion: "TLSV1_2" },
              },
            ],
          },
        },
        { parent: this },
      );
      new k8s.apiextensions.CustomResource(
        `${name}-exec-gateway-vs`,
        {
          apiVersion: "networking.istio.io/v1",
          kind: "VirtualService",
          metadata: metadata(fullName),
          spec: {
            hosts: [exposure.host],
            gateways: [fullName],
            http: [
              {
                name: "exec-gateway",
                match: publicPaths.map(({ path, match }) => ({ uri: { [match]: path } })),
                route: [
                  { destination: { host: namespace.apply((ns) => serviceFqdn(fullName, ns)), port: { number: 80 } } },
                ],
                // Shell sessions are long-lived WebSockets: no route timeout, which is istiod's default
                // when `timeout` is absent (pilot/pkg/networking/core/route/route.go, setTimeout:
                // Notimeout, 0s). `timeout: 0s` itself is refused by Istio's validation
                // (pkg/config/validation/virtualservice.go with agent.ValidateDuration: "duration
                // must be greater than 1ms"), so the webhook would reject the VirtualService.
              },
            ],
          },
        },
        { parent: this },
      );
    } else if (exposure?.kind === "ingress") {
      new k8s.networking.v1.Ingress(
        `${name}-exec-gateway`,
        {
          metadata: { ...metadata(fullName), ...(exposure.annotations ? { annotations: exposure.annotations } : {}) },
          spec: {
            ...(exposure.ingressClassName ? { ingressClassName: exposure.ingressClassName } : {}),
            tls: [{ hosts: [exposure.host], secretName: exposure.tlsSecretName }],
            rules: [
              {
                host: exposure.host,
                http: {
                  paths: publicPaths.map(({ path, match }) => ({
                    path,
                    pathType: match === "exact" ? "Exact" : "Prefix",
                    backend: { service: { name: fullName, port: { name: "http" } } },
                  })),
                },
              },
            ],
          },
        },
        { parent: this },
      );
    }
  }
}
