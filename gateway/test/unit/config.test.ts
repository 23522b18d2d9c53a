// gateway/src/config.ts: settings from ENTRYWAY_* variables and the settings document, validated with
// messages naming the key; the recording settings (a directory or an S3 bucket).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { envName, loadConfig } from "../../src/config.js";

describe("config", () => {
  it("reads environment variables and validates them", () => {
    expect(envName("maxSessionsPerUser")).toBe("ENTRYWAY_MAX_SESSIONS_PER_USER");
    const config = loadConfig({
      ENTRYWAY_BACKEND: "docker",
      ENTRYWAY_PING_INTERVAL_MS: "5000",
      ENTRYWAY_SHELL: '["/bin/bash","-l"]',
      ENTRYWAY_ALLOW_COMMAND: "false",
    });
    expect(config).toMatchObject({
      backend: "docker",
      pingIntervalMs: 5000,
      shell: ["/bin/bash", "-l"],
      allowCommand: false,
    });
    expect(() => loadConfig({ ENTRYWAY_BACKEND: "lxc" })).toThrow(/backend/);
    expect(() => loadConfig({ ENTRYWAY_IDLE_TIMEOUT_MS: "soon" })).toThrow(/idleTimeoutMs/);
  });

  it("reads the settings document ENTRYWAY_CONFIG names, the environment winning", () => {
    const dir = mkdtempSync(join(tmpdir(), "entryway-config-"));
    try {
      const file = join(dir, "config.json");
      writeFileSync(
        file,
        JSON.stringify({
          authorizer: "oidc",
          oidcIssuer: "https://id.example.com",
          maxSessions: 20,
          allowCommand: false,
          trustedProxies: ["10.0.0.0/8"],
        }),
      );
      expect(loadConfig({ ENTRYWAY_CONFIG: file })).toMatchObject({
        authorizer: "oidc",
        oidcIssuer: "https://id.example.com",
        maxSessions: 20,
        allowCommand: false,
        trustedProxies: ["10.0.0.0/8"],
      });
      expect(loadConfig({ ENTRYWAY_CONFIG: file, ENTRYWAY_MAX_SESSIONS: "7" }).maxSessions).toBe(7);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each([
    ["{", /config\.json: cannot read the settings document: .*JSON/],
    ["[1]", /config\.json: the settings document must be a JSON object of settings, got array/],
    ["null", /got null/],
    ['{"maxSession": 5}', /config\.json: unknown setting maxSession/],
    // Own keys only: these are `in` every object.
    ['{"constructor": 1, "__proto__": {"port": 1}}', /unknown setting constructor; unknown setting __proto__/],
    ['{"maxSessions": "5"}', /maxSessions: expected number, got string "5"/],
    ['{"maxSessions": null}', /maxSessions: expected number, got null/],
    ['{"allowCommand": "false"}', /allowCommand: expected boolean, got string/],
    ['{"trustedProxies": "10.0.0.0/8"}', /trustedProxies: expected array, got string/],
    ['{"trustedProxies": [1]}', /trustedProxies: expected an array of strings/],
    ['{"logLevel": {"level": "debug"}}', /logLevel: expected string, got object/],
    ['{"logLevel": "verbose"}', /logLevel: expected one of debug, info, warn, error, got verbose/],
    ['{"maxSessions": -1}', /maxSessions: expected a non-negative number, got -1/],
    // Every bad key at once.
    [
      '{"backend": 2, "port": "80"}',
      /config\.json: backend: expected string, got number 2; port: expected number, got string "80"/,
    ],
  ])("refuses a bad settings document with a message naming the key (%s)", (text, message) => {
    const dir = mkdtempSync(join(tmpdir(), "entryway-config-"));
    try {
      const file = join(dir, "config.json");
      writeFileSync(file, text);
      expect(() => loadConfig({ ENTRYWAY_CONFIG: file })).toThrow(message);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("waits at most 3 s for the AUTH message of a connection that came without a token, and takes trustedProxyHops", () => {
    expect(loadConfig({})).toMatchObject({ authTimeoutMs: 3000, trustedProxyHops: 0 });
    expect(loadConfig({ ENTRYWAY_TRUSTED_PROXY_HOPS: "1" }).trustedProxyHops).toBe(1);
    expect(() => loadConfig({ ENTRYWAY_TRUSTED_PROXY_HOPS: "1.5" })).toThrow(/trustedProxyHops/);
  });
});

describe("recording settings", () => {
  const s3 = {
    ENTRYWAY_RECORD_S3_BUCKET: "exec-recordings",
    ENTRYWAY_RECORD_S3_ENDPOINT: "https://objects.example.com:9000",
    ENTRYWAY_RECORD_S3_FORCE_PATH_STYLE: "true",
    ENTRYWAY_RECORD_S3_PREFIX: "gw/",
  };
  it("takes an S3 sink with an https endpoint, path style and a prefix", () => {
    expect(loadConfig(s3)).toMatchObject({
      recordS3Bucket: "exec-recordings",
      recordS3ForcePathStyle: true,
      recordS3Prefix: "gw/",
      recordFlushSeconds: 10,
      recordPartBytes: 5 * 1024 * 1024,
    });
    expect(loadConfig({ ...s3, ENTRYWAY_RECORD_S3_ENDPOINT: "http://127.0.0.1:8333" }).recordS3Endpoint).toBe(
      "http://127.0.0.1:8333",
    );
  });
  it.each([
    [{ ...s3, ENTRYWAY_RECORD_DIR: "/recordings" }, /recordDir and recordS3Bucket are both set/],
    [{ ENTRYWAY_RECORD_S3_PREFIX: "gw/" }, /recordS3Prefix set but recordS3Bucket is empty/],
    [{ ENTRYWAY_RECORD_S3_FORCE_PATH_STYLE: "true" }, /recordS3ForcePathStyle set but recordS3Bucket is empty/],
    [{ ...s3, ENTRYWAY_RECORD_RETENTION_DAYS: "30" }, /bucket lifecycle rule/],
    [{ ...s3, ENTRYWAY_RECORD_S3_ENDPOINT: "http://objects.example.com" }, /must be https/],
    [{ ...s3, ENTRYWAY_RECORD_S3_ENDPOINT: "https://key:secret@objects.example.com" }, /must not carry credentials/],
    [{ ...s3, ENTRYWAY_RECORD_S3_BUCKET: "Exec_Recordings" }, /not a bucket name/],
    [{ ...s3, ENTRYWAY_RECORD_S3_PREFIX: "/abs/" }, /not a key prefix/],
    [{ ...s3, ENTRYWAY_RECORD_S3_PREFIX: "a/../b/" }, /not a key prefix/],
    [{ ...s3, ENTRYWAY_RECORD_PART_BYTES: "1048576" }, /recordPartBytes must be between 5242880/],
    [{ ENTRYWAY_RECORD_FLUSH_SECONDS: "0" }, /recordFlushSeconds/],
  ])("refuses %j", (env, message) => {
    expect(() => loadConfig(env as NodeJS.ProcessEnv)).toThrow(message);
  });
});
