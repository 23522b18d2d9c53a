// Starts a gateway on loopback with a given backend and authorizer, collecting audit events.
import type { AddressInfo } from "node:net";
import type {
  AuditEvent,
  DebugContainerEvent,
  ReapFailedEvent,
  RecordingAccessEvent,
} from "../../gateway/src/audit.js";
import type { Authorizer } from "../../gateway/src/auth/authorizer.js";
import type { Backend } from "../../gateway/src/backends/backend.js";
import { defaultConfig, type GatewayConfig } from "../../gateway/src/config.js";
import { createGateway, type Gateway, type RouteHandler } from "../../gateway/src/server.js";

export interface TestGateway {
  gateway: Gateway;
  base: string;
  /** The monitoring port's base URL: /metrics, /readyz. */
  monitoring: string;
  url(query: Record<string, string | string[]>): string;
  audit: AuditEvent[];
  /** Audit records of debug containers added. */
  debugContainers: DebugContainerEvent[];
  /** Audit records of access to recordings. */
  access: RecordingAccessEvent[];
  /** Audit records of abandoned shells the reaper could not end. */
  reaps: ReapFailedEvent[];
  logs: Record<string, unknown>[];
  stop(): Promise<void>;
}

/**
 * Allows any token that names a user ("user:<name>", or "user:<name>:<group>,<group>" with the
 * groups identify() reports), denies everything else; counts authorize calls.
 */
export function tokenAuthorizer(): Authorizer & { calls: number } {
  const parse = (token: string) => /^user:([^:\s]+)(?::(\S+))?$/.exec(token);
  const authorizer = {
    calls: 0,
    async authorize({ token }: { token: string }) {
      authorizer.calls++;
      const match = parse(token);
      return match ? { allow: true as const, user: match[1]! } : { allow: false as const, reason: "unknown token" };
    },
    async identify({ token }: { token: string }) {
      const match = parse(token);
      return match
        ? { known: true as const, user: match[1]!, groups: match[2]?.split(",") ?? [] }
        : { known: false as const, reason: "unknown token" };
    },
  };
  return authorizer;
}

export async function startGateway(
  backend: Backend,
  authorizer: Authorizer,
  overrides: Partial<GatewayConfig> = {},
  routes: RouteHandler[] = [],
): Promise<TestGateway> {
  const config: GatewayConfig = {
    ...defaultConfig,
    host: "127.0.0.1",
    port: 0,
    metricsHost: "127.0.0.1",
    backend: backend.name,
    logLevel: "debug",
    ...overrides,
  };
  const audit: AuditEvent[] = [];
  const debugContainers: DebugContainerEvent[] = [];
  const access: RecordingAccessEvent[] = [];
  const reaps: ReapFailedEvent[] = [];
  const logs: Record<string, unknown>[] = [];
  const gateway = createGateway({
    config,
    backend,
    authorizer,
    routes,
    logger: { log: (level, msg, fields) => logs.push({ level, msg, ...fields }) },
    audit: {
      write: (event) =>
        void (event.event === "debug.container"
          ? debugContainers.push(event)
          : event.event === "reap.failed"
            ? reaps.push(event)
            : "session" in event
              ? audit.push(event)
              : access.push(event)),
      close: async () => {},
    },
  });
  const address = await gateway.listen();
  const base = `http://127.0.0.1:${address.port}`;
  const monitoring = `http://127.0.0.1:${(gateway.monitoringServer.address() as AddressInfo).port}`;
  return {
    gateway,
    base,
    monitoring,
    audit,
    debugContainers,
    access,
    reaps,
    logs,
    url(query) {
      const params = new URLSearchParams();
      for (const [key, value] of Object.entries(query)) for (const v of [value].flat()) params.append(key, v);
      return `ws://127.0.0.1:${address.port}${config.path}?${params}`;
    },
    stop: () => gateway.shutdown("test over"),
  };
}
