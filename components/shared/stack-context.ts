// What the Stack hands each part's config-to-args function (execGatewayArgs, ansibleFormsArgs, ...)
// besides the part's own section: one options object, so that no caller passes optional
// arguments by position.
import type { GlobalSettings } from "./image";
import type { InClusterPeer } from "./network";

/** The stack-wide settings every part's args take. @internal */
export interface StackContext {
  /** Labels added to every object (the stack config's `labels`). */
  labels?: Record<string, string>;
  /** The global image registry (a mirror) and pull secrets. */
  global?: GlobalSettings;
  /** The cluster DNS the pods may ask (the stack config's networkPolicy.dns). */
  dns?: InClusterPeer;
}
