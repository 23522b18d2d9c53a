/**
 * The Helm chart's values (charts/entryway/values.yaml), as the stack config's interfaces plus what
 * only the chart has. charts/entryway/values.schema.json is generated from ChartValues
 * (`npm run generate:schema`, scripts/generate-config-schema.ts) and a test keeps the two in step,
 * so a setting is declared once, in the component's interface, and both front ends validate it.
 * Only the generator and tests read this file, so tsconfig.build.json leaves it out of dist: the
 * internal tag, which would hide it from the package, also hides ChartValues from the generator
 * (ts-json-schema-generator, SchemaGenerator.isExportType).
 *
 * What differs, and why, is all here:
 *  - a part is deployed by `enabled: true` (in the stack config, by its section's presence), so
 *    each section and each optional feature with a switch has `enabled`;
 *  - the release names the objects and their namespace, so the stack's `name`, `namespace`,
 *    `createNamespace` and `labels` are the chart's `nameOverride` and `commonLabels`;
 *  - values.yaml must give every key a default and Helm cannot remove one, so "" and 0 stand for
 *    "unset": the generator accepts each values.yaml default as is (see chartDefaultsAccepted);
 *  - the chart's `tests` (the `helm test` pods) have no Pulumi counterpart;
 *  - cross-field rules the components check in TypeScript (e.g. webhook needs a url or a Secret)
 *    are JSON Schema conditions on `enabled` here (CHART_CONDITIONS).
 */
import type { GlobalSettings, ImageSettings } from "../shared/image";
import type { ContainerResources, PodSettings } from "../shared/pod";
import type {
  ConnectGatewayConfig,
  NetworkPeersConfig,
  SshWorkspaceConfig,
  WorkspaceDefaultsConfig,
} from "../ssh/config";
import type { ExecGatewayConfig, ExecGatewayRecordingsConfig } from "../exec-gateway/config";
import type { ExecGatewayAutoscalingArgs, ExecGatewayExposureArgs } from "../exec-gateway/args";
import type { AnsibleFormsConfig, RemoteRteConfig } from "../ansibleforms/config";
import type { AnsibleFormsExpose } from "../ansibleforms/args";
import type { ConnectGatewayAutoscaling, ConnectGatewayTls } from "../ssh/connect-gateway";

/** A switch: the chart deploys a part or feature only when it is on. */
interface Switch {
  /** Deploy it. */
  enabled?: boolean;
}

/** The exec gateway's values. */
export interface ChartExecGateway extends Omit<ExecGatewayConfig, "autoscaling" | "exposure" | "recordings">, Switch {
  /** Autoscale on CPU with an HPA instead of fixed replicas. */
  autoscaling?: Partial<ExecGatewayAutoscalingArgs> & Switch;
  /** Exposure outside the cluster, always with TLS. */
  exposure?: Partial<ExecGatewayExposureArgs>;
  /** Session recordings, on a volume or in an S3 bucket. */
  recordings?: ExecGatewayRecordingsConfig & Switch;
}

/** AnsibleForms's values. */
export interface ChartAnsibleForms extends Omit<AnsibleFormsConfig, "expose">, Switch {
  /** An Ingress for the app. */
  expose?: Omit<AnsibleFormsExpose, "caBundle"> & Switch;
}

/** The outbound RTE's values. */
export interface ChartRemoteRte extends RemoteRteConfig, Switch {
  /** Always outbound. */
  mode?: "outbound";
}

/** The connect gateway's values. */
export interface ChartConnectGateway extends Omit<ConnectGatewayConfig, "autoscaling" | "tls">, Switch {
  /** A HorizontalPodAutoscaler instead of fixed replicas. */
  autoscaling?: ConnectGatewayAutoscaling & Switch;
  /** TLS on the CONNECT hop, terminated by the gateway. */
  tls?: Partial<ConnectGatewayTls> & Switch;
}

/** One workspace's values; its ssh config entry is the stack's (`sshAlias`) only. */
export type ChartWorkspace = Omit<SshWorkspaceConfig, "sshAlias">;

/** The pods `helm test` runs, one per enabled part. */
export interface ChartTests extends PodSettings {
  /** The test image. */
  image?: ImageSettings;
  /**
   * The numeric, non-root user the test pods run as.
   * @minimum 1
   * @asType integer
   */
  runAsUser?: number;
  /** Each test container's resources. */
  resources?: ContainerResources;
}

/**
 * The chart's values.
 * @title Entryway chart values
 */
export interface ChartValues {
  /**
   * Overrides the base of every object name (default: the release name).
   * @pattern ^([a-z0-9]([-a-z0-9]{0,40}[a-z0-9])?)?$
   */
  nameOverride?: string;
  /** Labels added to every object. */
  commonLabels?: Record<string, string>;
  /** What applies to every workload. */
  global?: GlobalSettings;
  /** Peers of the NetworkPolicies. */
  networkPolicy?: NetworkPeersConfig;
  /** The exec gateway (components/exec-gateway). */
  execGateway?: ChartExecGateway;
  /** AnsibleForms with its RTE. */
  ansibleForms?: ChartAnsibleForms;
  /** An outbound RTE dialing an AnsibleForms app elsewhere. */
  remoteRte?: ChartRemoteRte;
  /** The dedicated Istio CONNECT gateway for SSH workspaces. */
  connectGateway?: ChartConnectGateway;
  /** SSH workspaces registered on the connect gateway. */
  workspaces?: ChartWorkspace[];
  /** What every workspace gets unless its item says otherwise. */
  workspaceDefaults?: WorkspaceDefaultsConfig;
  /** The pods `helm test` runs, one per enabled part. */
  tests?: ChartTests;
}

/** A JSON Schema condition: when the section's values match `if`, they must match `then`. */
interface Condition {
  if: Record<string, unknown>;
  then: Record<string, unknown>;
}

/** `enabled: true` and the given properties. */
const whenEnabled = (properties: Record<string, unknown> = {}) => ({
  properties: { enabled: { const: true }, ...properties },
});

/**
 * Rules across a section's keys that the component checks in TypeScript when it is constructed
 * (components/exec-gateway: every problem collected, then thrown), and that the chart, which has
 * no code before `helm template` renders, states as JSON Schema conditions on `enabled`.
 */
export const CHART_CONDITIONS: Partial<Record<keyof ChartValues, Condition[]>> = {
  execGateway: [
    // Without clusterWide, the namespaces it may enter are named.
    { if: whenEnabled({ clusterWide: { const: false } }), then: { properties: { targetNamespaces: { minItems: 1 } } } },
    // The webhook's URL, or the Secret key that holds it: one of the two.
    {
      if: whenEnabled({ authorizer: { const: "webhook" } }),
      then: {
        properties: {
          webhook: {
            oneOf: [
              { properties: { url: { minLength: 1 }, urlSecret: { properties: { name: { maxLength: 0 } } } } },
              {
                properties: {
                  url: { maxLength: 0 },
                  urlSecret: { properties: { name: { minLength: 1 }, key: { minLength: 1 } } },
                },
              },
            ],
          },
        },
      },
    },
    {
      if: whenEnabled({ authorizer: { const: "oidc" } }),
      then: { properties: { oidc: { properties: { issuer: { minLength: 1 }, audience: { minLength: 1 } } } } },
    },
    // Exposed: a host and its certificate.
    {
      if: whenEnabled({ exposure: { properties: { kind: { enum: ["istio", "ingress"] } } } }),
      then: { properties: { exposure: { properties: { host: { minLength: 1 }, tlsSecretName: { minLength: 1 } } } } },
    },
  ],
};
