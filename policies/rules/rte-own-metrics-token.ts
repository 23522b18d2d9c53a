/**
 * `entryway-rte-own-metrics-token`, mandatory, stack-wide: an RTE's METRICS_TOKEN comes from a
 * Secret of its own, never from the Secret that holds the app's METRICS_TOKEN (in the app's pod or
 * anywhere in the stack).
 *
 * Upstream: ansibleforms/ansibleforms server/src/lib/metrics.js: the app (/api/v2/metrics) and an
 * RTE (/metrics) serve metrics only when METRICS_TOKEN is set, and only to a caller that sends it as
 * a bearer token; the RTE's token must not open the app's metrics (docs/upstream-facts.md, "Metrics").
 */
import { ansibleFormsContainers, label, stackPolicy, type K8sObject, type Obj } from "./helpers";

/**
 * Every RTE whose METRICS_TOKEN comes from the Secret holding the app's METRICS_TOKEN, across the
 * stack. Both serve metrics only with a METRICS_TOKEN (ansibleforms/ansibleforms
 * server/src/lib/metrics.js); an RTE gets a token of its own, so it never holds the app's.
 */
export function checkRteMetricsTokens(objects: K8sObject[]): string[] {
  const secretOf = (container: Obj) =>
    container.env?.find((e: Obj) => e.name === "METRICS_TOKEN")?.valueFrom?.secretKeyRef?.name as string | undefined;
  const appSecrets = new Set<string>();
  const rtes: { where: string; secret: string }[] = [];
  for (const { object, container, rte } of ansibleFormsContainers(objects)) {
    const secret = secretOf(container);
    if (secret === undefined) continue;
    const inNamespace = `${object.metadata?.namespace ?? ""}/${secret}`;
    if (rte) rtes.push({ where: `${label(object)} RTE container "${container.name}"`, secret: inNamespace });
    else appSecrets.add(inNamespace);
  }
  return rtes
    .filter((rte) => appSecrets.has(rte.secret))
    .map(
      (rte) =>
        `${rte.where}: METRICS_TOKEN comes from the app's METRICS_TOKEN Secret ${rte.secret.split("/")[1]}; an RTE gets a metrics token of its own, from another Secret`,
    );
}

export const rteOwnMetricsToken = stackPolicy(
  "entryway-rte-own-metrics-token",
  "An RTE's METRICS_TOKEN comes from a Secret of its own, never the one holding the app's METRICS_TOKEN.",
  "mandatory",
  checkRteMetricsTokens,
);
