/**
 * The Entryway CrossGuard policy pack: `pulumi preview --policy-pack policies` (see docs/policy-pack.md).
 * Each rule is a file of its own in rules/ (a pure check over Kubernetes objects, tested without the
 * CLI beside it); rules/index.ts lists them in the order the pack serves them.
 */
import { PolicyPack } from "@pulumi/policy";
import { entrywayPolicies } from "./rules";

new PolicyPack("entryway", { policies: entrywayPolicies });
