/** TLS material for the tests' local servers (the kube stand-in, the CLI's TLS proxy). */
import { execFileSync } from "node:child_process";
import { join } from "node:path";

/** A throwaway self-signed certificate for 127.0.0.1 (openssl, EC P-256, one day), as PEM files in `dir`. */
export function selfSignedCertificate(dir: string): { keyPath: string; certPath: string } {
  const keyPath = join(dir, "key.pem");
  const certPath = join(dir, "cert.pem");
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-days",
      "1",
      "-subj",
      "/CN=127.0.0.1",
      "-addext",
      "subjectAltName=IP:127.0.0.1",
      "-keyout",
      keyPath,
      "-out",
      certPath,
    ],
    { stdio: "ignore" },
  );
  return { keyPath, certPath };
}
