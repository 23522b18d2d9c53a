// The exec gateway and an S3 endpoint whose certificate a private CA signed (an in-cluster S3
// server): SeaweedFS with TLS (testkit/gateway/seaweedfs.ts), its certificate from a throwaway CA
// (testkit/harness/certificates.ts). The gateway's S3 client uploads there only when NODE_EXTRA_CA_CERTS
// names that CA, as the component and chart set it from execGateway.caBundle; without it, or with
// another CA, the TLS handshake fails and nothing lands. fetch (the OIDC and webhook authorizers')
// trusts the same bundle. Each try is a process of its own (testkit/gateway/s3-put.ts): Node reads the
// variable at start only.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { GetObjectCommand } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, expect, it } from "vitest";
import { privateCaCertificate, type ServerCertificate } from "../../testkit/harness/certificates.js";
import { describeWithRealTool } from "../../testkit/harness/realcp.js";
import { startSeaweedFs, type SeaweedFs } from "../../testkit/gateway/seaweedfs.js";

const BUCKET = "ca-recordings";
const PUT = fileURLToPath(new URL("../../testkit/gateway/s3-put.ts", import.meta.url));

describeWithRealTool("seaweedfs", "an S3 endpoint signed by a private CA (NODE_EXTRA_CA_CERTS)", (binDir) => {
  let weed: SeaweedFs;
  let dir: string;
  let storage: ServerCertificate;
  let other: ServerCertificate;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "entryway-private-ca-"));
    for (const name of ["storage", "other"]) mkdirSync(join(dir, name));
    storage = privateCaCertificate(join(dir, "storage"), ["127.0.0.1"], "storage-ca");
    other = privateCaCertificate(join(dir, "other"), ["127.0.0.1"], "another-ca");
    weed = await startSeaweedFs(binDir, [BUCKET], { tls: storage });
  }, 300_000);
  afterAll(async () => {
    await weed?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** One upload and one fetch by a fresh process, with NODE_EXTRA_CA_CERTS at `bundle` when given. */
  const upload = (key: string, bundle?: string) => {
    const run = spawnSync(process.execPath, ["--import", "tsx", PUT], {
      encoding: "utf8",
      timeout: 60_000,
      env: {
        PATH: process.env.PATH,
        S3_ENDPOINT: weed.endpoint,
        S3_BUCKET: BUCKET,
        S3_KEY: key,
        S3_BODY: `recording ${key}`,
        AWS_ACCESS_KEY_ID: weed.gateway.accessKeyId,
        AWS_SECRET_ACCESS_KEY: weed.gateway.secretAccessKey,
        ...(bundle ? { NODE_EXTRA_CA_CERTS: bundle } : {}),
      },
    });
    expect(run.status, run.stderr).toBe(0);
    return JSON.parse(run.stdout.trim().split("\n").at(-1)!) as { put: string; fetch: string | number };
  };
  const stored = async (key: string) => {
    try {
      const object = await weed.client(weed.admin).send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
      return await object.Body!.transformToString();
    } catch {
      return undefined;
    }
  };

  it("uploads over https with the CA's bundle, and only with it: without one, or with another CA's, the handshake fails and nothing is stored", async () => {
    expect(weed.endpoint).toMatch(/^https:\/\//);
    // Neither the public roots nor another CA vouch for the server: Node's verification error, no object.
    for (const bundle of [undefined, other.caFile]) {
      const key = `refused-${bundle ? "other" : "none"}.cast`;
      expect(upload(key, bundle)).toEqual({
        put: "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
        fetch: "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
      });
      expect(await stored(key)).toBeUndefined();
    }
    // With the bundle: the gateway's client stores the object; fetch reaches the server too (S3 answers
    // an anonymous GET of / with an HTTP error, after the handshake).
    const result = upload("trusted.cast", storage.caFile);
    expect(result.put).toBe("ok");
    expect(result.fetch).toEqual(expect.any(Number));
    expect(await stored("trusted.cast")).toBe("recording trusted.cast");
  });
});
