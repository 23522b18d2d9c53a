/** What the AnsibleForms suites share: reading pods, containers and env out of manifests. */
import { expect } from "vitest";
import { parse } from "yaml";
import type { AnsibleFormsArgs } from "../../components/ansibleforms";
import type { ObjectLike } from "../../testkit/harness/validate";

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string } };
}
export interface Container {
  name: string;
  image: string;
  env?: EnvVar[];
  ports?: { name?: string; containerPort: number }[];
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean; subPath?: string }[];
  securityContext?: Record<string, unknown>;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
}
export interface PodSpec {
  containers: Container[];
  volumes?: {
    name: string;
    persistentVolumeClaim?: { claimName: string };
    configMap?: { name: string };
    secret?: { secretName: string; defaultMode?: number };
    emptyDir?: object;
  }[];
  securityContext?: Record<string, unknown>;
  terminationGracePeriodSeconds?: number;
}

export function find(
  objects: readonly ObjectLike[],
  kind: string,
  name: string,
): ObjectLike & { spec: Record<string, unknown> } {
  const found = objects.find((o) => o.kind === kind && o.metadata?.name === name);
  if (!found)
    throw new Error(`no ${kind}/${name} among ${objects.map((o) => `${o.kind}/${o.metadata?.name}`).join(", ")}`);
  return found as ObjectLike & { spec: Record<string, unknown> };
}

export function podSpec(workload: ObjectLike): PodSpec {
  return (workload.spec as { template: { spec: PodSpec } }).template.spec;
}

export function container(pod: PodSpec, name: string): Container {
  const found = pod.containers.find((c) => c.name === name);
  if (!found) throw new Error(`no container ${name}`);
  return found;
}

export function envOf(c: Container, name: string): EnvVar | undefined {
  return c.env?.find((e) => e.name === name);
}

export function envNames(c: Container): string[] {
  return (c.env ?? []).map((e) => e.name);
}

/** The app's secrets the RTE must never hold in inbound/outbound mode. */
export const APP_ONLY_ENV = /^(DB_.*|ENCRYPTION_SECRET|ACCESS_TOKEN_SECRET|METRICS_TOKEN|ADMIN_PASSWORD|MYSQL_.*)$/;

/** The seed file the app reads: the ConfigMap mounted at CONFIG_SEED_PATH's directory, parsed. */
export function seedOf(
  objects: readonly ObjectLike[],
  pod: PodSpec,
  app: Container,
): { text: string; seed: { version: number; runners: { prune?: boolean; items: Record<string, unknown>[] } } } {
  const seedPath = envOf(app, "CONFIG_SEED_PATH")?.value;
  if (!seedPath) throw new Error("the app has no CONFIG_SEED_PATH");
  const mount = app.volumeMounts?.find((m) => seedPath.startsWith(`${m.mountPath}/`));
  if (!mount) throw new Error(`nothing mounted where ${seedPath} is`);
  const volume = pod.volumes?.find((v) => v.name === mount.name);
  if (!volume?.configMap) throw new Error(`${mount.name} is not a ConfigMap volume`);
  const configMap = find(objects, "ConfigMap", volume.configMap.name) as unknown as { data: Record<string, string> };
  const key = seedPath.slice(mount.mountPath.length + 1);
  const text = configMap.data[key];
  if (text === undefined) throw new Error(`ConfigMap ${volume.configMap.name} has no key ${key}`);
  return { text, seed: parse(text) };
}

/**
 * The RTE's mounts of the app's volume with RTE_FILES=local (and in database mode): the playbook
 * folders, read-write, each by subPath; never the whole volume (its ssh keys, .env, backups).
 */
export const PLAYBOOK_FOLDER_MOUNTS = [
  { name: "persistent", mountPath: "/app/dist/persistent/playbooks", subPath: "playbooks" },
  { name: "persistent", mountPath: "/app/dist/persistent/repositories", subPath: "repositories" },
];

/** The seed's runner for the sidecar RTE, the default: inbound, on the pod's own loopback. */
export const SIDECAR_RUNNER = {
  name: "rte",
  type: "rte",
  mode: "inbound",
  uri: "http://127.0.0.1:8001",
  token: "${RTE_TOKEN}",
  is_default: true,
} as const;

/**
 * Settings both front ends refuse with the same message: here the chart's `ansibleForms` values and
 * the AnsibleForms component's arguments have the same shape (one is invalid on purpose: `as never`).
 */
export const REFUSED_IN_BOTH: [string, Partial<AnsibleFormsArgs>, RegExp][] = [
  ["RTE_FILES=local with the remote mode", { rte: { mode: "remote", files: "local" } }, /"local" needs the app's disk/],
  ["the sidecar on the app's port", { rte: { port: 8000 } }, /its port must differ/],
  ["sshFromApp with an outbound RTE", { rte: { mode: "remote", sshFromApp: true } }, /sshFromApp needs the app's disk/],
  ["sshFromApp and sshSecret", { rte: { sshFromApp: true, sshSecret: "s" } }, /give sshFromApp or sshSecret, not both/],
  [
    "an rte runner without a token",
    { runners: { items: [{ name: "x", type: "rte", mode: "outbound" } as never] } },
    /runner "x" is an rte runner without a token/,
  ],
  [
    "duplicate runner names",
    { runners: { items: [{ name: "rte", type: "rte", mode: "outbound", token: "${RTE_TOKEN}" }] } },
    /runner "rte" is declared twice/,
  ],
  [
    "a ${VAR} the app does not have",
    { runners: { items: [{ name: "x", type: "rte", mode: "outbound", token: "${DC2_TOKEN}" }] } },
    /uses \$\{DC2_TOKEN\}, which the app container does not have/,
  ],
];

/** A container's mounts of the pod volume backed by the app's claim. */
export function appVolumeMountsOf(
  pod: PodSpec,
  c: Container,
  claim = "entryway-ansibleforms-persistent",
): NonNullable<Container["volumeMounts"]> {
  const volumes = new Set(
    (pod.volumes ?? []).filter((v) => v.persistentVolumeClaim?.claimName === claim).map((v) => v.name),
  );
  return (c.volumeMounts ?? []).filter((m) => volumes.has(m.name));
}

/** The claim backing the volume mounted at `path` in a container (a PVC or a volumeClaimTemplate). */
export function volumeAt(
  pod: PodSpec,
  c: Container,
  path: string,
): { name: string; claim?: string; emptyDir: boolean } | undefined {
  const mount = c.volumeMounts?.find((m) => path === m.mountPath || path.startsWith(`${m.mountPath}/`));
  if (!mount) return undefined;
  const volume = pod.volumes?.find((v) => v.name === mount.name);
  return {
    name: mount.name,
    claim: volume?.persistentVolumeClaim?.claimName,
    emptyDir: volume?.emptyDir !== undefined,
  };
}

/**
 * The database mode's RTE, in both front ends: no RTE_MODE, the app's DB_* settings and the
 * playbook folders; the seed declares it as a runner, so it registers none of its own
 * (RTE_REGISTER=0 at its RTE_URL) and needs no ENCRYPTION_SECRET nor ACCESS_TOKEN_SECRET.
 */
export function expectDatabaseModeRte(pod: PodSpec): void {
  const rte = container(pod, "rte");
  const app = container(pod, "ansibleforms");
  expect(envOf(rte, "RTE_MODE")).toBeUndefined();
  for (const name of ["DB_HOST", "DB_PORT", "DB_USER", "DB_PASSWORD"])
    expect(envOf(rte, name), name).toEqual(envOf(app, name));
  expect(envOf(rte, "RTE_REGISTER")?.value).toBe("0");
  expect(envOf(rte, "RTE_URL")?.value).toBe("http://127.0.0.1:8001");
  expect(envOf(rte, "ENCRYPTION_SECRET")).toBeUndefined();
  expect(envOf(rte, "ACCESS_TOKEN_SECRET")).toBeUndefined();
  expect(appVolumeMountsOf(pod, rte)).toEqual(PLAYBOOK_FOLDER_MOUNTS);
}

/** The error a render (or any run) fails with; an error of its own when it does not fail. */
export async function failure(run: () => Promise<unknown>): Promise<Error> {
  try {
    await run();
  } catch (error) {
    return error as Error;
  }
  throw new Error("the render did not fail");
}

/** The app's Deployment with the sidecar RTE: its pod, and the app's and the RTE's containers. */
export function sidecarPod(objects: ObjectLike[]) {
  const deployment = find(objects, "Deployment", "entryway-ansibleforms");
  const pod = podSpec(deployment);
  return { deployment, pod, app: container(pod, "ansibleforms"), rte: container(pod, "rte") };
}
