/**
 * The facts of AnsibleForms the chart and the policy pack share with the component: the app's env
 * names the component sets and the folders a local-files RTE mounts. scripts/generate-contract.ts
 * writes them into charts/entryway/files/contract.json and policies/contract.json.
 */

/**
 * The app folders an RTE with RTE_FILES=local (or in database mode) mounts from the app's volume,
 * each by subPath at the same place under /app/dist/persistent: never the whole volume, which also
 * holds the app's ssh keys (ssh/), its managed .env, config, forms and backups. The RTE runs a
 * playbook from a playbooks repository (REPO_PATH, default persistent/repositories) or else
 * ANSIBLE_PATH (default persistent/playbooks) (ansibleforms/ansibleforms server/config/app.config.js
 * repoPath, server/src/rte/ansible-core.js resolvePlaybookDirectory). Both are mounted read-write:
 * the RTE writes each job's extravars files and .joblogs into the playbook folder
 * (ansible-core.js executeCommand). A folder missing on the volume is created by the kubelet with
 * the volume root's mode, group-writable under the pod's fsGroup (kubernetes/kubernetes
 * pkg/kubelet/kubelet_pods.go makeMounts, SafeMakeDir).
 * @internal
 */
export const LOCAL_FILES_FOLDERS = ["playbooks", "repositories"] as const;

/**
 * The variables the component sets in the app container. A secretEnv may not reuse them, and the
 * seed's credentials (token, password) may reference none of them but RTE_TOKEN: a runner row
 * whose token is ${ENCRYPTION_SECRET} would hand the app's key to whoever can read runners.
 * @internal
 */
export const COMPONENT_APP_ENV = [
  "PORT",
  "DB_HOST",
  "DB_PORT",
  "DB_USER",
  "DB_PASSWORD",
  "ENCRYPTION_SECRET",
  "ACCESS_TOKEN_SECRET",
  "ADMIN_USERNAME",
  "ADMIN_PASSWORD",
  "RTE_TOKEN",
  "RTE_QUEUE_MINUTES",
  "CONFIG_SEED_PATH",
  "CONFIG_SEED_RELOAD_SECONDS",
  "METRICS_TOKEN",
] as const;
/** The one component-set variable a seed credential may reference. @internal */
export const SEED_TOKEN_ENV = "RTE_TOKEN";
