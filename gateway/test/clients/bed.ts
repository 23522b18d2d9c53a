// The bed both client tests use: a private podman (the gateway engineer's helper) serving the Docker
// Engine API, one busybox container, and a real gateway on loopback with the Docker backend, a token
// authorizer that allows "user:<name>" tokens, and (for the web test) the web terminal's routes.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import type { AuditEvent } from "../../src/audit.js";
import type { Authorizer } from "../../src/auth/authorizer.js";
import { dockerBackend } from "../../src/backends/docker.js";
import { defaultConfig, type GatewayConfig } from "../../src/config.js";
import { createGateway, type Gateway, type RouteHandler } from "../../src/server.js";
import { tokenAuthorizer } from "../../../testkit/gateway/gateway.js";
import { cleanEnv } from "../../../testkit/gateway/cli-harness.js";
import { podmanAvailable, startPodman, type Podman } from "../../../testkit/gateway/podman.js";

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
  const config: GatewayConfig = {
    ...defaultConfig,
    host: "127.0.0.1",
    port: 0,
    backend: "docker",
    logLevel: "warn",
    ...options.overrides,
  };
  const audit: AuditEvent[] = [];
  const gateway = createGateway({
    config,
    backend: dockerBackend(`unix://${podman.socketPath}`),
    authorizer: options.authorizer ?? tokenAuthorizer(),
    logger: { log: () => {} },
    audit: {
      write: (event) => void (event.event.startsWith("session.") && audit.push(event as AuditEvent)),
      close: async () => {},
    },
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

/**
 * A client bed started before the suite's tests, and a home whose environment points the CLI at
 * its gateway as alice; `use` gets the three. Both are removed after the suite.
 */
export function withCliBed(
  container: string,
  homePrefix: string,
  use: (bed: ClientBed, home: string, env: NodeJS.ProcessEnv) => void,
): void {
  let bed: ClientBed | undefined;
  let home: string | undefined;
  beforeAll(async () => {
    bed = await startClientBed(container);
    home = mkdtempSync(join(tmpdir(), homePrefix));
    use(bed, home, cleanEnv(home, { ENTRYWAY_GATEWAY: bed.base, ENTRYWAY_TOKEN: "user:alice" }));
  });
  afterAll(async () => {
    await bed?.stop();
    if (home) rmSync(home, { recursive: true, force: true });
  });
}
