// The Kubernetes stand-in's TokenReview and SubjectAccessReview (part of testkit/gateway/kube-standin.ts,
// which STANDS IN FOR THE KUBERNETES API SERVER AND KUBELET).
//
// TokenReview and SubjectAccessReview follow the API's own description (kubernetes/api
// authentication/v1/types.go and authorization/v1/types.go): a token is valid for the audiences it
// was made for; spec.audiences defaults to the API server's; status.audiences is the intersection.
// A SubjectAccessReview is judged on the user info TokenReview returned: RBAC matches bindings by
// user name AND groups, and authorizer webhooks see uid and extra, so the stand-in refuses a review
// that does not carry all four exactly as TokenReview gave them (a gateway that drops one gets
// decisions made for somebody else). Rules name a namespace, or "namespace/pod" for one pod only
// (RBAC resourceNames): those need the review's resourceAttributes.name.

export interface StandinUser {
  username: string;
  uid: string;
  groups: string[];
  extra: Record<string, string[]>;
  /** The audiences the token was made for (`kubectl create token --audience`). */
  audiences: string[];
}

/** The audience of a token made for the API server itself (the default service-account issuer's). */
export const API_SERVER_AUDIENCE = "https://kubernetes.default.svc.cluster.local";

export function standinUser(token: string, user: string | StandinUser): StandinUser {
  if (typeof user !== "string") return user;
  return {
    username: user,
    uid: `uid-${user}`,
    groups: ["system:authenticated"],
    extra: { "authentication.kubernetes.io/credential-id": [`JTI=${token}`] },
    audiences: ["entryway"],
  };
}

export interface SubjectAccessReviewSpec {
  user?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
  resourceAttributes?: { namespace?: string; name?: string; verb?: string; resource?: string; subresource?: string };
}

/**
 * The stand-in's judgement of one SubjectAccessReview (exported for the test that it refuses incomplete
 * reviews): create pods/exec by `execAllowed`, patch pods/ephemeralcontainers by `debugAllowed`.
 */
export function judgeAccessReview(
  spec: SubjectAccessReviewSpec,
  users: StandinUser[],
  execAllowed: Record<string, string[]>,
  debugAllowed: Record<string, string[]> = {},
): { allowed: boolean; reason?: string } {
  const user = users.find((u) => u.username === spec.user);
  if (!user) return { allowed: false, reason: `no such user ${spec.user ?? "(none)"}` };
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  const missing = [
    ["groups", same(spec.groups, user.groups)],
    ["uid", spec.uid === user.uid],
    ["extra", same(spec.extra, user.extra)],
  ]
    .filter(([, ok]) => !ok)
    .map(([field]) => field);
  if (missing.length > 0)
    return {
      allowed: false,
      reason: `the review does not carry the user's ${missing.join(", ")} as TokenReview returned them`,
    };
  const attrs = spec.resourceAttributes;
  const isExec = attrs?.verb === "create" && attrs.subresource === "exec";
  const isDebug = attrs?.verb === "patch" && attrs.subresource === "ephemeralcontainers";
  if (!attrs || attrs.resource !== "pods" || !(isExec || isDebug) || !attrs.namespace) {
    return {
      allowed: false,
      reason: "no RBAC rule allows it (not create pods/exec or patch pods/ephemeralcontainers in a namespace)",
    };
  }
  const rules = (isExec ? execAllowed : debugAllowed)[user.username] ?? [];
  const allowed =
    rules.includes(attrs.namespace) || (attrs.name !== undefined && rules.includes(`${attrs.namespace}/${attrs.name}`));
  return allowed ? { allowed } : { allowed, reason: "no RBAC rule allows it" };
}

/** The stand-in's answer to a TokenReview spec: the user the token was made for, if it was made for an audience asked for. */
export function reviewToken(
  spec: { token?: string; audiences?: string[] },
  users: Map<string, StandinUser>,
):
  | { authenticated: false; error: string }
  | { authenticated: true; user: Omit<StandinUser, "audiences">; audiences: string[] } {
  const user = users.get(spec.token ?? "");
  const wanted = spec.audiences?.length ? spec.audiences : [API_SERVER_AUDIENCE];
  const audiences = user ? user.audiences.filter((a) => wanted.includes(a)) : [];
  if (!user || audiences.length === 0)
    return { authenticated: false, error: user ? "token audiences are invalid" : "invalid bearer token" };
  const { username, uid, groups, extra } = user;
  return { authenticated: true, user: { username, uid, groups, extra }, audiences };
}
