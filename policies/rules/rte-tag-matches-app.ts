/**
 * `entryway-rte-tag-matches-app`, advisory (it warns, never fails), stack-wide: every AnsibleForms
 * RTE (an ansibleforms-rte-* image, or any container with AF_ROLE=rte or RTE_MAX_JOBS) runs the
 * image tag of the AnsibleForms app in the same stack. A different tag is allowed (an RTE you
 * tested against this app's contract may lag), hence a warning and not a failure; a stack without
 * the app (a second cluster of remote RTEs) has nothing to compare.
 *
 * Upstream: ansibleforms/ansibleforms server/src/runners/README.md ("Updating an RTE"): the RTE is
 * published with every app release, its tags always match the app's, and an app refuses an RTE of
 * another contract (docs/upstream-facts.md, "Images").
 */
import { ansibleFormsContainers, label, stackPolicy, type K8sObject } from "./helpers";

/** The tag of an image reference (after the last ":" that follows the last "/"); undefined when none. */
function imageTag(image: string): string | undefined {
  const name = image.split("@")[0];
  const colon = name.lastIndexOf(":");
  return colon > name.lastIndexOf("/") ? name.slice(colon + 1) : undefined;
}

/**
 * Every RTE whose image tag differs from the app's, across the stack. Upstream publishes the RTE
 * with every app release ("its tags always match the app's") and an app refuses an RTE of another
 * contract (ansibleforms/ansibleforms server/src/runners/README.md, "Updating an RTE"), so a
 * different tag is allowed (an RTE you approved) but worth a warning. RTE and app containers are
 * known as isRteContainer / isAppContainer know them (ansibleFormsContainers), so a custom image is seen too.
 */
export function checkRteTags(objects: K8sObject[]): string[] {
  const apps: { where: string; tag: string }[] = [];
  const rtes: { where: string; tag: string }[] = [];
  for (const { object, container, rte } of ansibleFormsContainers(objects)) {
    const tag = imageTag(container.image ?? "");
    if (tag === undefined) continue;
    (rte ? rtes : apps).push({ where: `${label(object)} container "${container.name}"`, tag });
  }
  const appTags = new Set(apps.map((a) => a.tag));
  if (appTags.size === 0) return [];
  return rtes
    .filter((rte) => !appTags.has(rte.tag))
    .map(
      (rte) =>
        `${rte.where}: RTE tag ${rte.tag} differs from the AnsibleForms app's (${[...appTags].join(", ")}); upstream publishes the RTE with every app release and refuses an RTE of another contract`,
    );
}

export const rteTagMatchesApp = stackPolicy(
  "entryway-rte-tag-matches-app",
  "Every AnsibleForms RTE runs the app's image tag (advisory: a tested RTE of the same contract may lag).",
  "advisory",
  checkRteTags,
);
