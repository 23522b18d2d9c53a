// The gateway's HTTP servers. The public one: the WebSocket endpoint, /healthz, /version, and room for more
// routes (the web terminal's assets) through `routes`. The monitoring one, on its own port (which
// the NetworkPolicy opens only to the monitoring namespace): /metrics, /readyz and /healthz.
import { randomUUID } from "node:crypto";
import http, { STATUS_CODES, type IncomingMessage, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { isIP, type AddressInfo } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";
import { auditSink, type AuditSink } from "./audit.js";
import type { Authorizer } from "./auth/authorizer.js";
import type { Backend } from "./backends/backend.js";
import { cidrList, type GatewayConfig } from "./config.js";
import { DebugOptionError, parseDebugOption } from "./debug.js";
import { PreAuthLimits, SessionLimits } from "./limits.js";
import { errorMessage, jsonLogger, type Logger } from "./log.js";
import { createMetrics, type Metrics } from "./metrics.js";
import { clientAddress } from "./net.js";
import { encodeResponse, ResponseType } from "./protocol.js";
import type { RouteHandler } from "./http-route.js";
import { recordingSink, recordingsRoute } from "./recordings/index.js";
import { Session, type SessionContext } from "./session/session.js";
import { targetsRoute } from "./targets.js";
import { describeTarget, parseTarget, TargetError, type Target } from "./target.js";
import { VERSION, VERSION_HEADER } from "./version.js";

/** Browsers offer this subprotocol (the server selects it) next to `entryway.token.<base64url token>`. */
export const SUBPROTOCOL = "entryway.v1";
export const TOKEN_SUBPROTOCOL_PREFIX = "entryway.token.";

export type { RouteHandler };

export interface GatewayOptions {
  config: GatewayConfig;
  backend: Backend;
  authorizer: Authorizer;
  logger?: Logger;
  audit?: AuditSink;
  routes?: RouteHandler[];
}

export interface Gateway {
  readonly server: http.Server;
  /** /metrics, /readyz and /healthz on metricsPort. */
  readonly monitoringServer: http.Server;
  readonly metrics: Metrics;
  readonly sessions: ReadonlySet<Session>;
  /** Listens on both ports; returns the public server's address (the monitoring one is monitoringServer.address()). */
  listen(): Promise<AddressInfo>;
  /** Stops accepting, tells every open session why, ends their shells, waits at most drainTimeoutMs. */
  shutdown(reason?: string): Promise<void>;
}

/** The token from, in order: Entry's access-token header, a bearer Authorization header, the subprotocol. */
export function tokenFromRequest(request: IncomingMessage): string | null {
  const entry = request.headers["access-token"];
  if (typeof entry === "string" && entry) return entry;
  const bearer = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? "");
  if (bearer) return bearer[1]!;
  for (const protocol of (request.headers["sec-websocket-protocol"] ?? "").split(",")) {
    const value = protocol.trim();
    if (value.startsWith(TOKEN_SUBPROTOCOL_PREFIX))
      return Buffer.from(value.slice(TOKEN_SUBPROTOCOL_PREFIX.length), "base64url").toString("utf8") || null;
  }
  return null;
}

function once(action: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    action();
  };
}

export function createGateway(options: GatewayOptions): Gateway {
  const { config, backend, authorizer } = options;
  const logger = options.logger ?? jsonLogger(config.logLevel);
  const audit = options.audit ?? auditSink(config.auditFile);
  const metrics = createMetrics();
  const limits = new SessionLimits(config.maxSessions, config.maxSessionsPerUser);
  const preAuth = new PreAuthLimits(config);
  const proxyTrust = {
    proxies: cidrList(config.trustedProxies),
    proxiesConfigured: config.trustedProxies.length > 0,
    hops: config.trustedProxyHops,
  };
  const recordings = recordingSink(config, logger, metrics);
  const context: SessionContext = { config, backend, authorizer, metrics, audit, logger, limits, recordings };
  const sessions = new Set<Session>();
  let draining = false;
  let stopUpkeep: (() => void) | undefined;
  const clientOf = (request: IncomingMessage) =>
    clientAddress(request.socket.remoteAddress ?? "", request.headers["x-forwarded-for"], proxyTrust);
  const routes = [
    ...(recordings
      ? [
          recordingsRoute({
            config,
            sink: recordings,
            authorizer,
            audit,
            logger,
            preAuth,
            clientOf,
            tokenOf: tokenFromRequest,
          }),
        ]
      : []),
    targetsRoute({ config, backend, authorizer, audit, logger, preAuth, clientOf, tokenOf: tokenFromRequest }),
    ...(options.routes ?? []),
  ];

  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: config.maxFrameBytes,
    perMessageDeflate: false,
    // The session checks text frames itself, to answer bad UTF-8 with Entry's CLOSE (see Session.onMessage).
    skipUTF8Validation: true,
    // Never echo the token subprotocol back; select ours if offered.
    handleProtocols: (offered) => (offered.has(SUBPROTOCOL) ? SUBPROTOCOL : false),
  });
  wss.on("headers", (headers) => headers.push(`${VERSION_HEADER}: ${VERSION}`));

  const plain = (response: ServerResponse, status: number, text: string) =>
    void response.writeHead(status, { "content-type": "text/plain" }).end(text);

  async function handleMonitoring(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = new URL(request.url ?? "/", "http://gateway").pathname;
    if (path === "/healthz") return plain(response, 200, "ok\n");
    if (path === "/readyz") {
      if (draining) return plain(response, 503, "draining\n");
      try {
        await backend.check();
        return plain(response, 200, "ready\n");
      } catch (error) {
        logger.log("warn", "backend unreachable", { error: errorMessage(error) });
        return plain(response, 503, "backend unreachable\n");
      }
    }
    if (path === "/metrics") {
      return void response
        .writeHead(200, { "content-type": metrics.registry.contentType })
        .end(await metrics.registry.metrics());
    }
    plain(response, 404, "not found\n");
  }

  async function handlePublic(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = new URL(request.url ?? "/", "http://gateway").pathname;
    if (path === "/healthz") return plain(response, 200, "ok\n");
    // The version alone (no build, backend or settings), unauthenticated, for `entryway version`:
    // at /version, and for a GET of the endpoint without an upgrade, which every exposure routes.
    if (path === "/version" || (path === config.path && request.method === "GET"))
      return void response
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ version: VERSION }) + "\n");
    for (const route of routes) {
      if (await route(request, response)) return;
    }
    plain(response, 404, "not found\n");
  }

  const serve = (handle: (request: IncomingMessage, response: ServerResponse) => Promise<void>) =>
    http.createServer((request, response) => {
      handle(request, response).catch((error) => {
        logger.log("error", "http handler failed", { path: request.url, error: errorMessage(error) });
        if (!response.headersSent) response.writeHead(500).end();
      });
    });
  const server = serve(handlePublic);
  const monitoringServer = serve(handleMonitoring);

  /**
   * Refuses with Entry's CLOSE message, so every client sees the reason the same way. The audit
   * record names the target as parsed, or only the path: the raw query string may hold a token.
   */
  function refuse(
    ws: WebSocket,
    request: { path: string; target?: Target; client: string },
    closeCode: string,
    reason: string,
  ): void {
    metrics.sessions.inc({ outcome: closeCode });
    const startedAt = new Date().toISOString();
    const target = request.target ? describeTarget(request.target) : request.path;
    audit.write({
      event: "session.refused",
      session: randomUUID(),
      target,
      client: request.client,
      startedAt,
      closeCode,
      reason,
    });
    ws.send(encodeResponse({ msgType: ResponseType.CLOSE, content: Buffer.from(reason), closeCode }));
    ws.close(1000);
  }

  /** Answers an upgrade with a plain HTTP status: no WebSocket is set up. */
  function reject(socket: Duplex, status: 403 | 404 | 429 | 503, client?: string, why?: string): void {
    if (client !== undefined) logger.log("info", "upgrade refused", { client, status, reason: why });
    socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  }

  /**
   * Browsers send Origin with every WebSocket upgrade and let any page open one: only the allowed
   * origins may. Clients that are not browsers send no Origin. Without allowedOrigins, the gateway's
   * own origin as the Host header names it, and only when that names an address or localhost: a
   * page whose DNS name an attacker points at the gateway (DNS rebinding) sends a Host and an Origin
   * that agree, so a host name proves nothing; an IP address or localhost cannot be rebound.
   */
  function originAllowed(request: IncomingMessage): boolean {
    const origin = request.headers.origin;
    if (origin === undefined) return true;
    if (config.allowedOrigins.length > 0) return config.allowedOrigins.includes(origin);
    try {
      const { host, hostname } = new URL(origin);
      const bare = hostname.replace(/^\[|\]$/g, "");
      return host === request.headers.host && (isIP(bare) !== 0 || bare === "localhost");
    } catch {
      return false;
    }
  }

  server.on("upgrade", (request: IncomingMessage, socket: Duplex, head) => {
    const url = new URL(request.url ?? "/", "http://gateway");
    if (url.pathname !== config.path) return reject(socket, 404);
    if (draining) return reject(socket, 503);
    const client = clientOf(request);
    if (!originAllowed(request))
      return reject(socket, 403, client, `origin ${String(request.headers.origin).slice(0, 200)} is not allowed`);
    const admission = preAuth.admit(client);
    if (admission) return reject(socket, admission.status, client, admission.reason);
    const release = once(() => preAuth.release(client));
    socket.once("close", release);
    wss.handleUpgrade(request, socket, head, (ws) => {
      let target;
      try {
        target = parseTarget(url, request.headers, backend.name);
      } catch (error) {
        if (!(error instanceof TargetError)) throw error;
        release();
        return refuse(ws, { path: url.pathname, client }, "bad-request", error.message);
      }
      if (target.kind !== "docker" && config.gatewayNamespace && target.namespace === config.gatewayNamespace) {
        release();
        return refuse(
          ws,
          { path: url.pathname, target, client },
          "denied",
          `permission denied: namespace ${target.namespace} is the gateway's own`,
        );
      }
      if (target.kind !== "docker" && config.refusedNamespaces.includes(target.namespace)) {
        release();
        return refuse(
          ws,
          { path: url.pathname, target, client },
          "denied",
          `permission denied: namespace ${target.namespace} belongs to the stack; the gateway does not enter it`,
        );
      }
      const command = url.searchParams.getAll("command");
      if (command.length > 0 && !config.allowCommand) {
        release();
        return refuse(
          ws,
          { path: url.pathname, target, client },
          "bad-request",
          "this gateway does not accept a command",
        );
      }
      // Pipe mode (tty=false) is an extension: Entry's clients never send it and get the TTY.
      const tty = url.searchParams.get("tty") ?? "true";
      if (tty !== "true" && tty !== "false") {
        release();
        return refuse(ws, { path: url.pathname, target, client }, "bad-request", "tty must be true or false");
      }
      // A debug container (an extension) is checked against the allow-list before any API call.
      let debug;
      try {
        debug = parseDebugOption(url.searchParams.get("debug"), config);
      } catch (error) {
        if (!(error instanceof DebugOptionError)) throw error;
        release();
        return refuse(ws, { path: url.pathname, target, client }, "bad-request", error.message);
      }
      const session = new Session(
        ws,
        { target, token: tokenFromRequest(request), command, clientAddress: client, tty: tty === "true", debug },
        context,
      );
      sessions.add(session);
      void session.authSettled.then(release);
      void session.finished.then(() => sessions.delete(session));
      void session.start();
    });
  });

  const listenOn = (target: http.Server, port: number, host: string) =>
    new Promise<AddressInfo>((resolve, reject) => {
      target.once("error", reject);
      target.listen(port, host, () => resolve(target.address() as AddressInfo));
    });

  return {
    server,
    monitoringServer,
    metrics,
    sessions,
    async listen() {
      // The sink's upkeep: the directory's retention cleanup, or the bucket's uploads of stopped gateways.
      if (recordings) stopUpkeep ??= recordings.maintain();
      // An ephemeral public port (port 0: tests, benchmarks) makes the monitoring port ephemeral too.
      await listenOn(monitoringServer, config.port === 0 ? 0 : config.metricsPort, config.metricsHost);
      return listenOn(server, config.port, config.host);
    },
    async shutdown(reason = "the gateway is shutting down") {
      draining = true;
      stopUpkeep?.();
      server.close(); // stop accepting; open sessions are ended below
      monitoringServer.close();
      const open = [...sessions];
      logger.log("info", "draining", { sessions: open.length });
      const drained = Promise.all(open.map((s) => s.shutdown(reason)));
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([drained, new Promise((resolve) => (timer = setTimeout(resolve, config.drainTimeoutMs)))]);
      clearTimeout(timer);
      for (const client of wss.clients) client.terminate();
      server.closeAllConnections();
      monitoringServer.closeAllConnections();
      await audit.close();
    },
  };
}
