/**
 * The stack config sections `ansibleForms` and `remoteRte` (StackConfig, components/stack) and
 * their mapping to AnsibleFormsArgs / RemoteRteArgs. The shapes mirror the chart's values of the
 * same names (charts/entryway/values.yaml) without the chart's `enabled` switches: a present
 * section is on. Tokens given here (`rteToken`, `remoteRte.token`) belong in secret config
 * (`pulumi config set --secret --path ...`); prefer existing Secrets.
 */
import type * as pulumi from "@pulumi/pulumi";
import type { StackContext } from "../shared/stack-context";
import type { AnsibleFormsArgs, AnsibleFormsSettings } from "./args";
import type { RemoteRteArgs, RemoteRteSettings } from "./remote-rte";

/** AnsibleForms with its RTE (sidecar, remote or the deprecated database mode). */
export type AnsibleFormsConfig = AnsibleFormsSettings;

/** An outbound RTE dialing an AnsibleForms app (here or in another cluster). */
export type RemoteRteConfig = RemoteRteSettings;

/** @internal */
export function ansibleFormsArgs(
  config: AnsibleFormsConfig,
  namespace: pulumi.Input<string>,
  { labels, global, dns }: StackContext = {},
): AnsibleFormsArgs {
  return { ...config, namespace, labels, global, dns };
}

/** `appTag`: the app's image tag in the same stack; the RTE follows it unless its own tag is set (as the chart's remoteRte.image.tag ""). @internal */
export function remoteRteArgs(
  config: RemoteRteConfig,
  namespace: pulumi.Input<string>,
  { labels, global, dns, appTag }: StackContext & { appTag?: string } = {},
): RemoteRteArgs {
  return { ...config, image: { ...config.image, tag: config.image?.tag || appTag }, namespace, labels, global, dns };
}
