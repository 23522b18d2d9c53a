import type { CoreV1Api, V1Pod } from "@kubernetes/client-node";
import { podIsReady } from "./node-chart";
import { restrictedPod } from "./restricted-pod";

/**
 * A probe pod with another pod's labels (so the same policies select it), minus the labels its
 * controller owns and Istio's injection switch; `like` undefined: a pod labelled `probe: <name>`.
 * Resolves once it is Ready (it runs `sleep` under Pod Security restricted: testkit/harness/restricted-pod.ts).
 */
export async function probeLike(
  core: CoreV1Api,
  namespace: string,
  name: string,
  like: V1Pod | undefined,
): Promise<V1Pod> {
  const labels = { ...(like?.metadata?.labels ?? { probe: name }) };
  for (const owned of [
    "pod-template-hash",
    "controller-revision-hash",
    "statefulset.kubernetes.io/pod-name",
    "apps.kubernetes.io/pod-index",
  ])
    delete labels[owned];
  labels["sidecar.istio.io/inject"] = "false";
  await core.createNamespacedPod({
    namespace,
    body: restrictedPod(name, ["sh", "-c", "touch /tmp/ready; sleep 3600"], {}, labels),
  });
  const deadline = Date.now() + 120_000;
  for (;;) {
    const probe = await core.readNamespacedPod({ namespace, name });
    if (podIsReady(probe)) return probe;
    if (Date.now() > deadline) throw new Error(`probe ${namespace}/${name} not Ready: ${JSON.stringify(probe.status)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}
