/**
 * `entryway-rte-boundary`, mandatory: an AnsibleForms RTE container, known by its image
 * (ansibleforms-rte-*), AF_ROLE=rte or RTE_MAX_JOBS and checked in every mode (no RTE_MODE is the
 * database mode, not a pass), holds only its own token: none of the app's secrets
 * (ENCRYPTION_SECRET, ACCESS_TOKEN_SECRET, ADMIN_PASSWORD, envFrom), DB_* only in the database
 * mode and then from a Secret, RTE_TOKEN and METRICS_TOKEN from a Secret; a database-mode RTE does
 * not register itself (RTE_REGISTER=0); it runs as uid 1000 and mounts only the app's playbook
 * folders, never the whole of the app's volume.
 *
 * Upstream (ansibleforms/ansibleforms, see docs/upstream-facts.md, "AnsibleForms and its RTE"):
 * - server/src/runners/README.md ("Configuration": AF_ROLE, RTE_REGISTER; "Using a runner, step by
 *   step": a database-mode RTE registers itself, under ENCRYPTION_SECRET, unless RTE_REGISTER=0)
 *   and server/src/rte/server.js (startRte);
 * - server/config/app.config.js and server/src/rte/ansible-core.js: a playbook runs from
 *   persistent/repositories or persistent/playbooks, where the RTE writes each job's extravars;
 * - server/src/lib/metrics.js: METRICS_TOKEN guards the metrics endpoint.
 */
import { containersOf, isRteContainer, label, podTemplate, resourcePolicy, type K8sObject, type Obj } from "./helpers";

/** The app's own secrets: no RTE holds them, in any mode. */
const RTE_FORBIDDEN_ENV = [/^ENCRYPTION_SECRET$/, /^ACCESS_TOKEN_SECRET$/, /^ADMIN_PASSWORD$/];
const DATABASE_ENV = /^DB_/;
/** Where the app keeps its volume (ssh keys, .env, config, backups): an RTE never mounts it whole. */
const APP_PERSISTENT_PATH = "/app/dist/persistent";
/**
 * The app folders an RTE may mount read-write from the app's volume (RTE_FILES=local, database
 * mode): where it runs playbooks from and writes each job's extravars file (ansibleforms/ansibleforms
 * server/src/rte/ansible-core.js; components/ansibleforms/common.ts LOCAL_FILES_FOLDERS).
 */
const RTE_WRITABLE_APP_FOLDERS = ["playbooks", "repositories"];

function rteVolumeProblems(name: string, container: Obj, pod: Obj): string[] {
  const problems: string[] = [];
  const sharedWithOthers = (volume: string) =>
    containersOf(pod).some(
      (other) =>
        other !== container && !isRteContainer(other) && (other.volumeMounts ?? []).some((m: Obj) => m.name === volume),
    );
  for (const mount of container.volumeMounts ?? []) {
    const sub = mount.subPath ?? mount.subPathExpr;
    const wholeAppVolume = !sub && APP_PERSISTENT_PATH.startsWith(String(mount.mountPath).replace(/\/$/, ""));
    if (wholeAppVolume || (!sub && sharedWithOthers(mount.name))) {
      problems.push(
        `${name}: mounts the whole of volume "${mount.name}" at ${mount.mountPath}, which the app uses (its ssh keys, .env, backups); mount only the playbook folders by subPath (${RTE_WRITABLE_APP_FOLDERS.join(", ")})`,
      );
    } else if (
      sub &&
      sharedWithOthers(mount.name) &&
      mount.readOnly !== true &&
      !RTE_WRITABLE_APP_FOLDERS.includes(sub)
    ) {
      problems.push(
        `${name}: mounts ${sub} of the app's volume "${mount.name}" read-write; only ${RTE_WRITABLE_APP_FOLDERS.join(", ")} may be, anything else read-only`,
      );
    }
  }
  return problems;
}

export function checkRteBoundary(o: K8sObject): string[] {
  const template = podTemplate(o);
  if (!template) return [];
  const pod = template.spec ?? {};
  const problems: string[] = [];
  for (const container of containersOf(pod).filter(isRteContainer)) {
    const env: Obj[] = container.env ?? [];
    const mode = env.find((e) => e.name === "RTE_MODE")?.value ?? "database";
    const name = `${label(o)} RTE container "${container.name}" (${mode})`;
    if (!["inbound", "outbound", "database"].includes(mode))
      problems.push(`${name}: RTE_MODE ${JSON.stringify(mode)} is unknown (inbound or outbound)`);
    for (const e of env) {
      if (RTE_FORBIDDEN_ENV.some((re) => re.test(e.name)))
        problems.push(`${name}: must not hold ${e.name} (the RTE holds only its token)`);
      else if (DATABASE_ENV.test(e.name) && mode !== "database")
        problems.push(`${name}: must not hold ${e.name} (the RTE holds only its token)`);
      else if (e.name === "DB_PASSWORD" && !e.valueFrom?.secretKeyRef)
        problems.push(`${name}: DB_PASSWORD must come from a Secret (valueFrom.secretKeyRef)`);
      else if (e.name === "METRICS_TOKEN" && !e.valueFrom?.secretKeyRef)
        problems.push(`${name}: METRICS_TOKEN must come from a Secret of the RTE's own (valueFrom.secretKeyRef)`);
    }
    // Without ENCRYPTION_SECRET a registering RTE stores its token under upstream's public default key.
    if (mode === "database" && env.find((e) => e.name === "RTE_REGISTER")?.value !== "0") {
      problems.push(
        `${name}: a database-mode RTE must not register itself (RTE_REGISTER=0; declare its runner in the seed)`,
      );
    }
    if ((container.envFrom ?? []).length > 0)
      problems.push(`${name}: must not use envFrom (it could bring in database or encryption secrets)`);
    const token = env.find((e) => e.name === "RTE_TOKEN");
    if (!token?.valueFrom?.secretKeyRef)
      problems.push(`${name}: RTE_TOKEN must come from a Secret (valueFrom.secretKeyRef)`);
    const uid = container.securityContext?.runAsUser ?? pod.securityContext?.runAsUser;
    if (uid !== 1000) problems.push(`${name}: must run as uid 1000 (runs as ${uid ?? "the image's user"})`);
    problems.push(...rteVolumeProblems(name, container, pod));
  }
  return problems;
}

export const rteBoundary = resourcePolicy(
  "entryway-rte-boundary",
  "An RTE (by image or AF_ROLE, any mode) holds no app secrets (DB_* only in database mode, from a Secret), runs as uid 1000, takes its token from a Secret, and mounts only the app's playbook folders.",
  "mandatory",
  checkRteBoundary,
);
