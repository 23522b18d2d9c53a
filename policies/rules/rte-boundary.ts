/**
 * `entryway-rte-boundary`, mandatory: an AnsibleForms RTE container, known by its image
 * (ansibleforms-rte-*), AF_ROLE=rte or RTE_MAX_JOBS and checked in every mode (no RTE_MODE is the
 * database mode, not a pass), holds only its own token: none of the app's secrets
 * (ENCRYPTION_SECRET, ACCESS_TOKEN_SECRET, ADMIN_PASSWORD, envFrom), DB_* only in the database
 * mode and then from a Secret, RTE_TOKEN and METRICS_TOKEN from a Secret; no other Secret by any
 * variable name (valueFrom.secretKeyRef) or key of the app's, and no Secret volume (secret or
 * projected) but its own ssh files at /home/node/.ssh, a Secret nothing else in the pod reads; a
 * database-mode RTE does not register itself (RTE_REGISTER=0); it runs as uid 1000 and mounts only
 * the app's playbook folders, never the whole of the app's volume.
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
/**
 * The only variables an RTE reads from a Secret: its token, its own metrics token and, in the
 * database mode only, the database password. Any other name (ANSIBLE_VAULT_PASS, MYSQL_PWD, ...)
 * from any Secret is a secret of someone else's.
 */
const RTE_SECRET_ENV: Record<string, (mode: string) => boolean> = {
  RTE_TOKEN: () => true,
  METRICS_TOKEN: () => true,
  DB_PASSWORD: (mode) => mode === "database",
};
/**
 * The keys of the app's Secrets (components/ansibleforms/common.ts ANSIBLEFORMS_SECRET_KEYS), which
 * no RTE variable reads, whatever its name: a token read from `encryption-secret` is the app's key.
 */
const APP_SECRET_KEYS = ["encryption-secret", "access-token-secret", "admin-password", "root-password"];
/** Where an RTE's own ssh files (its sshSecret) are mounted: the one Secret volume it may have. */
const RTE_SSH_PATH = "/home/node/.ssh";
const DATABASE_ENV = /^DB_/;
/** Where the app keeps its volume (ssh keys, .env, config, backups): an RTE never mounts it whole. */
const APP_PERSISTENT_PATH = "/app/dist/persistent";
/**
 * The app folders an RTE may mount read-write from the app's volume (RTE_FILES=local, database
 * mode): where it runs playbooks from and writes each job's extravars file (ansibleforms/ansibleforms
 * server/src/rte/ansible-core.js; components/ansibleforms/contract.ts LOCAL_FILES_FOLDERS).
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

/** The Secrets a volume brings: a secret volume's, or a projected volume's secret sources. */
function volumeSecrets(volume: Obj | undefined): string[] {
  if (!volume) return [];
  if (volume.secret) return [String(volume.secret.secretName)];
  return (volume.projected?.sources ?? []).filter((s: Obj) => s.secret).map((s: Obj) => String(s.secret.name));
}

/**
 * Every Secret an RTE container reads but its own token, metrics token and (database mode)
 * database password, by any variable name or as a volume: an env valueFrom.secretKeyRef under
 * another name or of an app key, and a Secret volume (secret, or a projected secret source) other
 * than its ssh files at /home/node/.ssh, which must be a Secret no other container of the pod and
 * none of its own variables read (a Secret mounted whole gives every key it holds).
 */
function rteSecretProblems(name: string, mode: string, container: Obj, pod: Obj): string[] {
  const problems: string[] = [];
  const envSecrets = new Set<string>();
  for (const e of (container.env ?? []) as Obj[]) {
    const ref = e.valueFrom?.secretKeyRef;
    if (!ref) continue;
    envSecrets.add(String(ref.name));
    if (!RTE_SECRET_ENV[e.name]?.(mode)) {
      if (!RTE_FORBIDDEN_ENV.some((re) => re.test(e.name)))
        problems.push(
          `${name}: must not read Secret ${ref.name} (key ${ref.key}) as ${e.name}: an RTE reads no Secret but its own token (RTE_TOKEN) and metrics token (METRICS_TOKEN)`,
        );
    } else if (APP_SECRET_KEYS.includes(ref.key)) {
      problems.push(
        `${name}: ${e.name} must not come from key ${ref.key} of Secret ${ref.name} (one of the app's secrets)`,
      );
    }
  }
  const volumes: Obj[] = pod.volumes ?? [];
  const others = containersOf(pod).filter((c) => c !== container && !isRteContainer(c));
  const readByOthers = (secret: string) =>
    others.some(
      (c) =>
        (c.env ?? []).some((e: Obj) => e.valueFrom?.secretKeyRef?.name === secret) ||
        (c.envFrom ?? []).some((e: Obj) => e.secretRef?.name === secret) ||
        (c.volumeMounts ?? []).some((m: Obj) => volumeSecrets(volumes.find((v) => v.name === m.name)).includes(secret)),
    );
  for (const mount of (container.volumeMounts ?? []) as Obj[]) {
    const secrets = volumeSecrets(volumes.find((v) => v.name === mount.name));
    if (secrets.length === 0) continue;
    const isSsh = String(mount.mountPath).replace(/\/$/, "") === RTE_SSH_PATH && secrets.length === 1;
    if (!isSsh) {
      problems.push(
        `${name}: mounts Secret ${secrets.join(", ")} (volume "${mount.name}") at ${mount.mountPath}: an RTE mounts no Secret but its own ssh files at ${RTE_SSH_PATH}`,
      );
    } else if (envSecrets.has(secrets[0]) || readByOthers(secrets[0])) {
      problems.push(
        `${name}: mounts Secret ${secrets[0]} at ${RTE_SSH_PATH}, which ${envSecrets.has(secrets[0]) ? "its token or password also comes from" : "another container of the pod reads"}: the RTE's ssh files are a Secret of their own (mounted whole, it gives every key it holds)`,
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
    problems.push(...rteSecretProblems(name, mode, container, pod));
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
  "An RTE (by image or AF_ROLE, any mode) reads no Secret but its own token and metrics token (DB_* only in database mode, from a Secret), by any variable name or as a volume (its own ssh files aside), runs as uid 1000, and mounts only the app's playbook folders.",
  "mandatory",
  checkRteBoundary,
);
