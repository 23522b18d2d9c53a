/**
 * The rules of the Entryway policy pack, in the order the pack serves them: one file per rule
 * beside this one (`<rule>.ts`, its name without the `entryway-` prefix), with its tests and its
 * good and bad fixtures in `<rule>.test.ts`; what rules share is in helpers.ts. A new rule is added
 * here. ../index.ts makes the pack of this list; the tests import it from here, since importing
 * ../index.ts would start the pack's server.
 */
import type { ResourceValidationPolicy, StackValidationPolicy } from "@pulumi/policy";
import { connectDedicatedGateway } from "./connect-dedicated-gateway";
import { connectStaticClusters } from "./connect-static-clusters";
import { gatewayDebugRbac } from "./exec-gateway-debug-rbac";
import { execRbac } from "./exec-rbac";
import { noDefaultAdminPassword } from "./no-default-admin-password";
import { noExecIntoGatewayNamespace } from "./no-exec-into-gateway-namespace";
import { podSecurityRestricted } from "./pod-security-restricted";
import { rteBoundary } from "./rte-boundary";
import { rteOwnMetricsToken } from "./rte-own-metrics-token";
import { rteTagMatchesApp } from "./rte-tag-matches-app";
import { secretReadersAlone } from "./secret-readers-alone";
import { seedCredentials } from "./seed-token-references";
import { workspacePdbNoLoadBalancer } from "./workspace-pdb-no-loadbalancer";

export type { EntrywayPolicyConfig, K8sObject } from "./helpers";

export const entrywayPolicies: (ResourceValidationPolicy | StackValidationPolicy)[] = [
  podSecurityRestricted,
  rteBoundary,
  connectStaticClusters,
  connectDedicatedGateway,
  execRbac,
  noExecIntoGatewayNamespace,
  gatewayDebugRbac,
  workspacePdbNoLoadBalancer,
  noDefaultAdminPassword,
  rteTagMatchesApp,
  seedCredentials,
  rteOwnMetricsToken,
  secretReadersAlone,
];
