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
import { AuthenticationV1Api, AuthorizationV1Api, type KubeConfig } from "@kubernetes/client-node";
import { failClosed, type Authorizer } from "./authorizer.js";

export function kubernetesAuthorizer(kubeConfig: KubeConfig, audiences: string[]): Authorizer {
  if (audiences.length === 0) throw new Error("tokenAudiences must name at least one audience");
  const authentication = kubeConfig.makeApiClient(AuthenticationV1Api);
  const authorization = kubeConfig.makeApiClient(AuthorizationV1Api);
  return failClosed("kubernetes", async ({ token, target }) => {
    if (target.kind === "docker") return { allow: false, reason: "the kubernetes authorizer only covers Kubernetes targets" };
    const review = await authentication.createTokenReview({
      body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", spec: { token, audiences } },
    });
    const status = review.status;
    const user = status?.user?.username;
    if (!status?.authenticated || !user) return { allow: false, reason: "token rejected", ...(status?.error ? { detail: status.error } : {}) };
    if (!status.audiences?.some((audience) => audiences.includes(audience))) {
      return { allow: false, reason: `token rejected: not made for audience ${audiences.join(" or ")} (kubectl create token --audience ${audiences[0]})` };
    }
    const access = await authorization.createSubjectAccessReview({
      body: {
        apiVersion: "authorization.k8s.io/v1",
        kind: "SubjectAccessReview",
        spec: {
          user,
          groups: status.user?.groups,
          uid: status.user?.uid,
          extra: status.user?.extra,
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
}
