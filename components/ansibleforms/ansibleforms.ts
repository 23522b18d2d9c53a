/**
 * AnsibleForms: the app (one writer: Recreate), its persistent volume, MySQL 8.4 unless an
 * external database is given, its secrets (generated with @pulumi/random unless existing Secrets
 * are named), the runner seed, and its RTE: an inbound sidecar, none in the pod (an outbound
 * RemoteRte elsewhere dials in), or the deprecated database-mode sidecar.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import * as random from "@pulumi/random";
import { selectorLabels } from "../shared/labels";
import { imageReference } from "../shared/image";
import { objectName } from "../shared/names";
import { dnsEgressRule } from "../shared/network";
import { httpGetProbe, podMetadata, podPlacement } from "../shared/pod";
import { restrictedContainerSecurityContext, restrictedPodSecurityContext } from "../shared/security";
import {
  APP_IMAGE,
  APP_PORT,
  checkedToken,
  configChecksums,
  bearerFrom,
  hostPortEgress,
  monitoringPeer,
  ANSIBLEFORMS_SECRET_KEYS,
  MYSQL_PORT,
  NODE_UID,
  PERSISTENT_PATH,
  SEED_DIR,
  SSH_PATH,
  APP_SSH_SUBPATH,
  terminationGraceSeconds,
} from "./common";
import { DATABASE_MODE_WARNING, DEPRECATION_ANNOTATION } from "./database-rte";
import { RunnerSeed } from "./runner-seed";
import type { AnsibleFormsArgs, AnsibleFormsRteMode } from "./args";
import { builtInMysql } from "./mysql";
import { plan, type Plan } from "./plan";
import { settingsProblems } from "./validate";
import { seedProblemLines } from "./runner-seed";

type Volume = k8s.types.input.core.v1.Volume;

// AnsibleForms, made in the steps the chart's templates/ansibleforms/ files are: config (the
// Secrets), mysql, seed-configmap, storage, the RTE in the pod, deployment, service (Service and
// NetworkPolicy), monitoring and the Ingress. Every problem in the settings is reported at once,
// before any object is made.
/**
 * AnsibleForms: the app with its persistent volume, the built-in MySQL 8.4 or an external
 * database, its generated or existing secrets, the seeded runner config, and its RTE runner as an
 * inbound sidecar, or none in the pod when a RemoteRte in another network dials in. Outputs its
 * URL, admin password and RTE token.
 */
export class AnsibleForms extends pulumi.ComponentResource {
  /** The app's Service. */
  public readonly serviceName: pulumi.Output<string>;
  /** The app's in-cluster URL. */
  public readonly url: pulumi.Output<string>;
  /** The Secret (key "token") holding the RTE token the app and its RTEs share. */
  public readonly rteTokenSecretName: pulumi.Output<string>;
  /** The RTE token, when generated here (secret). */
  public readonly rteToken?: pulumi.Output<string>;
  /** The CA bundle outbound RTEs trust the app's certificate with (expose.caBundle), when given. */
  public readonly caBundle?: string;
  /** The admin password, when generated here (secret). */
  public readonly adminPassword?: pulumi.Output<string>;
  /** The seed file's text. */
  public readonly seed: string;
  /** The RTE mode in use. */
  public readonly rteMode: AnsibleFormsRteMode;

  constructor(name: string, args: AnsibleFormsArgs, opts?: pulumi.ComponentResourceOptions) {
    super("entryway:index:AnsibleForms", name, {}, opts);
    const where = `AnsibleForms ${name}`;
    const p = plan(name, args);
    const problems = [
      ...settingsProblems(args, where),
      ...(p.sidecar?.problems ?? []).map((problem) => `${where}: ${problem}`),
      ...seedProblemLines(
        p.seed,
        p.appEnv.map((e) => e.name as string),
        where,
      ),
    ];
    if (problems.length > 0) throw new pulumi.ResourceError(problems.join("\n"), this);
    this.rteMode = p.mode;
    if (p.mode === "database") pulumi.log.warn(DATABASE_MODE_WARNING, this);

    const secrets = this.config(p, where);
    this.adminPassword = secrets.adminPassword;
    this.rteToken = secrets.rteToken;
    this.rteTokenSecretName = pulumi.output(p.tokenSecret);
    if (p.dbSecret !== undefined) this.mysql(p);
    const seed = this.seedConfigMap(p);
    this.seed = seed.content;
    this.storage(p);
    this.rteInPod(p);
    this.deployment(p, seed.configMapName);
    this.serviceName = this.service(p);
    this.url = pulumi.interpolate`http://${p.appName}.${p.ns}.svc.cluster.local:${APP_PORT}`;
    this.monitoring(p);
    this.caBundle = args.expose?.caBundle;
    this.ingress(p);

    this.registerOutputs({
      serviceName: this.serviceName,
      url: this.url,
      rteTokenSecretName: this.rteTokenSecretName,
      rteToken: this.rteToken,
      adminPassword: this.adminPassword,
      caBundle: this.caBundle,
      seed: this.seed,
    });
  }

  /** A generated password (a secret output, never in plain config). */
  private password(name: string, part: string, length: number): pulumi.Output<string> {
    return new random.RandomPassword(`${name}-${part}`, { length, special: false }, { parent: this }).result;
  }

  /**
   * config.yaml: the Secrets not named in existingSecrets, generated here: the app's keys, the RTE
   * token, the METRICS_TOKENs and the built-in MySQL's passwords.
   */
  private config(p: Plan, where: string): { adminPassword?: pulumi.Output<string>; rteToken?: pulumi.Output<string> } {
    const { name, args, ns, labels } = p;
    const child = { parent: this };
    let adminPassword: pulumi.Output<string> | undefined;
    if (!args.existingSecrets?.keys) {
      adminPassword = this.password(name, "admin-password", 24);
      new k8s.core.v1.Secret(
        `${name}-keys`,
        {
          metadata: { name: p.keysSecret, namespace: ns, labels },
          type: "Opaque",
          stringData: {
            [ANSIBLEFORMS_SECRET_KEYS.encryptionSecret]: this.password(name, "encryption-secret", 32),
            [ANSIBLEFORMS_SECRET_KEYS.accessTokenSecret]: this.password(name, "access-token-secret", 64),
            [ANSIBLEFORMS_SECRET_KEYS.adminPassword]: adminPassword,
          },
        },
        child,
      );
    }
    let rteToken: pulumi.Output<string> | undefined;
    if (!args.existingSecrets?.rteToken) {
      rteToken =
        args.rteToken !== undefined ? checkedToken(args.rteToken, where, this) : this.password(name, "rte-token", 32);
      new k8s.core.v1.Secret(
        `${name}-rte-token`,
        {
          metadata: { name: p.tokenSecret, namespace: ns, labels },
          type: "Opaque",
          stringData: { [ANSIBLEFORMS_SECRET_KEYS.rteToken]: rteToken },
        },
        child,
      );
    }
    const metricsSecret = (existing: string | undefined, part: string) => {
      if (existing) return;
      new k8s.core.v1.Secret(
        `${name}-${part}`,
        {
          metadata: { name: objectName(name, part), namespace: ns, labels },
          type: "Opaque",
          stringData: { [ANSIBLEFORMS_SECRET_KEYS.metricsToken]: this.password(name, part, 32) },
        },
        child,
      );
    };
    if (p.metrics) metricsSecret(p.metrics.existingSecret, "ansibleforms-metrics");
    if (p.rteMetricsSecret) metricsSecret(p.metrics!.rteExistingSecret, "ansibleforms-rte-metrics");
    if (p.dbSecret !== undefined && !args.existingSecrets?.database) {
      new k8s.core.v1.Secret(
        `${name}-db`,
        {
          metadata: { name: p.dbSecret, namespace: ns, labels: p.mysqlLabels },
          type: "Opaque",
          stringData: {
            [ANSIBLEFORMS_SECRET_KEYS.dbPassword]: this.password(name, "db-password", 32),
            [ANSIBLEFORMS_SECRET_KEYS.dbRootPassword]: this.password(name, "db-root-password", 32),
          },
        },
        child,
      );
    }
    return { adminPassword, rteToken };
  }

  /** seed-configmap.yaml: the runner seed, the RTE's own runner first. */
  private seedConfigMap(p: Plan): RunnerSeed {
    return new RunnerSeed(
      `${p.name}-seed`,
      {
        namespace: p.ns,
        configMapName: objectName(p.name, "ansibleforms-seed"),
        seed: p.seed,
        appEnv: p.appEnv.map((e) => e.name as string),
        labels: p.labels,
      },
      { parent: this },
    );
  }

  /** storage.yaml: the app's persistent disk (the sidecar's spool is made with the RTE, rteInPod). */
  private storage(p: Plan): void {
    new k8s.core.v1.PersistentVolumeClaim(
      `${p.name}-persistent`,
      {
        metadata: { name: objectName(p.name, "ansibleforms-persistent"), namespace: p.ns, labels: p.labels },
        spec: {
          accessModes: ["ReadWriteOnce"],
          ...(p.args.storageClassName ? { storageClassName: p.args.storageClassName } : {}),
          resources: { requests: { storage: p.args.persistentSize ?? "5Gi" } },
        },
      },
      { parent: this },
    );
  }

  /** The RTE in the app pod: its ansible.cfg ConfigMap (config.yaml) and the sidecar's spool (storage.yaml). */
  private rteInPod(p: Plan): void {
    const { name, ns, labels, rte } = p;
    if (p.ansibleCfgConfigMap) {
      new k8s.core.v1.ConfigMap(
        `${name}-rte-ansible-cfg`,
        { metadata: { name: p.ansibleCfgConfigMap, namespace: ns, labels }, data: { "ansible.cfg": rte.ansibleCfg! } },
        { parent: this },
      );
    }
    if (p.mode === "sidecar") {
      const storageClassName = rte.storageClassName ?? p.args.storageClassName;
      new k8s.core.v1.PersistentVolumeClaim(
        `${name}-rte-spool`,
        {
          metadata: { name: objectName(name, "ansibleforms-rte-spool"), namespace: ns, labels },
          spec: {
            accessModes: ["ReadWriteOnce"],
            ...(storageClassName ? { storageClassName } : {}),
            resources: { requests: { storage: rte.spoolSize ?? "1Gi" } },
          },
        },
        { parent: this },
      );
    }
  }

  /** deployment.yaml: the app, one writer (Recreate), with the RTE container of its mode. */
  private deployment(p: Plan, seedConfigMap: pulumi.Output<string>): void {
    const { name, args, ns, labels, mode } = p;
    const volumes: Volume[] = [
      { name: "persistent", persistentVolumeClaim: { claimName: objectName(name, "ansibleforms-persistent") } },
      { name: "seed", configMap: { name: seedConfigMap } },
      { name: "tmp", emptyDir: {} },
      ...(p.sidecar?.volumes ?? []),
      ...(mode === "sidecar"
        ? [{ name: "rte-spool", persistentVolumeClaim: { claimName: objectName(name, "ansibleforms-rte-spool") } }]
        : []),
    ];
    const containers: k8s.types.input.core.v1.Container[] = [
      {
        name: "ansibleforms",
        image: imageReference(APP_IMAGE, args.image, args.global),
        imagePullPolicy: "IfNotPresent",
        ports: [{ name: "http", containerPort: APP_PORT, protocol: "TCP" }],
        env: p.appEnv,
        volumeMounts: [
          { name: "persistent", mountPath: PERSISTENT_PATH },
          // The ssh keys the app manages on its settings page, kept on its volume.
          { name: "persistent", mountPath: SSH_PATH, subPath: APP_SSH_SUBPATH },
          { name: "seed", mountPath: SEED_DIR, readOnly: true },
          { name: "tmp", mountPath: "/tmp" },
        ],
        resources: { requests: { cpu: "100m", memory: "256Mi" }, limits: { memory: "1Gi" } },
        startupProbe: httpGetProbe("/api/v2/live", "http", { periodSeconds: 10, failureThreshold: 30 }),
        livenessProbe: httpGetProbe("/api/v2/live", "http", {
          periodSeconds: 10,
          timeoutSeconds: 5,
          failureThreshold: 6,
        }),
        readinessProbe: httpGetProbe("/api/v2/ready", "http", {
          periodSeconds: 10,
          timeoutSeconds: 5,
          failureThreshold: 3,
        }),
        securityContext: restrictedContainerSecurityContext({ runAs: { user: NODE_UID } }),
      },
      ...(p.sidecar ? [p.sidecar.container] : []),
    ];
    new k8s.apps.v1.Deployment(
      `${name}-deployment`,
      {
        metadata: {
          name: p.appName,
          namespace: ns,
          labels,
          // helm template has no warning channel: both front ends record the deprecation on the object.
          ...(mode === "database" ? { annotations: { [DEPRECATION_ANNOTATION]: DATABASE_MODE_WARNING } } : {}),
        },
        spec: {
          replicas: 1,
          // One writer of the volume and the schema: never two app pods at once.
          strategy: { type: "Recreate" },
          selector: { matchLabels: selectorLabels(p.appIdentity) },
          template: {
            metadata: podMetadata(
              labels,
              args,
              configChecksums({ "ansible-cfg": p.ansibleCfgConfigMap && p.rte.ansibleCfg }).annotations,
            ),
            spec: {
              automountServiceAccountToken: false,
              enableServiceLinks: false,
              ...podPlacement(args, args.global),
              securityContext: restrictedPodSecurityContext({ user: NODE_UID }),
              ...(mode !== "remote" ? { terminationGracePeriodSeconds: terminationGraceSeconds(p.rte) } : {}),
              containers,
              volumes,
            },
          },
        },
      },
      { parent: this },
    );
  }

  /**
   * service.yaml: the app's Service and its NetworkPolicy. In: only the app's port (the sidecar's
   * is not admitted from outside the pod), from the ingress controller unless allowFrom says
   * otherwise. Out: DNS, the database, allowEgressTo.
   */
  private service(p: Plan): pulumi.Output<string> {
    const { name, args, ns, labels, metrics } = p;
    const child = { parent: this };
    const service = new k8s.core.v1.Service(
      `${name}-service`,
      {
        metadata: { name: p.appName, namespace: ns, labels },
        spec: {
          type: "ClusterIP",
          selector: selectorLabels(p.appIdentity),
          // Only the app's port: an inbound sidecar is reached on 127.0.0.1, never through a Service.
          ports: [{ name: "http", port: APP_PORT, targetPort: "http", protocol: "TCP" }],
        },
      },
      child,
    );
    const databaseEgress = args.externalDatabase
      ? hostPortEgress(p.db.host, p.db.port)
      : {
          to: [{ podSelector: { matchLabels: selectorLabels(p.mysqlIdentity) } }],
          ports: [{ port: MYSQL_PORT, protocol: "TCP" }],
        };
    new k8s.networking.v1.NetworkPolicy(
      `${name}-app-netpol`,
      {
        metadata: { name: p.appName, namespace: ns, labels },
        spec: {
          podSelector: { matchLabels: selectorLabels(p.appIdentity) },
          policyTypes: ["Ingress", "Egress"],
          ingress: [
            {
              from: args.allowFrom?.length
                ? args.allowFrom
                : [
                    {
                      namespaceSelector: {
                        matchLabels: { "kubernetes.io/metadata.name": args.ingressNamespace ?? "ingress-nginx" },
                      },
                    },
                  ],
              ports: [{ port: APP_PORT, protocol: "TCP" }],
            },
            // Prometheus scrapes the app's port and the sidecar RTE's (both need their token).
            ...(metrics
              ? [
                  {
                    from: [monitoringPeer(metrics)],
                    ports: [
                      { port: APP_PORT, protocol: "TCP" },
                      ...(p.rteMetricsSecret ? [{ port: p.rtePort, protocol: "TCP" }] : []),
                    ],
                  },
                ]
              : []),
          ],
          egress: [dnsEgressRule(args.dns), databaseEgress, ...(args.allowEgressTo ?? [])],
        },
      },
      child,
    );
    return service.metadata.name;
  }

  /** monitoring.yaml: a ServiceMonitor for the app and a PodMonitor for the sidecar RTE. */
  private monitoring(p: Plan): void {
    if (!p.metrics?.serviceMonitor) return;
    const { name, ns, labels } = p;
    new k8s.apiextensions.CustomResource(
      `${name}-servicemonitor`,
      {
        apiVersion: "monitoring.coreos.com/v1",
        kind: "ServiceMonitor",
        metadata: { name: p.appName, namespace: ns, labels },
        spec: {
          selector: { matchLabels: selectorLabels(p.appIdentity) },
          endpoints: [{ port: "http", path: "/api/v2/metrics", authorization: bearerFrom(p.appMetricsSecret!) }],
        },
      },
      { parent: this },
    );
    // The sidecar's port is behind no Service (the app reaches it on 127.0.0.1), so a PodMonitor
    // scrapes it by the pod's port name: "port defines the Pod port name which exposes the
    // endpoint" (prometheus-operator monitoring.coreos.com/v1 PodMetricsEndpoint).
    if (p.rteMetricsSecret) {
      new k8s.apiextensions.CustomResource(
        `${name}-rte-podmonitor`,
        {
          apiVersion: "monitoring.coreos.com/v1",
          kind: "PodMonitor",
          metadata: { name: objectName(name, "ansibleforms-rte"), namespace: ns, labels },
          spec: {
            selector: { matchLabels: selectorLabels(p.appIdentity) },
            podMetricsEndpoints: [{ port: "rte", path: "/metrics", authorization: bearerFrom(p.rteMetricsSecret) }],
          },
        },
        { parent: this },
      );
    }
  }

  /** service.yaml's Ingress (expose): the app's public name, which an outbound RTE elsewhere dials. */
  private ingress(p: Plan): void {
    const expose = p.args.expose;
    if (!expose) return;
    new k8s.networking.v1.Ingress(
      `${p.name}-ingress`,
      {
        metadata: {
          name: p.appName,
          namespace: p.ns,
          labels: p.labels,
          ...(expose.annotations ? { annotations: expose.annotations } : {}),
        },
        spec: {
          ...(expose.ingressClassName ? { ingressClassName: expose.ingressClassName } : {}),
          ...(expose.tlsSecretName ? { tls: [{ hosts: [expose.host], secretName: expose.tlsSecretName }] } : {}),
          rules: [
            {
              host: expose.host,
              http: {
                paths: [
                  { path: "/", pathType: "Prefix", backend: { service: { name: p.appName, port: { name: "http" } } } },
                ],
              },
            },
          ],
        },
      },
      { parent: this },
    );
  }

  private mysql(p: Plan): void {
    builtInMysql(p, this);
  }
}
