// A real S3 server for the recording tests: SeaweedFS (`weed server -s3`: master, volume server,
// filer and S3 gateway in one process; Apache-2.0), built from its Go module into the shared tool
// cache (scripts/realcp/seaweedfs), on 127.0.0.1 only, with its data in a temporary folder and three
// identities from an S3 config file: an admin (bucket setup, quotas), the gateway (read, write and
// list on the recordings bucket only) and a reader (read and list: the bucket refuses its writes).
// Telemetry is off. stop() kills the process by its PID and removes the folder. With `tls`, the S3
// API is https only (`-s3.cert.file`, `-s3.key.file`: weed/command/server.go; without
// -s3.port.https, weed/command/s3.go serves TLS on -s3.port itself), at https://127.0.0.1:<port>.
import { spawn, type ChildProcess } from "node:child_process";
import https from "node:https";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  ListBucketsCommand,
  PutObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import { freePort } from "../harness/net.js";

export interface S3Identity {
  accessKeyId: string;
  secretAccessKey: string;
}

/** A server certificate (for 127.0.0.1) and the CA that signed it, which this helper's own clients trust. */
export interface SeaweedFsTls {
  certFile: string;
  keyFile: string;
  caPem: string;
}

export interface SeaweedFs {
  /** http://127.0.0.1:<s3 port>, or https with `tls` */
  endpoint: string;
  admin: S3Identity;
  gateway: S3Identity;
  reader: S3Identity;
  /** A client as `who`, path-style, against this server. */
  client(who: S3Identity): S3Client;
  createBucket(name: string): Promise<void>;
  /** SeaweedFS's bucket quota (`weed shell` s3.bucket.quota), which `s3.bucket.quota.enforce -apply` (or the S3 server each minute) turns into a read-only bucket once exceeded. */
  setQuota(bucket: string, megabytes: number): Promise<void>;
  /** Runs `weed shell` against this server's master (e.g. "s3.bucket.quota.enforce -apply"). */
  shell(command: string): Promise<string>;
  /** The server process (SIGSTOP / SIGCONT it to make the endpoint hang). */
  readonly process: ChildProcess;
  /** Kills the server (the endpoint goes away) and starts it again on the same ports and data. */
  restart(): Promise<void>;
  kill(): Promise<void>;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function startSeaweedFs(
  binDir: string,
  buckets: string[] = [],
  options: { tls?: SeaweedFsTls } = {},
): Promise<SeaweedFs> {
  const tls = options.tls;
  const dir = mkdtempSync(join(tmpdir(), "entryway-seaweedfs-"));
  const data = join(dir, "data");
  mkdirSync(data);
  const admin = { accessKeyId: "admin-access-key", secretAccessKey: "admin-secret-key-not-for-production" };
  const gateway = { accessKeyId: "gateway-access-key", secretAccessKey: "gateway-secret-key-for-the-tests-only" };
  const reader = { accessKeyId: "reader-access-key", secretAccessKey: "reader-secret-key-for-the-tests-only" };
  const scoped = (actions: string[]) => buckets.flatMap((bucket) => actions.map((action) => `${action}:${bucket}`));
  const identity = (name: string, who: S3Identity, actions: string[]) => ({
    name,
    credentials: [{ accessKey: who.accessKeyId, secretKey: who.secretAccessKey }],
    actions,
  });
  const config = join(dir, "s3.json");
  writeFileSync(
    config,
    JSON.stringify({
      identities: [
        identity("admin", admin, ["Admin", "Read", "List", "Tagging", "Write"]),
        identity("gateway", gateway, scoped(["Read", "List", "Write"])),
        identity("reader", reader, scoped(["Read", "List"])),
      ],
    }),
  );
  const ports: Record<string, number> = {};
  for (const name of ["master", "masterGrpc", "volume", "volumeGrpc", "filer", "filerGrpc", "s3", "s3Grpc"])
    ports[name] = await freePort();
  const args = [
    "server",
    "-ip=127.0.0.1",
    "-ip.bind=127.0.0.1",
    `-dir=${data}`,
    "-master.telemetry=false",
    "-master.volumeSizeLimitMB=64",
    "-volume.max=64",
    `-master.port=${ports.master}`,
    `-master.port.grpc=${ports.masterGrpc}`,
    `-volume.port=${ports.volume}`,
    `-volume.port.grpc=${ports.volumeGrpc}`,
    `-filer.port=${ports.filer}`,
    `-filer.port.grpc=${ports.filerGrpc}`,
    `-filer.localSocket=${join(dir, "filer.sock")}`,
    "-s3",
    `-s3.port=${ports.s3}`,
    `-s3.port.grpc=${ports.s3Grpc}`,
    "-s3.port.iceberg=0",
    "-s3.port.lance=0",
    `-s3.localSocket=${join(dir, "s3.sock")}`,
    `-s3.config=${config}`,
    ...(tls ? [`-s3.cert.file=${tls.certFile}`, `-s3.key.file=${tls.keyFile}`] : []),
  ];
  let log = "";
  let child!: ChildProcess;
  const endpoint = `${tls ? "https" : "http"}://127.0.0.1:${ports.s3}`;
  const client = (who: S3Identity) =>
    new S3Client({
      endpoint,
      region: "us-east-1",
      forcePathStyle: true,
      credentials: who,
      ...(tls ? { requestHandler: { httpsAgent: new https.Agent({ ca: tls.caPem }) } } : {}),
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
    });
  const adminClient = client(admin);

  const launch = async () => {
    child = spawn(join(binDir, "weed"), args, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout!.on("data", (d: Buffer) => (log = (log + d.toString()).slice(-20_000)));
    child.stderr!.on("data", (d: Buffer) => (log = (log + d.toString()).slice(-20_000)));
    // Ready when the S3 API answers an authenticated request.
    const deadline = Date.now() + 120_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`weed server exited (${child.exitCode}):\n${log}`);
      try {
        await adminClient.send(new ListBucketsCommand({}));
        return;
      } catch {
        if (Date.now() > deadline) throw new Error(`weed server did not answer S3 on ${endpoint} in 120 s:\n${log}`);
        await sleep(250);
      }
    }
  };
  const kill = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGCONT");
    child.kill("SIGKILL");
    await exited;
  };
  const createBucket = async (name: string) => void (await adminClient.send(new CreateBucketCommand({ Bucket: name })));
  /**
   * Ready for writes: a bucket's first write waits for the master to grow volumes for it, and after
   * a restart for the volume server to register again; an object written and removed proves both.
   */
  const writable = async () => {
    const deadline = Date.now() + 120_000;
    for (const bucket of buckets) {
      for (;;) {
        try {
          await adminClient.send(new PutObjectCommand({ Bucket: bucket, Key: ".entryway-test-ready", Body: "ready" }));
          await adminClient.send(new DeleteObjectCommand({ Bucket: bucket, Key: ".entryway-test-ready" }));
          break;
        } catch (error) {
          if (Date.now() > deadline)
            throw new Error(`SeaweedFS bucket ${bucket} not writable in 120 s: ${(error as Error).message}\n${log}`, {
              cause: error,
            });
          await sleep(250);
        }
      }
    }
  };
  await launch();
  for (const bucket of buckets) await createBucket(bucket);
  await writable();

  const shell = (command: string) =>
    new Promise<string>((resolve, reject) => {
      const child = spawn(join(binDir, "weed"), ["shell", `-master=127.0.0.1:${ports.master}.${ports.masterGrpc}`], {
        cwd: dir,
        stdio: ["pipe", "pipe", "pipe"],
      });
      let out = "";
      child.stdout.on("data", (d: Buffer) => (out += d.toString()));
      child.stderr.on("data", (d: Buffer) => (out += d.toString()));
      child.on("error", reject);
      child.on("exit", (code) =>
        code === 0 ? resolve(out) : reject(new Error(`weed shell ${command}: exit ${code}\n${out}`)),
      );
      child.stdin.end(`${command}\nexit\n`);
    });

  return {
    endpoint,
    admin,
    gateway,
    reader,
    client,
    createBucket,
    async setQuota(bucket, megabytes) {
      await shell(`s3.bucket.quota -name=${bucket} -op=set -sizeMB=${megabytes}`);
    },
    shell,
    get process() {
      return child;
    },
    async restart() {
      await kill();
      await launch();
      await writable();
    },
    kill,
    async stop() {
      await kill();
      adminClient.destroy();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The settings of a serve process that records to `bucket` on `weed` (path style), with the gateway's credentials in AWS_* variables. */
export function recordingToBucket(weed: SeaweedFs, bucket: string): Record<string, string> {
  return {
    ENTRYWAY_RECORD_S3_BUCKET: bucket,
    ENTRYWAY_RECORD_S3_ENDPOINT: weed.endpoint,
    ENTRYWAY_RECORD_S3_FORCE_PATH_STYLE: "true",
    AWS_ACCESS_KEY_ID: weed.gateway.accessKeyId,
    AWS_SECRET_ACCESS_KEY: weed.gateway.secretAccessKey,
  };
}
