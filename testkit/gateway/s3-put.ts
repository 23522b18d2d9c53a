// Run as a process of its own (`node --import tsx s3-put.ts`), because Node reads NODE_EXTRA_CA_CERTS
// only once, at start (nodejs doc/api/cli.md): the gateway's own S3 client (s3Client, as `entryway
// serve` makes it) uploads one object, and fetch (what the OIDC and webhook authorizers use) asks the
// same endpoint. Prints {"put": "ok" | <error code>, "fetch": <HTTP status> | <error code>}.
// Env: S3_ENDPOINT, S3_BUCKET, S3_KEY, S3_BODY, and the AWS_* credentials.
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { defaultConfig } from "../../gateway/src/config.js";
import { s3Client } from "../../gateway/src/recordings/s3/place.js";

const env = (name: string) => process.env[name] ?? "";
/** The TLS (or other) error's code, wherever the client put it. */
const code = (error: unknown): string => {
  const e = error as { code?: string; cause?: { code?: string }; name?: string; message?: string };
  return e.code ?? e.cause?.code ?? e.name ?? String(e.message);
};

const client = s3Client({
  ...defaultConfig,
  recordS3Bucket: env("S3_BUCKET"),
  recordS3Endpoint: env("S3_ENDPOINT"),
  recordS3ForcePathStyle: true,
  recordWriteTimeoutMs: 10_000,
});
const result: Record<string, string | number> = {};
try {
  await client.send(new PutObjectCommand({ Bucket: env("S3_BUCKET"), Key: env("S3_KEY"), Body: env("S3_BODY") }));
  result.put = "ok";
} catch (error) {
  result.put = code(error);
}
try {
  result.fetch = (await fetch(env("S3_ENDPOINT"))).status;
} catch (error) {
  result.fetch = code(error);
}
client.destroy();
process.stdout.write(`${JSON.stringify(result)}\n`);
