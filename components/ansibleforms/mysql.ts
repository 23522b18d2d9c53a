// The built-in MySQL of AnsibleForms (the chart's templates/ansibleforms/mysql.yaml).
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { selectorLabels } from "../shared/labels";
import { imageReference } from "../shared/image";
import { podMetadata, podPlacement } from "../shared/pod";
import { restrictedContainerSecurityContext, restrictedPodSecurityContext } from "../shared/security";
import { DATABASE_SCHEMA, ANSIBLEFORMS_SECRET_KEYS, MYSQL_IMAGE, MYSQL_PORT, MYSQL_UID, secretEnv } from "./common";
import type { Plan } from "./plan";

/**
 * mysql.yaml: MySQL 8.4, a StatefulSet with its own volume, a Service, and a NetworkPolicy admitting only the app;
 * its objects are children of `parent` (the AnsibleForms component).
 * @internal
 */
export function builtInMysql(p: Plan, parent: pulumi.Resource): void {
  const child = { parent };
  const { name, ns, mysqlName, args } = p;
  const labels = p.mysqlLabels;
  const dbSecret = p.dbSecret!;
  new k8s.core.v1.Service(
    `${name}-mysql-service`,
    {
      metadata: { name: mysqlName, namespace: ns, labels },
      spec: {
        type: "ClusterIP",
        selector: selectorLabels(p.mysqlIdentity),
        ports: [{ name: "mysql", port: MYSQL_PORT, targetPort: "mysql", protocol: "TCP" }],
      },
    },
    child,
  );
  new k8s.apps.v1.StatefulSet(
    `${name}-mysql`,
    {
      metadata: { name: mysqlName, namespace: ns, labels },
      spec: {
        serviceName: mysqlName,
        replicas: 1,
        selector: { matchLabels: selectorLabels(p.mysqlIdentity) },
        template: {
          metadata: podMetadata(labels, args.mysql),
          spec: {
            automountServiceAccountToken: false,
            enableServiceLinks: false,
            ...podPlacement(args.mysql, args.global),
            securityContext: restrictedPodSecurityContext({ user: MYSQL_UID }),
            containers: [
              {
                name: "mysql",
                image: imageReference(MYSQL_IMAGE, args.mysql?.image, args.global),
                imagePullPolicy: "IfNotPresent",
                ports: [{ name: "mysql", containerPort: MYSQL_PORT, protocol: "TCP" }],
                env: [
                  secretEnv("MYSQL_ROOT_PASSWORD", { name: dbSecret, key: ANSIBLEFORMS_SECRET_KEYS.dbRootPassword }),
                  { name: "MYSQL_DATABASE", value: DATABASE_SCHEMA },
                  { name: "MYSQL_USER", value: "ansibleforms" },
                  secretEnv("MYSQL_PASSWORD", { name: dbSecret, key: ANSIBLEFORMS_SECRET_KEYS.dbPassword }),
                ],
                volumeMounts: [
                  { name: "data", mountPath: "/var/lib/mysql" },
                  { name: "run", mountPath: "/var/run/mysqld" },
                  { name: "tmp", mountPath: "/tmp" },
                ],
                resources: { requests: { cpu: "100m", memory: "512Mi" }, limits: { memory: "1Gi" } },
                livenessProbe: { tcpSocket: { port: "mysql" }, initialDelaySeconds: 30, periodSeconds: 10 },
                readinessProbe: {
                  exec: { command: ["mysqladmin", "ping", "-h", "127.0.0.1", "--silent"] },
                  periodSeconds: 10,
                },
                securityContext: restrictedContainerSecurityContext({ runAs: { user: MYSQL_UID } }),
              },
            ],
            volumes: [
              { name: "run", emptyDir: {} },
              { name: "tmp", emptyDir: {} },
            ],
          },
        },
        volumeClaimTemplates: [
          {
            metadata: { name: "data", labels },
            spec: {
              accessModes: ["ReadWriteOnce"],
              ...(args.storageClassName ? { storageClassName: args.storageClassName } : {}),
              resources: { requests: { storage: args.mysql?.size ?? "8Gi" } },
            },
          },
        ],
      },
    },
    child,
  );
  new k8s.networking.v1.NetworkPolicy(
    `${name}-mysql-netpol`,
    {
      metadata: { name: mysqlName, namespace: ns, labels },
      spec: {
        podSelector: { matchLabels: selectorLabels(p.mysqlIdentity) },
        // In: only the app. Out: nothing (MySQL dials nowhere).
        policyTypes: ["Ingress", "Egress"],
        ingress: [
          {
            from: [{ podSelector: { matchLabels: selectorLabels(p.appIdentity) } }],
            ports: [{ port: MYSQL_PORT, protocol: "TCP" }],
          },
        ],
        egress: [],
      },
    },
    child,
  );
}
