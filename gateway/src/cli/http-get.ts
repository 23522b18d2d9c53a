// One GET to the gateway (a recording for `entryway replay`, /version for `entryway version`) under
// one connect deadline (deadline.ts) that covers TCP connect, TLS handshake and the response's head.
import http from "node:http";
import https from "node:https";
import { rootCertificates } from "node:tls";
import { ConnectDeadline } from "./deadline.js";
import { classifyConnectError, EnterError, ExitCode } from "./enter-options.js";

/** Resolves to the status and body; a failure to connect in time or at all is an EnterError. */
export function httpGet(
  url: URL,
  options: { headers?: Record<string, string>; timeoutMs: number; ca?: string },
): Promise<{ status: number; body: string }> {
  const secure = url.protocol === "https:";
  const client = secure ? https : http;
  return new Promise((resolve, reject) => {
    const deadline = new ConnectDeadline(options.timeoutMs, (expired) =>
      request.destroy(
        new EnterError(
          ExitCode.network,
          `cannot reach the gateway at ${url.protocol}//${url.host}: ${expired.describe()}`,
        ),
      ),
    );
    const request = client.get(
      url,
      {
        headers: options.headers ?? {},
        agent: false,
        createConnection: deadline.connector(secure, "HTTP response"),
        ...(options.ca ? { ca: [...rootCertificates, options.ca] } : {}),
      } as https.RequestOptions,
      (response) => {
        deadline.met();
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("error", reject);
        response.on("end", () =>
          resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
        );
      },
    );
    request.on("error", (error: Error & { code?: string }) => {
      deadline.met();
      reject(error instanceof EnterError ? error : classifyConnectError(error, url));
    });
  });
}
