/**
 * A throwaway private CA and a server certificate it signs (openssl, EC P-256, two days): what a
 * platform's own CA is to a server inside the cluster (the in-cluster S3 server's certificate, which
 * the exec gateway trusts only through its caBundle). The leaf is issued as the control plane's are
 * (control-plane.ts, issue).
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import path from "node:path";
import { issue } from "./control-plane";

export interface ServerCertificate {
  /** The CA's certificate (PEM file), and its text: what a client trusts. */
  caFile: string;
  caPem: string;
  /** The server's certificate and key (PEM files). */
  certFile: string;
  keyFile: string;
}

/** A CA (`ca.crt`, `ca.key` in `dir`) and a server certificate for `names` (DNS names or IP addresses) signed by it. */
export function privateCaCertificate(
  dir: string,
  names: string[],
  caName = "entryway-test-private-ca",
): ServerCertificate {
  for (const args of [
    ["ecparam", "-genkey", "-name", "prime256v1", "-noout", "-out", "ca.key"],
    ["req", "-x509", "-new", "-key", "ca.key", "-out", "ca.crt", "-days", "2", "-subj", `/CN=${caName}`],
  ]) {
    const result = spawnSync("openssl", args, { cwd: dir, encoding: "utf8" });
    if (result.status !== 0) throw new Error(`openssl ${args.join(" ")}: ${result.stderr || result.error}`);
  }
  const altNames = names.map((name) => `${isIP(name) ? "IP" : "DNS"}:${name}`).join(",");
  issue(dir, "server", `/CN=${names[0]}`, `subjectAltName=${altNames}\nextendedKeyUsage=serverAuth\n`);
  const caFile = path.join(dir, "ca.crt");
  return {
    caFile,
    caPem: readFileSync(caFile, "utf8"),
    certFile: path.join(dir, "server.crt"),
    keyFile: path.join(dir, "server.key"),
  };
}
