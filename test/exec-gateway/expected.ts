// What both front ends must render for the exec gateway, asserted by chart.test.ts and component.test.ts.

/** The webhook authorizer's URL reaches the gateway from its Secret, never as a literal. */
export const WEBHOOK_URL_ENV = {
  name: "ENTRYWAY_WEBHOOK_URL",
  valueFrom: { secretKeyRef: { name: "entryway-exec-gateway-auth", key: "webhook-url" } },
};
