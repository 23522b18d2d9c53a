/**
 * A component package served as the Pulumi CLI serves it, and a resource monitor for it to
 * register children with.
 *
 * The provider: @pulumi/pulumi's run-plugin launcher on the package folder (what the nodejs
 * language host runs for a `PulumiPlugin.yaml` with `runtime: nodejs`): it requires the package's
 * entry, finds the ComponentResource classes it exports and calls `componentProviderHost`
 * (cmd/run-plugin/run.js), which infers the schema with Pulumi's analyzer and serves the
 * ResourceProvider gRPC service (provider/experimental/provider.js, provider/server.js).
 *
 * The resource monitor is a stand-in for the engine's, modelled on pulumi/pulumi
 * pkg/resource/deploy/source_eval.go (`resmon`: SupportsFeature answers for the features listed
 * there; RegisterResource, RegisterResourceOutputs) and pkg/resource/deploy/step_generator.go,
 * whose checks it keeps: a parent must have been registered before its child (`checkParent`:
 * "could not find parent resource <urn>"), and a URN is registered once (`generateURN`:
 * "Duplicate resource URN '<urn>'; try giving it a unique name"). URNs are made as
 * deployment.go `generateURN` makes them (the parent's qualified type unless the parent is the
 * stack). Providers are absent here, as under the offline runtime: a custom resource's outputs
 * are what the offline runtime's mocks answer (testkit/offline/runtime.ts `mockState`), so the
 * children recorded here and there can be compared field for field. The same server answers
 * the Engine service (Log, Get/SetRootResource) the SDK calls back.
 */
import * as pulumiRpc from "@pulumi/pulumi/runtime/rpc";
import { findSecretPaths, mockState, unwrapSecrets, type RecordedResource } from "../offline/runtime";
import { Empty, grpc, pulumiRequire, startPulumiPlugin, Struct, unary, type RunningPlugin } from "./pulumi-plugin";

/* eslint-disable @typescript-eslint/no-explicit-any */
const resourcePb = pulumiRequire("@pulumi/pulumi/proto/resource_pb");
const { ResourceMonitorService } = pulumiRequire("@pulumi/pulumi/proto/resource_grpc_pb");
const providerPb = pulumiRequire("@pulumi/pulumi/proto/provider_pb");
const { ResourceProviderClient } = pulumiRequire("@pulumi/pulumi/proto/provider_grpc_pb");
const enginePb = pulumiRequire("@pulumi/pulumi/proto/engine_pb");
const { EngineService } = pulumiRequire("@pulumi/pulumi/proto/engine_grpc_pb");

const STACK_TYPE = "pulumi:pulumi:Stack";

/** The feature ids the engine's resmon.SupportsFeature answers true for (source_eval.go). */
const ENGINE_FEATURES = new Set([
  "secrets",
  "resourceReferences",
  "outputValues",
  "aliasSpecs",
  "deletedWith",
  "transforms",
  "invokeTransforms",
  "parameterization",
]);

/** A Pulumi secret on the wire (the SDK's rpc.js special signatures). */
export function secretInput(value: unknown): Record<string, unknown> {
  return { [pulumiRpc.specialSigKey]: pulumiRpc.specialSecretSig, value };
}

/**
 * Output values (what the SDK sends once the monitor supports outputValues) as the plain value,
 * or the secret envelope when the output was secret; everything else unchanged. An unknown
 * output (no value) cannot occur outside a preview, and is refused.
 */
function withoutOutputValues(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutOutputValues);
  if (typeof value !== "object" || value === null) return value;
  const object = value as Record<string, unknown>;
  if (object[pulumiRpc.specialSigKey] === pulumiRpc.specialOutputValueSig) {
    if (!("value" in object)) throw new Error("an unknown output value outside a preview");
    const inner = withoutOutputValues(object.value);
    return object.secret ? secretInput(inner) : inner;
  }
  return Object.fromEntries(Object.entries(object).map(([k, v]) => [k, withoutOutputValues(v)]));
}

function qualifiedType(urn: string): string {
  return urn.split("::")[2];
}

export interface ResourceMonitor {
  /** host:port of the monitor (and of the Engine service). */
  readonly address: string;
  readonly project: string;
  readonly stack: string;
  /** The root stack's URN, registered when the monitor starts, as the engine's program registers it first. */
  readonly stackUrn: string;
  /** Every accepted registration, in order, shaped as the offline runtime records them. */
  readonly registrations: RecordedResource[];
  /** The outputs each component registered (RegisterResourceOutputs), by URN. */
  readonly outputs: Map<string, Record<string, unknown>>;
  /** Registrations refused, with the engine's message. */
  readonly refusals: string[];
  /** Engine Log messages. */
  readonly logs: { severity: number; message: string; urn: string }[];
  close(): Promise<void>;
}

export async function startResourceMonitor(project = "entryway", stack = "test"): Promise<ResourceMonitor> {
  const stackUrn = `urn:pulumi:${stack}::${project}::${STACK_TYPE}::${project}-${stack}`;
  const registered = new Set([stackUrn]);
  const monitor: Omit<ResourceMonitor, "address" | "close"> = {
    project,
    stack,
    stackUrn,
    registrations: [],
    outputs: new Map(),
    refusals: [],
    logs: [],
  };
  let root = stackUrn;

  function refuse(callback: (error: unknown) => void, message: string): void {
    monitor.refusals.push(message);
    callback({ code: grpc.status.UNKNOWN, details: message });
  }

  const server = new grpc.Server();
  server.addService(ResourceMonitorService, {
    supportsFeature(call: any, callback: any) {
      const response = new resourcePb.SupportsFeatureResponse();
      response.setHassupport(ENGINE_FEATURES.has(call.request.getId()));
      callback(null, response);
    },
    async registerResource(call: any, callback: any) {
      try {
        const request = call.request;
        const parent: string = request.getParent();
        if (parent !== "" && !registered.has(parent)) {
          refuse(callback, `could not find parent resource ${parent}`);
          return;
        }
        const parentType = parent !== "" && qualifiedType(parent) !== STACK_TYPE ? `${qualifiedType(parent)}$` : "";
        const urn = `urn:pulumi:${stack}::${project}::${parentType}${request.getType()}::${request.getName()}`;
        if (registered.has(urn)) {
          refuse(callback, `Duplicate resource URN '${urn}'; try giving it a unique name`);
          return;
        }
        registered.add(urn);
        const wire = withoutOutputValues(request.getObject()?.toJavaScript() ?? {}) as Record<string, unknown>;
        monitor.registrations.push({
          type: request.getType(),
          name: request.getName(),
          urn,
          parent: parent || undefined,
          custom: request.getCustom(),
          inputs: unwrapSecrets(wire) as Record<string, unknown>,
          secretPaths: findSecretPaths(wire, ""),
        });
        const inputs = Object.fromEntries(Object.entries(wire).map(([k, v]) => [k, pulumiRpc.deserializeProperty(v)]));
        const state = await pulumiRpc.serializeProperties("", mockState(request.getType(), request.getName(), inputs));
        const response = new resourcePb.RegisterResourceResponse();
        response.setUrn(urn);
        response.setId(request.getCustom() ? `${request.getName()}-id` : "");
        response.setObject(Struct.fromJavaScript(state));
        callback(null, response);
      } catch (error) {
        callback(error);
      }
    },
    registerResourceOutputs(call: any, callback: any) {
      const urn: string = call.request.getUrn();
      if (!registered.has(urn)) {
        refuse(callback, `cannot complete a resource '${urn}' that was never registered`);
        return;
      }
      const wire = withoutOutputValues(call.request.getOutputs()?.toJavaScript() ?? {});
      monitor.outputs.set(urn, unwrapSecrets(wire) as Record<string, unknown>);
      callback(null, new Empty());
    },
  });
  server.addService(EngineService, {
    log(call: any, callback: any) {
      monitor.logs.push({
        severity: call.request.getSeverity(),
        message: call.request.getMessage(),
        urn: call.request.getUrn(),
      });
      callback(null, new Empty());
    },
    getRootResource(_call: any, callback: any) {
      const response = new enginePb.GetRootResourceResponse();
      response.setUrn(root);
      callback(null, response);
    },
    setRootResource(call: any, callback: any) {
      root = call.request.getUrn();
      callback(null, new enginePb.SetRootResourceResponse());
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error: Error | null, p: number) =>
      error ? reject(error) : resolve(p),
    ),
  );
  return {
    ...monitor,
    address: `127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
}

export interface ComponentProviderHost {
  readonly plugin: RunningPlugin;
  readonly client: any;
  stop(): void;
}

/** Starts the package in `packageDir` as the CLI starts a component provider, told of `engineAddress`. */
export async function startComponentProviderHost(
  packageDir: string,
  engineAddress: string,
): Promise<ComponentProviderHost> {
  const plugin = await startPulumiPlugin("run-plugin", [packageDir, engineAddress], packageDir);
  const client = new ResourceProviderClient(plugin.address, grpc.credentials.createInsecure());
  return {
    plugin,
    client,
    stop: () => {
      client.close();
      plugin.stop();
    },
  };
}

/** GetSchema (version 0, as the CLI asks for it), parsed. */
export async function getSchema(host: ComponentProviderHost): Promise<Record<string, any>> {
  const request = new providerPb.GetSchemaRequest();
  request.setVersion(0);
  const response = await unary<any>(host.client, "getSchema", request);
  return JSON.parse(response.getSchema());
}

export interface Constructed {
  readonly urn: string;
  /** The component's outputs as Construct returned them, secrets unwrapped. */
  readonly state: Record<string, unknown>;
  /** What the monitor recorded while Construct ran: the component and its descendants. */
  readonly registrations: RecordedResource[];
}

/**
 * Construct, as the engine sends it for a component of a remote package (an update, not a
 * preview), the children registering with `monitor`. `inputs` are wire values (see secretInput).
 * `dependencies`: per input, the URNs of the resources its value came from, which the engine
 * sends as inputDependencies (pulumi/pulumi sdk/go/common/resource/plugin/provider_plugin.go
 * `Construct`, from the program's propertyDependencies): an input with any is handed to the
 * component as an Output (@pulumi/pulumi provider/server.js `deserializeInputs`), as
 * `gateway: ${connect.registration}` is in a YAML program.
 */
export async function construct(
  host: ComponentProviderHost,
  monitor: ResourceMonitor,
  component: {
    type: string;
    name: string;
    inputs: Record<string, unknown>;
    parent?: string;
    dependencies?: Record<string, string[]>;
  },
): Promise<Constructed> {
  const request = new providerPb.ConstructRequest();
  request.setProject(monitor.project);
  request.setStack(monitor.stack);
  request.setOrganization("organization");
  request.setDryrun(false);
  request.setParallel(8);
  request.setMonitorendpoint(monitor.address);
  request.setType(component.type);
  request.setName(component.name);
  request.setParent(component.parent ?? monitor.stackUrn);
  request.setInputs(Struct.fromJavaScript(component.inputs));
  for (const [input, urns] of Object.entries(component.dependencies ?? {})) {
    const dependencies = new providerPb.ConstructRequest.PropertyDependencies();
    dependencies.setUrnsList(urns);
    request.getInputdependenciesMap().set(input, dependencies);
  }
  const before = monitor.registrations.length;
  const response = await unary<any>(host.client, "construct", request);
  const state = withoutOutputValues(response.getState()?.toJavaScript() ?? {});
  return {
    urn: response.getUrn(),
    state: unwrapSecrets(state) as Record<string, unknown>,
    registrations: monitor.registrations.slice(before),
  };
}
