// The cluster decides: TokenReview authenticates the bearer token, then a SubjectAccessReview asks
// whether that user may `create` `pods/exec` in the target namespace (on the named pod when the client
// named one). The gateway's own service account needs `create` on tokenreviews and subjectaccessreviews.
//
// The TokenReview names the audiences the gateway accepts (default "entryway": users run
// `kubectl create token <sa> --audience entryway`), so a token made for the API server itself is
// refused. The API says (kubernetes/api authentication/v1/types.go, TokenReviewSpec.Audiences and
// TokenReviewStatus.Audiences): audience-aware authenticators check the token against spec.audiences,
// and a client that sets spec.audiences must check status.audiences holds one of them, because an
// authenticated review with empty status.audiences means the token is valid for the API server's
// own audience only.
//
// Reviewers of recordings are known by their groups: TokenReviewStatus.User (UserInfo.Groups, "the
// names of groups this user is a part of", same file).
import { AuthenticationV1Api, AuthorizationV1Api, type KubeConfig, type V1UserInfo } from "@kubernetes/client-node";
import { failClosed, identifyFailClosed, type Authorizer, type Identity } from "./authorizer.js";

export function kubernetesAuthorizer(kubeConfig: KubeConfig, audiences: string[]): Authorizer {
  if (audiences.length === 0) throw new Error("tokenAudiences must name at least one audience");
  const authentication = kubeConfig.makeApiClient(AuthenticationV1Api);
  const authorization = kubeConfig.makeApiClient(AuthorizationV1Api);
  /** The TokenReview's user (with uid, groups, extra), or why the token is refused. */
  async function review(token: string): Promise<{ ok: true; user: string; info: V1UserInfo } | { ok: false; reason: string; detail?: string }> {
    const { status } = await authentication.createTokenReview({
      body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", spec: { token, audiences } },
    });
    const user = status?.user?.username;
    if (!status?.authenticated || !user) return { ok: false, reason: "token rejected", ...(status?.error ? { detail: status.error } : {}) };
    if (!status.audiences?.some((audience) => audiences.includes(audience))) {
      return { ok: false, reason: `token rejected: not made for audience ${audiences.join(" or ")} (kubectl create token --audience ${audiences[0]})` };
    }
    return { ok: true, user, info: status.user! };
  }
  const { authorize } = failClosed("kubernetes", async ({ token, target }) => {
    if (target.kind === "docker") return { allow: false, reason: "the kubernetes authorizer only covers Kubernetes targets" };
    const reviewed = await review(token);
    if (!reviewed.ok) return { allow: false, reason: reviewed.reason, ...(reviewed.detail ? { detail: reviewed.detail } : {}) };
    const { user, info } = reviewed;
    const access = await authorization.createSubjectAccessReview({
      body: {
        apiVersion: "authorization.k8s.io/v1",
        kind: "SubjectAccessReview",
        spec: {
          user,
          groups: info.groups,
          uid: info.uid,
          extra: info.extra,
          resourceAttributes: {
            namespace: target.namespace,
            verb: "create",
            resource: "pods",
            subresource: "exec",
            ...(target.kind === "pod" ? { name: target.pod } : {}),
          },
        },
      },
    });
    if (access.status?.allowed) return { allow: true, user };
    const why = access.status?.reason ? `: ${access.status.reason}` : "";
    return { allow: false, reason: `${user} may not exec in namespace ${target.namespace}${why}`, user };
  });
  // Groups as the API server authenticated them (TokenReviewStatus.user.groups).
  const identify = identifyFailClosed("kubernetes", async ({ token }): Promise<Identity> => {
    const reviewed = await review(token);
    if (!reviewed.ok) return { known: false, reason: reviewed.reason, ...(reviewed.detail ? { detail: reviewed.detail } : {}) };
    return { known: true, user: reviewed.user, groups: reviewed.info.groups ?? [] };
  });
  return { authorize, identify };
}
