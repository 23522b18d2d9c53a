/**
 * A real Istio control plane on the real node (testkit/harness/node.ts): istiod (pilot-discovery from
 * the istio.io/istio module, scripts/realcp/istio) installed by `helm install` of Istio's own
 * istio-discovery chart from that module, so its injection webhook, its CA and its xDS server are
 * Istio's own. Gateways that ask for injection (`image: auto`, as the CONNECT gateway does) get
 * the proxy image made here: pilot-agent from the same module and upstream Envoy (scripts/realcp/envoy).
 *
 * What differs from a default install, and why (each a setting of the chart or of istiod, read
 * where istiod reads it; nothing of istiod's output is edited):
 * - hub and tag name the images made here (cluster-images.ts): `hub`/`tag` for istiod's own
 *   Deployment (the chart's deployment.yaml builds `{hub}/pilot:{tag}`), `global.hub`/`global.tag`
 *   for the injector (its `.ProxyImage`, `{global.hub}/proxyv2:{global.tag}`); the pull policy of the
 *   injected proxy is the CONNECT gateway's own `imagePullPolicy` (the injection keeps the pod's);
 * - three Envoy extensions that upstream Envoy lacks (Istio builds its proxy with them; upstream
 *   refuses a config naming them: "Didn't find a registered implementation"), each turned off:
 *   `istio.metadata_exchange` by istiod's PILOT_ENABLE_METADATA_EXCHANGE=false
 *   (pilot/pkg/features/telemetry.go), `istio.alpn` by PILOT_ENABLE_ALPN_FILTER=false
 *   (pilot/pkg/features/pilot.go), and `istio.stats` by the chart's `telemetry.enabled: false`
 *   (templates/_helpers.tpl default-prometheus: no default metrics provider in the mesh config);
 * - `seccompProfile: RuntimeDefault` and small requests: the cluster enforces Pod Security
 *   `restricted` (control-plane.ts), which the chart's defaults leave unset;
 * - no autoscaler (one istiod).
 */
import path from "node:path";
import { IMAGE_HUB, IMAGE_TAG } from "./cluster-images";
import { helmBinaries, helmEnv } from "./helm";
import { run } from "./process";
import { realTool } from "./realcp";

export const ISTIO_NAMESPACE = "istio-system";

/** The values of the istio-discovery release (see the header for each). */
export const ISTIOD_VALUES: readonly string[] = [
  `hub=${IMAGE_HUB}`,
  `tag=${IMAGE_TAG}`,
  `global.hub=${IMAGE_HUB}`,
  `global.tag=${IMAGE_TAG}`,
  "autoscaleEnabled=false",
  "seccompProfile.type=RuntimeDefault",
  "resources.requests.cpu=100m",
  "resources.requests.memory=256Mi",
  "telemetry.enabled=false",
  "env.PILOT_ENABLE_METADATA_EXCHANGE=false",
  "env.PILOT_ENABLE_ALPN_FILTER=false",
];

/** `helm install` of Istio's istio-discovery chart into istio-system (no waiting: the caller polls pods). */
export async function installIstiod(kubeconfig: string): Promise<void> {
  const chart = path.join(realTool("istio"), "..", "share", "charts", "istio-discovery");
  const helm = helmBinaries()[0]!;
  const args = ["install", "istiod", chart, "-n", ISTIO_NAMESPACE, "--create-namespace"];
  for (const value of ISTIOD_VALUES) args.push("--set", value);
  const installed = await run(helm.path, args, { env: helmEnv(kubeconfig) });
  if (installed.status !== 0) throw new Error(`helm install of istio-discovery failed: ${installed.stderr}`);
}
