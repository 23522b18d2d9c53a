// The bed both client tests use: a private podman (the gateway engineer's helper) serving the Docker
// Engine API, one busybox container, and a real gateway on loopback with the Docker backend, a token
// authorizer that allows "user:<name>" tokens, and (for the web test) the web terminal's routes.
import type { AuditEvent } from "../../src/audit.js";
import type { Authorizer } from "../../src/auth/authorizer.js";
import { dockerBackend } from "../../src/backends/docker.js";
import { defaultConfig, type GatewayConfig } from "../../src/config.js";
import { createGateway, type Gateway, type RouteHandler } from "../../src/server.js";
import { tokenAuthorizer } from "../helpers/gateway.js";
import { podmanAvailable, startPodman, type Podman } from "../helpers/podman.js";

export { podmanAvailable };

export interface ClientBed {
  podman: Podman;
  gateway: Gateway;
  config: GatewayConfig;
  /** The gateway's base URL, http://127.0.0.1:<port>. */
  base: string;
  container: string;
  audit: AuditEvent[];
  stop(): Promise<void>;
}

export interface BedOptions {
  overrides?: Partial<GatewayConfig>;
  /** Default: tokens "user:<name>" are allowed, others denied. */
  authorizer?: Authorizer;
  /** Extra HTTP routes, given the gateway's config. */
  routes?: (config: GatewayConfig) => RouteHandler[];
}

export interface BedGateway {
  gateway: Gateway;
  config: GatewayConfig;
  base: string;
  audit: AuditEvent[];
}

/** A gateway on loopback in front of the given podman. */
export async function startBedGateway(podman: Podman, options: BedOptions = {}): Promise<BedGateway> {
  const config: GatewayConfig = { ...defaultConfig, host: "127.0.0.1", port: 0, backend: "docker", logLevel: "warn", ...options.overrides };
  const audit: AuditEvent[] = [];
  const gateway = createGateway({
    config,
    backend: dockerBackend(`unix://${podman.socketPath}`),
    authorizer: options.authorizer ?? tokenAuthorizer(),
    logger: { log: () => {} },
    audit: { write: (event) => void (event.event.startsWith("session.") && audit.push(event as AuditEvent)), close: async () => {} },
    routes: options.routes?.(config) ?? [],
  });
  const address = await gateway.listen();
  return { gateway, config, base: `http://127.0.0.1:${address.port}`, audit };
}

export async function startClientBed(container: string, options: BedOptions = {}): Promise<ClientBed> {
  const podman = await startPodman();
  try {
    await podman.startContainer(container);
    const { gateway, config, base, audit } = await startBedGateway(podman, options);
    return {
      podman,
      gateway,
      config,
      base,
      container,
      audit,
      async stop() {
        await gateway.shutdown("test over");
        await podman.stop();
      },
    };
  } catch (error) {
    await podman.stop();
    throw error;
  }
}
