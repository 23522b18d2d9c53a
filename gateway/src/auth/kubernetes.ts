// The cluster decides: TokenReview authenticates the bearer token, then a SubjectAccessReview asks
// whether that user may `create` `pods/exec` in the target namespace (on the named pod when the client
// named one). The gateway's own service account needs `create` on tokenreviews and subjectaccessreviews.
import { AuthenticationV1Api, AuthorizationV1Api, type KubeConfig } from "@kubernetes/client-node";
import { failClosed, type Authorizer } from "./authorizer.js";

export function kubernetesAuthorizer(kubeConfig: KubeConfig): Authorizer {
  const authentication = kubeConfig.makeApiClient(AuthenticationV1Api);
  const authorization = kubeConfig.makeApiClient(AuthorizationV1Api);
  return failClosed("kubernetes", async ({ token, target }) => {
    if (target.kind === "docker") return { allow: false, reason: "the kubernetes authorizer only covers Kubernetes targets" };
    const review = await authentication.createTokenReview({
      body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", spec: { token } },
    });
    const status = review.status;
    const user = status?.user?.username;
    if (!status?.authenticated || !user) return { allow: false, reason: status?.error ? `token rejected: ${status.error}` : "token rejected" };
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
