/**
 * The Entryway CrossGuard policy pack: `pulumi preview --policy-pack policies` (see docs/policy-pack.md).
 * The rules live in rules.ts as pure checks over Kubernetes objects, tested without the CLI.
 */
import { PolicyPack } from "@pulumi/policy";
import { entrywayPolicies } from "./rules";

new PolicyPack("entryway", { policies: entrywayPolicies });
