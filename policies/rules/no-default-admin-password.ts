/**
 * `entryway-no-default-admin-password`, mandatory: the default AnsibleForms admin password never
 * appears in any object (plain or base64, in a Secret, a ConfigMap or anywhere else), and an
 * AnsibleForms app container always gets ADMIN_PASSWORD from a Secret: unset, the app falls back to
 * the public default.
 *
 * Upstream: ansibleforms/ansibleforms server/config/app.config.js
 * (`adminPassword: process.env.ADMIN_PASSWORD || "AnsibleForms!123"`), the admin password its
 * documentation publishes (docs/ansibleforms.md, "Secrets").
 */
import { containersOf, label, podTemplate, resourcePolicy, type K8sObject, type Obj } from "./helpers";

/** The upstream default AnsibleForms admin password: it must never be deployed. */
export const DEFAULT_ANSIBLEFORMS_ADMIN_PASSWORD = "AnsibleForms!123";

function containsDefaultPassword(node: unknown): boolean {
  const encoded = Buffer.from(DEFAULT_ANSIBLEFORMS_ADMIN_PASSWORD).toString("base64");
  const text = JSON.stringify(node ?? null);
  return text.includes(DEFAULT_ANSIBLEFORMS_ADMIN_PASSWORD) || text.includes(encoded);
}

export function checkNoDefaultAdminPassword(o: K8sObject): string[] {
  const problems: string[] = [];
  if (containsDefaultPassword(o))
    problems.push(
      `${label(o)}: holds the default AnsibleForms admin password; generate one (the AnsibleForms component does)`,
    );
  const template = podTemplate(o);
  for (const container of containersOf(template?.spec)) {
    const isApp = /ansibleforms\/ansibleforms(:|@|$)/.test(container.image ?? "");
    if (!isApp) continue;
    const admin = (container.env ?? []).find((e: Obj) => e.name === "ADMIN_PASSWORD");
    if (!admin)
      problems.push(
        `${label(o)} container "${container.name}": ADMIN_PASSWORD is unset, so AnsibleForms falls back to its public default`,
      );
    else if (!admin.valueFrom?.secretKeyRef)
      problems.push(
        `${label(o)} container "${container.name}": ADMIN_PASSWORD must come from a Secret (valueFrom.secretKeyRef)`,
      );
  }
  return problems;
}

export const noDefaultAdminPassword = resourcePolicy(
  "entryway-no-default-admin-password",
  "The default AnsibleForms admin password never appears, and the app always gets ADMIN_PASSWORD from a Secret.",
  "mandatory",
  checkNoDefaultAdminPassword,
);
