/**
 * A real S3 server IN the real node's cluster (testkit/harness/node.ts), for the exec gateway's
 * recordings: SeaweedFS (`weed server -s3`, scripts/realcp/seaweedfs: master, volume server, filer
 * and S3 gateway in one process) as the Deployment and Service `seaweedfs`, its S3 API on 8333 with
 * TLS only, at https://seaweedfs.<namespace>.svc.cluster.local:8333.
 *
 * - Its certificate (for seaweedfs.<namespace>.svc and .svc.cluster.local) is signed by a throwaway
 *   CA (certificates.ts), as a platform's own CA signs an in-cluster server's: the gateway trusts it
 *   only through execGateway.caBundle (the returned caPem). It reaches the pod from the Secret
 *   `seaweedfs-tls`; `-s3.cert.file` and `-s3.key.file` (weed/command/server.go) make the S3 port
 *   itself https (without -s3.port.https, weed/command/s3.go serves TLS on -s3.port).
 * - Credentials: SeaweedFS registers AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY from its environment
 *   as an admin identity (weed/s3api/auth_credentials.go, loadEnvironmentVariableCredentials); the
 *   pod gets them from the Secret `seaweedfs-s3-credentials`, made here with random values and the
 *   keys the exec gateway's recordings.s3.credentialsSecret wants.
 * - The image is bin/weed alone (a static Go binary: scripts/realcp/go-env.sh sets CGO_ENABLED=0),
 *   as an OCI archive (node-images.ts) imported into the node's containerd; its data on an emptyDir.
 * - The pod passes Pod Security `restricted` (the control plane's default level): non-root uid 1000,
 *   seccomp RuntimeDefault, no privilege escalation, every capability dropped, read-only root.
 * - The bucket is made by `weed shell` `s3.bucket.create` in the pod, through the API server's exec;
 *   then, as a client outside the cluster, an object is written, read and removed through the Service
 *   (node.forward), over TLS checked against the CA for the Service's name: the server is ready when
 *   the gateway's first write would succeed (a bucket's first write waits for the master to grow a
 *   volume).
 */
import { randomBytes } from "node:crypto";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import { PassThrough, Readable } from "node:stream";
import tls from "node:tls";
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { CoreV1Api, Exec, KubeConfig, type KubernetesObject, type V1Pod } from "@kubernetes/client-node";
import { privateCaCertificate } from "./certificates";
import { objectApi } from "./control-plane";
import { ociArchive } from "./node-images";
import type { RealNode } from "./node";
import { realTool } from "./realcp-tool";

export const SEAWEEDFS_IMAGE = "localhost/entryway-node/seaweedfs:1";
const NAME = "seaweedfs";
const S3_PORT = 8333;
const MASTER_PORT = 9333;
const BUCKET = "recordings";
const TLS_SECRET = "seaweedfs-tls";
const CREDENTIALS_SECRET = "seaweedfs-s3-credentials";
const UID = 1000;

export interface SeaweedFsService {
  /** https://seaweedfs.<namespace>.svc.cluster.local:8333 (execGateway.recordings.s3.endpoint). */
  endpoint: string;
  /** The CA that signed its certificate (execGateway.caBundle). */
  caPem: string;
  /** The bucket made for the recordings (execGateway.recordings.s3.bucket). */
  bucket: string;
  /** The Secret in `namespace` (and each of `credentialsIn`) with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (execGateway.recordings.s3.credentialsSecret). */
  credentialsSecret: string;
}

/** The image's archive: bin/weed at /weed, and the mount points. Made once per process. */
let archive: Promise<string> | undefined;
function seaweedFsImage(): Promise<string> {
  return (archive ??= (async () => {
    const work = mkdtempSync(path.join(os.tmpdir(), "entryway-seaweedfs-image-"));
    const rootfs = path.join(work, "rootfs");
    for (const folder of ["data", "tmp", "tls"]) mkdirSync(path.join(rootfs, folder), { recursive: true });
    copyFileSync(path.join(realTool("seaweedfs"), "weed"), path.join(rootfs, "weed"));
    chmodSync(path.join(rootfs, "weed"), 0o755);
    const file = path.join(work, "seaweedfs.tar");
    await ociArchive(rootfs, SEAWEEDFS_IMAGE, { entrypoint: ["/weed"], user: `${UID}:${UID}` }, file);
    rmSync(rootfs, { recursive: true, force: true });
    return file;
  })());
}

/** The Deployment: one replica, restricted, S3 with TLS on 8333, credentials from the Secret. */
function deployment(namespace: string): KubernetesObject {
  const labels = { app: NAME };
  const emptyDir = (name: string) => ({ name, emptyDir: {} });
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: NAME, namespace, labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      // One pod on one emptyDir: never two writing.
      strategy: { type: "Recreate" },
      template: {
        metadata: { labels },
        spec: {
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: UID,
            runAsGroup: UID,
            fsGroup: UID,
            seccompProfile: { type: "RuntimeDefault" },
          },
          containers: [
            {
              name: "weed",
              image: SEAWEEDFS_IMAGE,
              imagePullPolicy: "IfNotPresent",
              args: [
                "server",
                "-dir=/data",
                // The pod's address is advertised (the default, -ip); every port listens on all of
                // them, so `weed shell` in the pod reaches the master on localhost.
                "-ip.bind=0.0.0.0",
                "-master.telemetry=false",
                "-master.volumeSizeLimitMB=64",
                "-volume.max=16",
                "-s3",
                `-s3.port=${S3_PORT}`,
                "-s3.port.iceberg=0",
                "-s3.port.lance=0",
                "-s3.cert.file=/tls/tls.crt",
                "-s3.key.file=/tls/tls.key",
              ],
              env: ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"].map((key) => ({
                name: key,
                valueFrom: { secretKeyRef: { name: CREDENTIALS_SECRET, key } },
              })),
              ports: [
                { name: "s3", containerPort: S3_PORT, protocol: "TCP" },
                { name: "master", containerPort: MASTER_PORT, protocol: "TCP" },
              ],
              // The S3 API's own health path (weed/s3api/s3api_server.go, /healthz); the kubelet's
              // https probe does not verify the certificate.
              readinessProbe: {
                httpGet: { path: "/healthz", port: "s3", scheme: "HTTPS" },
                periodSeconds: 2,
                failureThreshold: 60,
              },
              resources: { requests: { cpu: "50m", memory: "128Mi" }, limits: { memory: "1Gi" } },
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                capabilities: { drop: ["ALL"] },
              },
              volumeMounts: [
                { name: "data", mountPath: "/data" },
                { name: "tmp", mountPath: "/tmp" },
                { name: "tls", mountPath: "/tls", readOnly: true },
              ],
            },
          ],
          volumes: [emptyDir("data"), emptyDir("tmp"), { name: "tls", secret: { secretName: TLS_SECRET } }],
          terminationGracePeriodSeconds: 5,
        },
      },
    },
  } as KubernetesObject;
}

/** The pod of the Deployment once Ready; its status and the node's kubelet log in the error otherwise. */
async function readyPod(core: CoreV1Api, node: RealNode, namespace: string, timeoutMs = 300_000): Promise<V1Pod> {
  const deadline = Date.now() + timeoutMs;
  let last: V1Pod | undefined;
  for (;;) {
    const pods = await core.listNamespacedPod({ namespace, labelSelector: `app=${NAME}` });
    last = pods.items.find((pod) => !pod.metadata?.deletionTimestamp);
    if (last?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True")) return last;
    if (Date.now() > deadline)
      throw new Error(
        `SeaweedFS in ${namespace} not Ready in ${timeoutMs / 1000} s: ${JSON.stringify(last?.status ?? "no pod")}\n${node.tail("kubelet", 30)}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/** Runs `weed shell` in the pod (through the API server's exec), `commands` on its stdin; its output. */
async function weedShell(config: KubeConfig, namespace: string, pod: string, commands: string): Promise<string> {
  let output = "";
  const collect = new PassThrough();
  collect.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const status = await new Promise<{ status?: string; message?: string }>((resolve, reject) => {
    new Exec(config)
      .exec(
        namespace,
        pod,
        "weed",
        ["/weed", "shell", `-master=localhost:${MASTER_PORT}`],
        collect,
        collect,
        Readable.from([`${commands}\nexit\n`]),
        false,
        (result) => resolve(result as { status?: string; message?: string }),
      )
      .catch(reject);
  });
  if (status.status !== "Success") throw new Error(`weed shell in ${namespace}/${pod}: ${status.message}\n${output}`);
  return output;
}

/**
 * SeaweedFS in `namespace` (which must exist) on the real node, with a bucket for the recordings
 * and a credentials Secret; resolves once an object can be written to the bucket over TLS.
 * `credentialsIn`: more namespaces (which must exist) that get the same credentials Secret: the exec
 * gateway reads its credentialsSecret from its own namespace, and SeaweedFS is best kept out of that
 * one, whose default-deny NetworkPolicy the stack writes (the gateway's egress allows the port).
 * The gateway's settings: recordings.s3 {bucket, endpoint, forcePathStyle: true (the bucket is no
 * DNS name here), credentialsSecret} and caBundle: caPem.
 */
export async function startSeaweedFs(
  kubeconfig: string,
  node: RealNode,
  namespace: string,
  credentialsIn: string[] = [],
): Promise<SeaweedFsService> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "entryway-seaweedfs-svc-"));
  try {
    const serviceName = `${NAME}.${namespace}.svc`;
    const certificate = privateCaCertificate(dir, [serviceName, `${serviceName}.cluster.local`], `${namespace}-s3-ca`);
    const credentials = {
      AWS_ACCESS_KEY_ID: `entryway${randomBytes(6).toString("hex")}`,
      AWS_SECRET_ACCESS_KEY: randomBytes(24).toString("base64url"),
    };
    await node.importImages([await seaweedFsImage()]);

    const api = objectApi(kubeconfig);
    const base64 = (file: string) => readFileSync(file).toString("base64");
    for (const object of [
      {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: TLS_SECRET, namespace },
        type: "kubernetes.io/tls",
        data: { "tls.crt": base64(certificate.certFile), "tls.key": base64(certificate.keyFile) },
      },
      ...[namespace, ...credentialsIn].map((where) => ({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: CREDENTIALS_SECRET, namespace: where },
        type: "Opaque",
        stringData: credentials,
      })),
      deployment(namespace),
      {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: NAME, namespace, labels: { app: NAME } },
        spec: {
          selector: { app: NAME },
          ports: [{ name: "https-s3", port: S3_PORT, targetPort: "s3", protocol: "TCP", appProtocol: "https" }],
        },
      },
    ] as KubernetesObject[])
      await api.create(object);

    const config = new KubeConfig();
    config.loadFromFile(kubeconfig);
    const core = config.makeApiClient(CoreV1Api);
    const pod = await readyPod(core, node, namespace);
    await weedShell(config, namespace, pod.metadata!.name!, `s3.bucket.create -name ${BUCKET}`);
    const buckets = await weedShell(config, namespace, pod.metadata!.name!, "s3.bucket.list");
    if (!buckets.includes(BUCKET)) throw new Error(`weed shell s3.bucket.list does not name ${BUCKET}:\n${buckets}`);

    // As a client would: through the Service, TLS checked against the CA for the Service's name.
    const service = await core.readNamespacedService({ namespace, name: NAME });
    const forward = await node.forward(service.spec!.clusterIP!, S3_PORT);
    const client = new S3Client({
      endpoint: `https://127.0.0.1:${forward.port}`,
      region: "us-east-1",
      forcePathStyle: true,
      credentials: { accessKeyId: credentials.AWS_ACCESS_KEY_ID, secretAccessKey: credentials.AWS_SECRET_ACCESS_KEY },
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
      requestHandler: {
        httpsAgent: new https.Agent({
          ca: certificate.caPem,
          checkServerIdentity: (_host, cert) => tls.checkServerIdentity(`${serviceName}.cluster.local`, cert),
        }),
      },
    });
    try {
      await writable(client);
    } finally {
      client.destroy();
      await forward.close();
    }
    return {
      endpoint: `https://${serviceName}.cluster.local:${S3_PORT}`,
      caPem: certificate.caPem,
      bucket: BUCKET,
      credentialsSecret: CREDENTIALS_SECRET,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** An object written, read back and removed: the bucket takes writes (its first waits for a volume to grow). */
async function writable(client: S3Client, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const key = ".entryway-ready";
  for (;;) {
    try {
      await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: "ready" }));
      const read = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
      if ((await read.Body!.transformToString()) !== "ready") throw new Error("read back another body");
      await client.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: key }));
      return;
    } catch (error) {
      if (Date.now() > deadline)
        throw new Error(
          `SeaweedFS bucket ${BUCKET} not writable in ${timeoutMs / 1000} s: ${(error as Error).message}`,
          {
            cause: error,
          },
        );
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}
