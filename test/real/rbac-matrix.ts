/**
 * RBAC as the real API server decides it: SubjectAccessReviews for the stack's ServiceAccounts,
 * asked of the authorizer the control plane runs (Node,RBAC), against the Roles and bindings a
 * front end deployed. The same matrix serves both front ends; each run prints its table.
 */
import { AuthorizationV1Api, CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { expect } from "vitest";

export interface Deployed {
  /** Which front end deployed it (for the table's title). */
  readonly frontEnd: string;
  /** The exec gateway's namespace, when it is deployed. */
  readonly gatewayNamespace?: string;
  readonly targetNamespaces: string[];
  readonly connectNamespace?: string;
  /** Namespaces whose every ServiceAccount must hold no escalation right. */
  readonly stackNamespaces: string[];
  readonly debugContainers: boolean;
  readonly kubernetesAuthorizer: boolean;
  readonly connectTls: boolean;
}

interface Question {
  readonly who: string;
  readonly namespace: string;
  readonly verb: string;
  readonly group: string;
  readonly resource: string;
  readonly subresource?: string;
  readonly expected: boolean;
}

function clients(kubeconfig: string): { authz: AuthorizationV1Api; core: CoreV1Api } {
  const config = new KubeConfig();
  config.loadFromFile(kubeconfig);
  return { authz: config.makeApiClient(AuthorizationV1Api), core: config.makeApiClient(CoreV1Api) };
}

async function serviceAccountsIn(core: CoreV1Api, namespace: string, labelSelector?: string): Promise<string[]> {
  const list = await core.listNamespacedServiceAccount({ namespace, labelSelector });
  return list.items
    .map((sa) => `system:serviceaccount:${namespace}:${sa.metadata!.name}`)
    .filter((user) => !user.endsWith(":default"));
}

/** Asks every question; returns the printed table and the answers that were not the expected ones. */
async function rbacMatrix(
  kubeconfig: string,
  deployed: Deployed,
): Promise<{ table: string; wrong: string[]; asked: number }> {
  const { authz, core } = clients(kubeconfig);
  const questions: Question[] = [];
  const ask: Ask = (who, namespace, verb, group, resource, subresource, expected) =>
    questions.push({ who, namespace, verb, group, resource, subresource, expected });

  if (deployed.gatewayNamespace) await execGatewayQuestions(core, deployed, deployed.gatewayNamespace, ask);
  if (deployed.connectNamespace) {
    const [connect] = await serviceAccountsIn(
      core,
      deployed.connectNamespace,
      "app.kubernetes.io/name=connect-gateway",
    );
    if (!connect) throw new Error(`no CONNECT gateway ServiceAccount in ${deployed.connectNamespace}`);
    ask(connect, deployed.connectNamespace, "list", "", "secrets", undefined, deployed.connectTls);
    for (const namespace of [deployed.gatewayNamespace, ...deployed.targetNamespaces, "kube-system", "default"].filter(
      (ns): ns is string => Boolean(ns),
    )) {
      ask(connect, namespace, "list", "", "secrets", undefined, false);
      ask(connect, namespace, "get", "", "secrets", undefined, false);
    }
  }
  await noEscalation(core, deployed, ask);
  return answer(authz, deployed.frontEnd, questions);
}

type Ask = (
  who: string,
  namespace: string,
  verb: string,
  group: string,
  resource: string,
  subresource: string | undefined,
  expected: boolean,
) => void;

/** Exec where it may enter, nowhere else; reviews with the Kubernetes authorizer; debug containers only when configured. */
async function execGatewayQuestions(
  core: CoreV1Api,
  deployed: Deployed,
  gatewayNamespace: string,
  ask: Ask,
): Promise<void> {
  const [execGateway] = await serviceAccountsIn(core, gatewayNamespace, "app.kubernetes.io/name=exec-gateway");
  if (!execGateway) throw new Error(`no exec gateway ServiceAccount in ${gatewayNamespace}`);
  const elsewhere = [gatewayNamespace, deployed.connectNamespace, "kube-system", "default"].filter((ns): ns is string =>
    Boolean(ns),
  );
  for (const target of deployed.targetNamespaces) {
    ask(execGateway, target, "create", "", "pods", "exec", true);
    // The WebSocket upgrade is a GET: authorized as `get` pods/exec, then `create` (EXEC_RULES).
    ask(execGateway, target, "get", "", "pods", "exec", true);
    ask(execGateway, target, "get", "", "pods", undefined, true);
    ask(execGateway, target, "patch", "", "pods", "ephemeralcontainers", deployed.debugContainers);
    ask(execGateway, target, "create", "", "pods", "attach", false);
    ask(execGateway, target, "create", "", "pods", undefined, false);
  }
  for (const namespace of elsewhere) {
    ask(execGateway, namespace, "create", "", "pods", "exec", false);
    // Before Kubernetes 1.35 a WebSocket exec was a GET: that verb must not be granted either.
    ask(execGateway, namespace, "get", "", "pods", "exec", false);
    ask(execGateway, namespace, "patch", "", "pods", "ephemeralcontainers", false);
  }
  ask(execGateway, "", "create", "authentication.k8s.io", "tokenreviews", undefined, deployed.kubernetesAuthorizer);
  ask(
    execGateway,
    "",
    "create",
    "authorization.k8s.io",
    "subjectaccessreviews",
    undefined,
    deployed.kubernetesAuthorizer,
  );
}

/** No ServiceAccount of the stack may grant itself more, act as another, or mint tokens. */
async function noEscalation(core: CoreV1Api, deployed: Deployed, ask: Ask): Promise<void> {
  const everyone = (await Promise.all(deployed.stackNamespaces.map((ns) => serviceAccountsIn(core, ns)))).flat();
  if (everyone.length === 0) throw new Error(`no ServiceAccount in ${deployed.stackNamespaces.join(", ")}`);
  for (const who of everyone) {
    for (const namespace of ["", ...deployed.stackNamespaces, ...deployed.targetNamespaces]) {
      ask(who, namespace, "escalate", "rbac.authorization.k8s.io", "roles", undefined, false);
      ask(who, namespace, "bind", "rbac.authorization.k8s.io", "roles", undefined, false);
      ask(who, namespace, "create", "", "serviceaccounts", "token", false);
    }
    ask(who, "", "escalate", "rbac.authorization.k8s.io", "clusterroles", undefined, false);
    ask(who, "", "bind", "rbac.authorization.k8s.io", "clusterroles", undefined, false);
    for (const resource of ["users", "groups", "serviceaccounts"])
      ask(who, "", "impersonate", "", resource, undefined, false);
  }
}

async function answer(
  authz: AuthorizationV1Api,
  frontEnd: string,
  questions: Question[],
): Promise<{ table: string; wrong: string[]; asked: number }> {
  const rows: string[] = [];
  const wrong: string[] = [];
  for (const q of questions) {
    const namespaceOf = q.who.split(":")[2]!;
    const review = await authz.createSubjectAccessReview({
      body: {
        apiVersion: "authorization.k8s.io/v1",
        kind: "SubjectAccessReview",
        spec: {
          user: q.who,
          groups: ["system:serviceaccounts", `system:serviceaccounts:${namespaceOf}`, "system:authenticated"],
          resourceAttributes: {
            namespace: q.namespace || undefined,
            verb: q.verb,
            group: q.group,
            resource: q.resource,
            subresource: q.subresource,
          },
        },
      },
    });
    const allowed = review.status?.allowed === true;
    const what = `${q.verb} ${q.group ? `${q.group}/` : ""}${q.resource}${q.subresource ? `/${q.subresource}` : ""}`;
    const row = `${allowed === q.expected ? "  " : "!!"} ${allowed ? "allow" : "deny "}  ${q.who.replace("system:serviceaccount:", "")}  ${what}  in ${q.namespace || "(cluster)"}`;
    rows.push(row);
    if (allowed !== q.expected) wrong.push(row);
  }
  const table = [
    `RBAC decided by the real authorizer (${frontEnd}): ${questions.length} SubjectAccessReviews`,
    ...rows,
  ].join("\n");
  return { table, wrong, asked: questions.length };
}

/** Asks the matrix, prints its table, and expects every answer to be the expected one. */
export async function expectRbacAsDeployed(kubeconfig: string, deployed: Deployed): Promise<void> {
  const { table, wrong, asked } = await rbacMatrix(kubeconfig, deployed);
  console.log(table);
  expect(asked).toBeGreaterThan(20);
  expect(wrong).toEqual([]);
}
