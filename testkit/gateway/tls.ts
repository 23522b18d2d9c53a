/** TLS material for the tests' local servers (the kube stand-in, the CLI's TLS proxy). */
import { execFileSync } from "node:child_process";
import { isIP } from "node:net";
import { join } from "node:path";

/** `openssl req`'s arguments for a new EC P-256 key, not encrypted (the test harness's certificates use it too). */
export const NEW_EC_KEY: readonly string[] = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

/** A throwaway self-signed certificate for `name` (an IP address or a DNS name; openssl, EC P-256, one day), as PEM files in `dir`. */
export function selfSignedCertificate(dir: string, name = "127.0.0.1"): { keyPath: string; certPath: string } {
  const keyPath = join(dir, "key.pem");
  const certPath = join(dir, "cert.pem");
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      ...NEW_EC_KEY,
      "-days",
      "1",
      "-subj",
      `/CN=${name}`,
      "-addext",
      `subjectAltName=${isIP(name) ? "IP" : "DNS"}:${name}`,
      "-keyout",
      keyPath,
      "-out",
      certPath,
    ],
    { stdio: "ignore" },
  );
  return { keyPath, certPath };
}
