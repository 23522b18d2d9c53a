// Debug containers: the client's `debug` option, judged against the gateway's allow-list before any
// API call. `debug=true` asks for the default image, `debug=<image>` for that image (it must be in
// debugImages, character for character), `debug=auto` for the default image only when the target
// has no shell. The gateway names the container itself; nothing else from the request reaches the
// ephemeral container's spec.
import type { GatewayConfig } from "./config.js";

export interface DebugRequest {
  /** "always": enter a debug container; "no-shell": only when the target cannot run /bin/sh. */
  when: "always" | "no-shell";
  image: string;
}

export class DebugOptionError extends Error {}

/** The request's debug option (null when it asked for none); throws DebugOptionError when it cannot be had. */
export function parseDebugOption(
  value: string | null,
  config: Pick<GatewayConfig, "debugImages" | "debugDefaultImage">,
): DebugRequest | null {
  if (value === null) return null;
  const images = config.debugImages;
  if (images.length === 0) throw new DebugOptionError("debug containers are off on this gateway (no debugImages)");
  const defaultImage = config.debugDefaultImage || images[0]!;
  if (value === "true") return { when: "always", image: defaultImage };
  if (value === "auto") return { when: "no-shell", image: defaultImage };
  if (images.includes(value)) return { when: "always", image: value };
  throw new DebugOptionError(
    `debug image ${JSON.stringify(value.slice(0, 200))} is not allowed on this gateway (allowed: ${images.join(", ")})`,
  );
}
