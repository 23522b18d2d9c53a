// The bed both client tests use: a private podman (the gateway engineer's helper) serving the Docker
// Engine API, one busybox container, and a real gateway on loopback with the Docker backend and a
// token authorizer that allows "user:<name>" tokens.
import { dockerBackend } from "../../src/backends/docker.js";
import type { GatewayConfig } from "../../src/config.js";
import { startGateway, tokenAuthorizer, type TestGateway } from "../helpers/gateway.js";
import { podmanAvailable, startPodman, type Podman } from "../helpers/podman.js";

export { podmanAvailable };

export interface ClientBed {
  podman: Podman;
  gateway: TestGateway;
  /** The gateway's base URL, http://127.0.0.1:<port>. */
  base: string;
  container: string;
  stop(): Promise<void>;
}

export async function startClientBed(container: string, overrides: Partial<GatewayConfig> = {}): Promise<ClientBed> {
  const podman = await startPodman();
  try {
    await podman.startContainer(container);
    const gateway = await startGateway(dockerBackend(`unix://${podman.socketPath}`), tokenAuthorizer(), overrides);
    return {
      podman,
      gateway,
      base: gateway.base,
      container,
      async stop() {
        await gateway.stop();
        await podman.stop();
      },
    };
  } catch (error) {
    await podman.stop();
    throw error;
  }
}
