/**
 * `entryway-workspace-pdb-no-loadbalancer`, mandatory, stack-wide: every SSH workspace (a workload
 * whose pod is labelled app.kubernetes.io/name=ssh-workspace) has a PodDisruptionBudget in its
 * namespace that selects its pod, and no LoadBalancer or NodePort Service of its own: workspaces are
 * reached only through the CONNECT gateway (docs/ssh-workspaces.md).
 *
 * Upstream:
 * - https://kubernetes.io/docs/concepts/workloads/pods/disruptions/ (a PodDisruptionBudget is what
 *   a node drain's evictions respect; without one a drain moves the workspace and cuts its sessions);
 * - https://kubernetes.io/docs/concepts/services-networking/service/#type-nodeport and
 *   #loadbalancer (either type opens the pod's port outside the cluster, past the CONNECT gateway).
 */
import { label, podTemplate, stackPolicy, WORKLOAD_KINDS, type K8sObject, type Obj } from "./helpers";

const matches = (selector: Record<string, string> | undefined, labels: Record<string, string> | undefined) =>
  !!selector && Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels?.[k] === v);

export function checkWorkspaces(objects: K8sObject[]): string[] {
  const problems: string[] = [];
  const workspaces = objects.filter(
    (o) =>
      WORKLOAD_KINDS.includes(o.kind) &&
      podTemplate(o)?.metadata?.labels?.["app.kubernetes.io/name"] === "ssh-workspace",
  );
  for (const ws of workspaces) {
    const podLabels = podTemplate(ws)?.metadata?.labels;
    const namespace = ws.metadata?.namespace;
    const pdb = objects.find(
      (o) =>
        o.kind === "PodDisruptionBudget" &&
        o.metadata?.namespace === namespace &&
        matches((o.spec as Obj | undefined)?.selector?.matchLabels, podLabels),
    );
    if (!pdb) problems.push(`${label(ws)}: an SSH workspace needs a PodDisruptionBudget selecting its pod`);
    for (const service of objects.filter((o) => o.kind === "Service" && o.metadata?.namespace === namespace)) {
      const spec = (service.spec as Obj | undefined) ?? {};
      if ((spec.type === "LoadBalancer" || spec.type === "NodePort") && matches(spec.selector, podLabels)) {
        problems.push(
          `${label(service)}: a per-workspace ${spec.type} Service; workspaces are reached only through the CONNECT gateway`,
        );
      }
    }
  }
  return problems;
}

export const workspacePdbNoLoadBalancer = stackPolicy(
  "entryway-workspace-pdb-no-loadbalancer",
  "Every SSH workspace has a PodDisruptionBudget and no LoadBalancer or NodePort Service of its own.",
  "mandatory",
  checkWorkspaces,
);
