/**
 * RemoteRte: an outbound RTE that dials the AnsibleForms app from anywhere (another namespace,
 * cluster or Pulumi provider). RTE_MODE=outbound, the app's URL, the token from a Secret, a CA
 * bundle to verify the app's certificate; N replicas, each with its own spool volume (a
 * StatefulSet), and time to drain on stop. It accepts no connections but Prometheus's, when
 * metrics are on.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import * as random from "@pulumi/random";
import { selectorLabels, standardLabels } from "../shared/labels";
import type { GlobalSettings } from "../shared/image";
import { objectName, statefulSetName } from "../shared/names";
import { dnsEgressRule, type InClusterPeer, type NetworkPolicyEgressRule } from "../shared/network";
import { podMetadata, podPlacement, type PodSettings } from "../shared/pod";
import { restrictedContainerSecurityContext, restrictedPodSecurityContext } from "../shared/security";
import {
  CA_DIR,
  CA_FILE,
  checkedToken,
  configChecksums,
  DEFAULT_TAG,
  bearerFrom,
  ANSIBLEFORMS_SECRET_KEYS,
  monitoringPeer,
  NODE_UID,
  RTE_PORT,
  rteContainer,
  rteSettingsProblems,
  terminationGraceSeconds,
  tokenProblems,
  urlEgress,
  type MetricsSettings,
  type RteContainerSpec,
  type RteSettings,
} from "./common";

/**
 * The settings RemoteRteSettings (the stack config) and RemoteRteArgs share: all but appUrl, token
 * and caBundle, plain strings in config and Inputs in args. A base interface, not Omit<>: Pulumi's
 * component analyzer loses the types and doc comments of a mapped type's properties.
 */
export interface RemoteRteBaseSettings extends RteSettings, PodSettings {
  /**
   * Replicas, each with its own spool (default 1).
   * @minimum 1
   * @maximum 50
   * @asType integer
   */
  replicas?: number;
  /**
   * An existing Secret (key "token") holding the app's RTE token.
   * @pattern ^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)?$
   */
  existingTokenSecret?: string;
  /**
   * An existing ConfigMap with key ca.crt, instead of caBundle.
   * @pattern ^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)?$
   */
  existingCaConfigMap?: string;
  /**
   * The variable the outbound RTE reads the app's URL from (default RTE_APP_URL, an assumption:
   * docs/ansibleforms.md, "Assumptions to check"); change it here if your release names it otherwise.
   * @pattern ^[A-Za-z_][A-Za-z0-9_]*$
   */
  appUrlEnv?: string;
  /** Prometheus scraping of the RTE with a METRICS_TOKEN of its own, never the app's (off by default). */
  metrics?: MetricsSettings;
  /** Where the RTE may connect besides DNS and the app's URL: the hosts its playbooks manage. Default: nowhere else. */
  allowEgressTo?: NetworkPolicyEgressRule[];
  /**
   * Let appUrl be plain http:// or ws:// (default false): the RTE token then crosses the network
   * unencrypted, so only for an app in the same trusted network (the dev stack's in-cluster app).
   */
  allowInsecureAppUrl?: boolean;
}

/** The settings of an outbound RTE: plain values, known at preview. */
export interface RemoteRteSettings extends RemoteRteBaseSettings {
  /** The app's URL the RTE dials (https://... in another network; its certificate is verified). */
  appUrl: string;
  /**
   * The token (at least 16 characters), when no existing Secret is named; set it as a secret.
   * A Secret is made for it.
   */
  token?: string;
  /** PEM CA bundle that signed the app's certificate (a ConfigMap is made; NODE_EXTRA_CA_CERTS). */
  caBundle?: string;
}

/** The arguments of a RemoteRte. */
export interface RemoteRteArgs extends RemoteRteBaseSettings {
  /** PEM CA bundle that signed the app's certificate, e.g. another stack's output ansibleFormsCaBundle. */
  caBundle?: pulumi.Input<string>;
  /** The app's URL the RTE dials. */
  appUrl: pulumi.Input<string>;
  /** The token (at least 16 characters); pass a secret. Needed unless existingTokenSecret is set. */
  token?: pulumi.Input<string>;
  /** The namespace the RTE runs in. */
  namespace: pulumi.Input<string>;
  /** Labels added to every object. */
  labels?: Record<string, string>;
  /** The global image registry (a mirror) and pull secrets. */
  global?: GlobalSettings;
  /** The cluster DNS its pods may ask (default: kube-dns in kube-system; the Stack passes networkPolicy.dns). */
  dns?: InClusterPeer;
}

/** Why `appUrl` may not be used: plain http:// or ws:// would send the RTE token in clear, unless allowed. */
function insecureAppUrl(appUrl: string, allowed: boolean | undefined): string[] {
  if (allowed || !/^(http|ws):\/\//i.test(appUrl)) return [];
  return [
    `appUrl ${JSON.stringify(appUrl)} is plain ${appUrl.split(":")[0]}: the RTE token would cross the network unencrypted; use https (or set allowInsecureAppUrl: true for an app in the same trusted network)`,
  ];
}

/** Every input mistake known at preview, one line each naming `where` (an appUrl Output is checked once known). */
function settingsProblems(args: RemoteRteArgs, where: string): string[] {
  const problems: string[] = [];
  if (args.appUrl === undefined || args.appUrl === "")
    problems.push("appUrl is required: an outbound RTE dials the app");
  if (typeof args.appUrl === "string" && args.appUrl !== "" && !/^(https?|wss?):\/\/[^/\s]+/.test(args.appUrl)) {
    problems.push(`appUrl ${JSON.stringify(args.appUrl)} is not an http(s) URL`);
  }
  if (typeof args.appUrl === "string") problems.push(...insecureAppUrl(args.appUrl, args.allowInsecureAppUrl));
  if (args.files === "local")
    problems.push('files "local" needs the app\'s disk; an outbound RTE cannot share it (use "transfer")');
  if (!args.existingTokenSecret && args.token === undefined)
    problems.push("a token or an existingTokenSecret is required");
  if (args.existingTokenSecret && args.token !== undefined)
    problems.push("give a token or an existingTokenSecret, not both");
  if (args.caBundle && args.existingCaConfigMap) problems.push("give a caBundle or an existingCaConfigMap, not both");
  const mode = (args as { mode?: unknown }).mode;
  if (mode !== undefined && mode !== "outbound")
    problems.push(`mode ${JSON.stringify(mode)} is unknown: a RemoteRte is outbound`);
  return [
    ...problems.map((problem) => `${where}: ${problem}`),
    ...rteSettingsProblems(args, where),
    ...tokenProblems(args.token, where),
  ];
}

/** The names and labels every step shares (the chart's remote-rte.yaml head), and the RTE container. Pure. */
interface Plan {
  readonly name: string;
  readonly args: RemoteRteArgs;
  readonly ns: pulumi.Input<string>;
  readonly base: string;
  readonly identity: { name: string; instance: string; component: string };
  readonly labels: Record<string, string>;
  readonly tokenSecret: string;
  readonly metrics?: MetricsSettings;
  readonly metricsSecret?: string;
  readonly caConfigMap?: string;
  readonly ansibleCfgConfigMap?: string;
  readonly spec: RteContainerSpec;
}

function plan(name: string, args: RemoteRteArgs): Plan {
  const tag = args.image?.tag || DEFAULT_TAG;
  const base = statefulSetName(name, "remote-rte");
  const identity = { name: "ansibleforms-rte", instance: name, component: "rte" };
  const tokenSecret = args.existingTokenSecret || objectName(base, "token");
  // Metrics: a token of the RTE's own (never the app's: docs/ansibleforms.md, "Metrics").
  const metrics = args.metrics?.enabled ? args.metrics : undefined;
  const metricsSecret = metrics && (metrics.existingSecret || objectName(base, "metrics"));
  const caConfigMap = args.caBundle ? objectName(base, "ca") : args.existingCaConfigMap;
  const ansibleCfgConfigMap = args.ansibleCfg ? objectName(base, "ansible-cfg") : undefined;
  const spec = rteContainer({
    settings: args,
    defaultTag: tag,
    global: args.global,
    port: RTE_PORT,
    mode: "outbound",
    token: { name: tokenSecret, key: ANSIBLEFORMS_SECRET_KEYS.rteToken },
    metricsSecret,
    ansibleCfgConfigMap,
    extraEnv: [
      { name: args.appUrlEnv || "RTE_APP_URL", value: args.appUrl },
      ...(caConfigMap ? [{ name: "NODE_EXTRA_CA_CERTS", value: `${CA_DIR}/${CA_FILE}` }] : []),
    ],
    extraMounts: caConfigMap ? [{ name: "rte-ca", mountPath: CA_DIR, readOnly: true }] : [],
    securityContext: restrictedContainerSecurityContext({ runAs: { user: NODE_UID } }),
  });
  return {
    name,
    args,
    ns: args.namespace,
    base,
    identity,
    labels: standardLabels({ ...identity, version: tag }, args.labels),
    tokenSecret,
    metrics,
    metricsSecret,
    caConfigMap,
    ansibleCfgConfigMap,
    spec,
  };
}

// RemoteRte, made in the order of the chart's templates/ansibleforms/remote-rte.yaml: its Secrets
// and ConfigMaps (config), the StatefulSet, the NetworkPolicy and the PodMonitor. Every problem
// known at preview is reported at once, before any object is made.
/**
 * An outbound AnsibleForms RTE runner in another namespace or network: a StatefulSet that dials the
 * app (`appUrl`) with the app's RTE token, and the NetworkPolicy that lets it out to the app only.
 */
export class RemoteRte extends pulumi.ComponentResource {
  /** The StatefulSet's name. */
  public readonly statefulSetName: pulumi.Output<string>;
  /** The Secret holding the token. */
  public readonly tokenSecretName: pulumi.Output<string>;
  /** Replicas running. */
  public readonly replicas: number;

  constructor(name: string, args: RemoteRteArgs, opts?: pulumi.ComponentResourceOptions) {
    super("entryway:index:RemoteRte", name, {}, opts);
    const where = `RemoteRte ${name}`;
    const p = plan(name, args);
    const problems = [...settingsProblems(args, where), ...p.spec.problems.map((problem) => `${where}: ${problem}`)];
    if (problems.length > 0) throw new pulumi.ResourceError(problems.join("\n"), this);
    // An appUrl known only at deployment is checked once it is known.
    if (args.appUrl !== undefined && typeof args.appUrl !== "string") {
      pulumi.output(args.appUrl).apply((url) => {
        const insecure = insecureAppUrl(url, args.allowInsecureAppUrl);
        if (insecure.length > 0)
          throw new pulumi.ResourceError(insecure.map((problem) => `${where}: ${problem}`).join("\n"), this);
      });
    }
    const token = args.token !== undefined ? checkedToken(args.token, where, this) : undefined;
    this.replicas = args.replicas ?? 1;

    this.config(p, token);
    this.tokenSecretName = pulumi.output(p.tokenSecret);
    this.statefulSetName = this.statefulSet(p);
    this.networkPolicy(p);
    this.monitoring(p);

    this.registerOutputs({
      statefulSetName: this.statefulSetName,
      tokenSecretName: this.tokenSecretName,
      replicas: this.replicas,
    });
  }

  /** The token and METRICS_TOKEN Secrets unless existing ones are named, the CA bundle's and ansible.cfg's ConfigMaps. */
  private config(p: Plan, token: pulumi.Output<string> | undefined): void {
    const { name, args, ns, labels } = p;
    const child = { parent: this };
    if (!args.existingTokenSecret) {
      new k8s.core.v1.Secret(
        `${name}-token`,
        {
          metadata: { name: p.tokenSecret, namespace: ns, labels },
          type: "Opaque",
          stringData: { [ANSIBLEFORMS_SECRET_KEYS.rteToken]: token! },
        },
        child,
      );
    }
    if (p.metrics && !p.metrics.existingSecret) {
      const value = new random.RandomPassword(`${name}-metrics-token`, { length: 32, special: false }, child).result;
      new k8s.core.v1.Secret(
        `${name}-metrics`,
        {
          metadata: { name: p.metricsSecret, namespace: ns, labels },
          type: "Opaque",
          stringData: { [ANSIBLEFORMS_SECRET_KEYS.metricsToken]: value },
        },
        child,
      );
    }
    if (args.caBundle) {
      new k8s.core.v1.ConfigMap(
        `${name}-ca`,
        { metadata: { name: p.caConfigMap, namespace: ns, labels }, data: { [CA_FILE]: args.caBundle } },
        child,
      );
    }
    if (args.ansibleCfg) {
      new k8s.core.v1.ConfigMap(
        `${name}-ansible-cfg`,
        { metadata: { name: p.ansibleCfgConfigMap, namespace: ns, labels }, data: { "ansible.cfg": args.ansibleCfg } },
        child,
      );
    }
  }

  /** The replicas, each with its own spool. */
  private statefulSet(p: Plan): pulumi.Output<string> {
    const { name, args, ns, labels, base } = p;
    const volumes = [
      ...p.spec.volumes,
      ...(p.caConfigMap ? [{ name: "rte-ca", configMap: { name: p.caConfigMap } }] : []),
    ];
    // A caBundle from another stack is an Output: its checksum is known once the value is.
    const caBundle = args.caBundle;
    const checksums =
      caBundle === undefined || typeof caBundle === "string"
        ? configChecksums({ "ansible-cfg": args.ansibleCfg, "ca-bundle": caBundle }).annotations
        : pulumi
            .output(caBundle)
            .apply((ca) => configChecksums({ "ansible-cfg": args.ansibleCfg, "ca-bundle": ca }).annotations ?? {});
    const statefulSet = new k8s.apps.v1.StatefulSet(
      `${name}-statefulset`,
      {
        metadata: { name: base, namespace: ns, labels },
        spec: {
          serviceName: base,
          replicas: this.replicas,
          // Replicas are independent runners: start and stop them together, not one by one.
          podManagementPolicy: "Parallel",
          selector: { matchLabels: selectorLabels(p.identity) },
          template: {
            // An existing CA ConfigMap is not ours to read: only a caBundle given here is hashed.
            metadata: podMetadata(labels, args, checksums),
            spec: {
              automountServiceAccountToken: false,
              enableServiceLinks: false,
              ...podPlacement(args, args.global),
              securityContext: restrictedPodSecurityContext({ user: NODE_UID }),
              terminationGracePeriodSeconds: terminationGraceSeconds(args),
              containers: [p.spec.container],
              volumes,
            },
          },
          // Each replica keeps its own spool: what the app has not acknowledged survives a restart.
          volumeClaimTemplates: [
            {
              metadata: { name: "rte-spool", labels },
              spec: {
                accessModes: ["ReadWriteOnce"],
                ...(args.storageClassName ? { storageClassName: args.storageClassName } : {}),
                resources: { requests: { storage: args.spoolSize ?? "1Gi" } },
              },
            },
          ],
        },
      },
      { parent: this },
    );
    return statefulSet.metadata.name;
  }

  /** In: nothing (it only dials out; probes come from the kubelet). Out: DNS, the app's URL, allowEgressTo. */
  private networkPolicy(p: Plan): void {
    const { args, metrics } = p;
    const egress = pulumi
      .output(args.appUrl)
      .apply((url) => [dnsEgressRule(args.dns), urlEgress(url), ...(args.allowEgressTo ?? [])]);
    new k8s.networking.v1.NetworkPolicy(
      `${p.name}-netpol`,
      {
        metadata: { name: p.base, namespace: p.ns, labels: p.labels },
        spec: {
          podSelector: { matchLabels: selectorLabels(p.identity) },
          policyTypes: ["Ingress", "Egress"],
          // Only Prometheus, when metrics are on, on the RTE's port.
          ingress: metrics ? [{ from: [monitoringPeer(metrics)], ports: [{ port: RTE_PORT, protocol: "TCP" }] }] : [],
          egress,
        },
      },
      { parent: this },
    );
  }

  /** No Service fronts the replicas: a PodMonitor scrapes each pod by its port name (as the sidecar's). */
  private monitoring(p: Plan): void {
    if (!p.metrics?.serviceMonitor) return;
    new k8s.apiextensions.CustomResource(
      `${p.name}-podmonitor`,
      {
        apiVersion: "monitoring.coreos.com/v1",
        kind: "PodMonitor",
        metadata: { name: p.base, namespace: p.ns, labels: p.labels },
        spec: {
          selector: { matchLabels: selectorLabels(p.identity) },
          podMetricsEndpoints: [{ port: "rte", path: "/metrics", authorization: bearerFrom(p.metricsSecret!) }],
        },
      },
      { parent: this },
    );
  }
}
