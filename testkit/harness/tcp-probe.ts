/**
 * A TCP probe run inside a pod, for NetworkPolicy tests on the real node: busybox `nc -w 2` sends a
 * one-line HTTP request and reads what comes back. Debian's busybox `nc` (the small applet, as in
 * the node's busybox image) has no `-z`: a probe written `nc -z` fails on its own flag, which reads
 * as "dropped" for every destination, so the probe always sends bytes.
 */

/** What a probe saw: a connection, a connect that timed out (dropped), or anything else (refused...). */
export type TcpVerdict = "connected" | "dropped" | "other";

/** The shell script of one probe to host:port (its output is nc's, stderr included). */
export function tcpProbeScript(host: string, port: number): string {
  return `printf 'GET / HTTP/1.0\\r\\n\\r\\n' > /tmp/request && nc -w 2 ${host} ${port} < /tmp/request 2>&1`;
}

/** The verdict of a probe from its exit code and output: busybox prints "timed out" when the connect got no answer. */
export function tcpVerdict({ code, out }: { code: number; out: string }): TcpVerdict {
  if (/timed out/.test(out)) return "dropped";
  return code === 0 ? "connected" : "other";
}
