/**
 * An offline Pulumi runtime: Pulumi's own mock monitor, wrapped to record every resource a
 * program registers (type, name, parent, inputs and which inputs are secret). It stands in for
 * the engine where no Pulumi CLI or cluster exists: unit tests and `npm run render`.
 */
import { createRequire } from "node:module";
import v8 from "node:v8";
import { runInNewContext } from "node:vm";
import * as pulumi from "@pulumi/pulumi";
import * as pulumiRpc from "@pulumi/pulumi/runtime/rpc";
import * as pulumiSettings from "@pulumi/pulumi/runtime/settings";

export interface RecordedResource {
  readonly type: string;
  readonly name: string;
  readonly urn: string;
  /** The parent's URN; undefined for resources at the top of the program. */
  readonly parent?: string;
  readonly custom: boolean;
  readonly inputs: Record<string, unknown>;
  /** JSON-pointer-like paths ("spec/data/token") of inputs that were Pulumi secrets. */
  readonly secretPaths: readonly string[];
}

/** What a mocked random resource produces: recognisable, never a real secret. */
export const FAKE_RANDOM_PREFIX = "offline-random-";

const SECRET_SIG_KEY = "4dabf18193072939515e22adb298388d";
const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";

interface RegisterRequest {
  getType(): string;
  getName(): string;
  getParent(): string;
  getCustom(): boolean;
  getProvider(): string;
  getImportid(): string;
  getObject(): { toJavaScript(): Record<string, unknown> } | undefined;
}
/** The parts of Pulumi's MockMonitor (runtime/mocks.js) the offline runtime uses; newUrn is private in its types. */
interface MockMonitorLike {
  readonly mocks: pulumi.runtime.Mocks;
  readonly resources: Map<string, { urn: string; id: string | null; state: unknown }>;
  newUrn(parent: string, type: string, name: string): string;
  registerResource(req: RegisterRequest, callback: (err: unknown, res: unknown) => void): Promise<void>;
}

interface OfflineState {
  recording: RecordedResource[] | undefined;
  project: string;
  stack: string;
  stackTraces: boolean;
  /** Registrations so far (one-shot mode checks the heap every HEAP_CHECK_EVERY of them). */
  registrations: number;
  /** One-shot mode: the heap's size after the last collection it asked for, and the collector. */
  heap?: { liveBytes: number; collect: () => void };
}

const STATE_KEY = Symbol.for("entryway.offline-runtime");
type GlobalWithState = typeof globalThis & { [STATE_KEY]?: OfflineState };

function state(): OfflineState | undefined {
  return (globalThis as GlobalWithState)[STATE_KEY];
}

/**
 * Mocked outputs: inputs echoed back, plus what providers compute that components read. Random
 * values are secret, as the random provider makes them (the engine, absent here, would).
 */
export function mockState(type: string, name: string, inputs: Record<string, unknown>): Record<string, unknown> {
  switch (type) {
    case "random:index/randomPassword:RandomPassword":
    case "random:index/randomString:RandomString":
      return {
        ...inputs,
        result: pulumi.secret(`${FAKE_RANDOM_PREFIX}${name}`.padEnd(Number(inputs.length ?? 32), "x")),
      };
    case "random:index/randomBytes:RandomBytes":
      return { ...inputs, base64: pulumi.secret(Buffer.from(`${FAKE_RANDOM_PREFIX}${name}`).toString("base64")) };
    default:
      return inputs;
  }
}

/**
 * Installs the offline runtime once per process. Config is a flat map of Pulumi config keys
 * ("project:key") to strings, as the engine passes it.
 *
 * oneShot: true is for a tool that runs one program and exits (npm run render), at any number of
 * workspaces; it changes nothing the program or the renderer sees, only how much memory a large
 * program holds (docs/testing.md, Render performance):
 * - a resource's output properties (a Kubernetes object's apiVersion, kind, metadata, spec,
 *   status, ...) become Outputs when the program first reads them (outputPropertiesOnFirstRead);
 * - the process collects garbage when its heap has grown by HEAP_HEADROOM_BYTES since the last
 *   collection (collectWhenGrown).
 *
 * stackTraces: false is for one-shot tools that report a program's errors by message only (npm
 * run render). Pulumi formats a stack trace for every promise it makes (debuggablePromise in
 * @pulumi/pulumi runtime/debuggable.js keeps `new Error().stack`) and a full one for every
 * resource (Resource.callsites in resource.js: the source position it sends the engine, which
 * the offline runtime drops); under tsx each frame is mapped through source maps. Without them
 * a program's errors still fail it, with their messages, but carry no stack.
 */
export async function installOfflineRuntime(options: {
  project: string;
  stack: string;
  config?: Record<string, string>;
  secretConfigKeys?: string[];
  stackTraces?: boolean;
  oneShot?: boolean;
}): Promise<void> {
  if (state()) {
    throw new Error("the offline Pulumi runtime is already installed in this process");
  }
  pulumi.runtime.setAllConfig(options.config ?? {}, options.secretConfigKeys ?? []);
  await pulumi.runtime.setMocks(
    {
      newResource: (args) => ({
        id: args.custom ? `${args.name}-id` : undefined,
        state: mockState(args.type, args.name, args.inputs as Record<string, unknown>),
      }),
      call: (args) => args.inputs as Record<string, unknown>,
    },
    options.project,
    options.stack,
    true,
  );
  const offline: OfflineState = {
    recording: undefined,
    project: options.project,
    stack: options.stack,
    stackTraces: options.stackTraces ?? true,
    registrations: 0,
  };
  (globalThis as GlobalWithState)[STATE_KEY] = offline;

  const monitor = pulumi.runtime.getMonitor() as unknown as MockMonitorLike;
  monitor.registerResource = (req, callback) => registerWithoutProtobufAnswer(monitor, offline, req, callback);
  buildStructsOnDemand();
  if (options.oneShot) {
    outputPropertiesOnFirstRead();
    v8.setFlagsFromString("--expose-gc");
    offline.heap = { liveBytes: v8.getHeapStatistics().used_heap_size, collect: runInNewContext("gc") as () => void };
  }
}

/** The resolver runtime/rpc.js transferProperties makes per output property. */
type PropertyResolver = (value: unknown, isKnown: boolean, isSecret: boolean, deps?: unknown[], err?: unknown) => void;
interface RpcModule {
  transferProperties(onto: object, label: string, props: Record<string, unknown>): Record<string, PropertyResolver>;
}

/**
 * A program constructs every resource before any registration runs (its constructors are
 * synchronous), and for each output property of each resource the SDK makes an Output at once
 * (runtime/rpc.js transferProperties, from prepareResource in runtime/resource.js): four
 * debuggable promises (each a promise, a then, a catch, two closures and an entry in the leak
 * detector's set), the Output's own promises and closures, and a Proxy. At 1,000 workspaces that is
 * some 35,000 Outputs, 180 MB of the 375 MB live when construction ends, and the program reads 15
 * of them (a Namespace's metadata.name, a password's result, ...).
 *
 * From here on, transferProperties defines each output property as a getter that, on the first
 * read, calls the SDK's own transferProperties for that one property (the same Output, promises and
 * resolver, on the same resource) and hands it the registration's answer if that came first. A
 * property never read is never made; its answer is kept until then, as the Output's promise would
 * keep it. Registration order, and so everything rendered, is unchanged (bench:render compares the
 * files byte for byte with the merge base's).
 */
function outputPropertiesOnFirstRead(): void {
  // The module object resource.js calls through (rpc_1.transferProperties), not an ESM copy of it.
  const requireFromPulumi = createRequire(createRequire(import.meta.url).resolve("@pulumi/pulumi"));
  const rpc = requireFromPulumi("./runtime/rpc") as RpcModule;
  const transfer = rpc.transferProperties;
  rpc.transferProperties = (onto, label, props) => {
    const resolvers: Record<string, PropertyResolver> = {};
    for (const key of Object.keys(props)) {
      if (key === "id" || key === "urn") continue; // prepareResource makes those itself
      if (Object.prototype.hasOwnProperty.call(onto, key))
        throw new Error(`Property '${key}' is already initialized on target '${label}`);
      let resolve: PropertyResolver | undefined;
      let answer: Parameters<PropertyResolver> | undefined;
      Object.defineProperty(onto, key, {
        configurable: true,
        enumerable: true,
        get() {
          delete (onto as Record<string, unknown>)[key];
          resolve = transfer(onto, label, { [key]: props[key] })[key]!;
          if (answer) resolve(...answer);
          answer = undefined;
          return (onto as Record<string, unknown>)[key];
        },
      });
      resolvers[key] = (...args) => {
        if (resolve) resolve(...args);
        else answer = args;
      };
    }
    return resolvers;
  };
}

/** How often (in registrations) a one-shot process looks at its heap, and how much growth it lets be. */
const HEAP_CHECK_EVERY = 64;
const HEAP_HEADROOM_BYTES = 64 * 1024 * 1024;

/**
 * While the registrations run, the SDK makes garbage fast (serialised and deserialised copies of
 * every object, promise chains) while the program's resources are still live; V8 sizes its next
 * full collection from the live heap at the last one (up to four times it), so at 1,000 workspaces
 * the heap reached 870 MB before it collected, with some 200 MB live. A one-shot process instead
 * collects whenever its heap has grown by HEAP_HEADROOM_BYTES since the last collection: a handful
 * of full collections in a render (about 0.2 s each at this size).
 */
function collectWhenGrown(heap: NonNullable<OfflineState["heap"]>): void {
  if (v8.getHeapStatistics().used_heap_size > heap.liveBytes + HEAP_HEADROOM_BYTES) {
    heap.collect();
    heap.liveBytes = v8.getHeapStatistics().used_heap_size;
  }
}

/** The parts of google-protobuf's Struct (google/protobuf/struct_pb.js) the offline runtime uses. */
interface StructClass {
  new (): StructLike;
  fromJavaScript(value: Record<string, unknown>): StructLike;
  prototype: StructLike;
}
interface StructLike {
  toJavaScript(): Record<string, unknown>;
  getFieldsMap(noLazyCreate?: boolean): {
    set(key: string, value: unknown): unknown;
    forEach(callback: (value: unknown, key: string) => void): void;
  };
}

/**
 * Every registration wraps the resource's inputs in a protobuf Struct (runtime/resource.js
 * registerResource: `req.setObject(gstruct.Struct.fromJavaScript(resop.serializedProps))`): a
 * Value message per field, a Map per object. Under the mocks no request is ever sent; the only
 * reader is the monitor, which calls toJavaScript() on it, and at 1,000 workspaces building those
 * messages and reading them back costs seconds and much of the garbage the collector then chases.
 *
 * From here on, Struct.fromJavaScript returns a Struct that holds a plain copy of the value, made
 * as the protobuf round trip makes it (google-protobuf google/protobuf/struct_pb.js fromJavaScript
 * and toJavaScript, with jspb.Map's forEach, which visits keys in sorted order): objects with their
 * keys sorted, arrays in order, strings, numbers, booleans and null as they are, and anything else
 * an error, thrown where fromJavaScript throws it. toJavaScript gives a fresh copy; a reader that
 * asks for the protobuf fields (getFieldsMap: binary serialisation, toObject) gets them built then.
 * The Struct class is the one @pulumi/pulumi itself loads.
 */
function buildStructsOnDemand(): void {
  const requireFromPulumi = createRequire(createRequire(import.meta.url).resolve("@pulumi/pulumi"));
  const { Struct } = requireFromPulumi("google-protobuf/google/protobuf/struct_pb") as { Struct: StructClass };
  const protobufFromJavaScript = Struct.fromJavaScript;
  const plainFromJavaScript = (value: Record<string, unknown>) => new PlainStruct(structObjectCopy(value));
  // Nested objects go through Struct.fromJavaScript too: the messages are protobuf's all the way down.
  const buildMessages = (value: Record<string, unknown>) => {
    Struct.fromJavaScript = protobufFromJavaScript;
    try {
      return Struct.fromJavaScript(value);
    } finally {
      Struct.fromJavaScript = plainFromJavaScript;
    }
  };
  const fieldsOf = Struct.prototype.getFieldsMap;

  class PlainStruct extends Struct {
    #plain: Record<string, unknown>;
    #built = false;
    constructor(plain: Record<string, unknown>) {
      super();
      this.#plain = plain;
    }
    override toJavaScript(): Record<string, unknown> {
      return structCopy(this.#plain) as Record<string, unknown>;
    }
    override getFieldsMap(noLazyCreate?: boolean) {
      if (!this.#built) {
        this.#built = true;
        const fields = fieldsOf.call(this);
        buildMessages(this.#plain)
          .getFieldsMap()
          .forEach((value, key) => fields.set(key, value));
      }
      return fieldsOf.call(this, noLazyCreate);
    }
  }
  Struct.fromJavaScript = plainFromJavaScript;
}

/** A value as a protobuf Value round trip gives it back (see buildStructsOnDemand). */
function structCopy(value: unknown): unknown {
  if (value === null || typeof value === "string" || typeof value === "number" || typeof value === "boolean")
    return value;
  if (Array.isArray(value)) {
    const copy = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) copy[i] = structCopy(value[i]);
    return copy;
  }
  if (typeof value === "object") return structObjectCopy(value as Record<string, unknown>);
  throw new Error("Unexpected struct type.");
}

function structObjectCopy(object: Record<string, unknown>): Record<string, unknown> {
  const keys: string[] = [];
  for (const key in object) keys.push(key);
  keys.sort();
  const copy: Record<string, unknown> = {};
  for (const key of keys) copy[key] = structCopy(object[key]);
  return copy;
}

/**
 * What MockMonitor.registerResource does (@pulumi/pulumi runtime/mocks.js), step for step and
 * await for await (registration order, and so _resources.txt, stays the same): the inputs
 * decoded once from the request, the mock's state (the offline mocks apply no transforms), the
 * URN the mock would make, the resource kept in the mock's table (invoke getResource and
 * registerResourceOutputs read it). The mock then encodes the state into a protobuf Struct that
 * the SDK decodes straight back (runtime/resource.js reads only toJavaScript() of it); at 1,000
 * workspaces those round trips cost seconds and hundreds of MB, so the answer hands over the
 * state as it is. The resource is recorded from the same decoded inputs.
 */
async function registerWithoutProtobufAnswer(
  monitor: MockMonitorLike,
  offline: OfflineState,
  req: RegisterRequest,
  callback: (err: unknown, res: unknown) => void,
): Promise<void> {
  try {
    const serializedInputs = req.getObject()?.toJavaScript() ?? {};
    const inputs: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(serializedInputs)) {
      if (value !== undefined) inputs[key] = pulumiRpc.deserializeProperty(value);
    }
    const result = await monitor.mocks.newResource({
      type: req.getType(),
      name: req.getName(),
      inputs,
      provider: req.getProvider(),
      custom: req.getCustom(),
      id: req.getImportid(),
    });
    const urn = monitor.newUrn(req.getParent(), req.getType(), req.getName());
    const state = await pulumiRpc.serializeProperties("", result.state);
    const id = result.id ?? null;
    monitor.resources.set(urn, { urn, id, state });
    offline.recording?.push({
      type: req.getType(),
      name: req.getName(),
      urn,
      parent: req.getParent() || undefined,
      custom: req.getCustom(),
      inputs: unwrapSecrets(serializedInputs) as Record<string, unknown>,
      secretPaths: findSecretPaths(serializedInputs, ""),
    });
    callback(null, registeredAnswer(urn, id, state));
    if (offline.heap && ++offline.registrations % HEAP_CHECK_EVERY === 0) collectWhenGrown(offline.heap);
  } catch (error) {
    callback(error, undefined);
  }
}

/**
 * The RegisterResourceResponse getters runtime/resource.js reads, as its own engine-less answer
 * (registerResource, `if (!monitor)`) has them: the object is the state, the result SUCCESS (0).
 */
function registeredAnswer(urn: string, id: string | null, state: Record<string, unknown>) {
  return {
    getUrn: () => urn,
    getId: () => id || "",
    getObject: () => ({ toJavaScript: () => state }),
    getPropertydependenciesMap: () => undefined,
    getResult: () => 0,
    getUnknown: () => false,
  };
}

export function isOfflineRuntimeInstalled(): boolean {
  return state() !== undefined;
}

/** Replaces the engine's configuration (e.g. between test cases). */
export function setOfflineConfig(config: Record<string, string>, secretKeys: string[] = []): void {
  pulumi.runtime.setAllConfig(config, secretKeys);
}

// waitForRPCs is internal to @pulumi/pulumi, but the only way to know that every registration
// has finished.
const settings = pulumiSettings as unknown as { waitForRPCs(): Promise<void> };

/**
 * Runs a program and returns every resource it registered, in registration order. Fails loudly
 * when the offline runtime is not installed: without it a program "succeeds" on nothing.
 *
 * An error thrown while a resource's inputs resolve (a check inside an apply, say) fails the
 * preview under the engine; here nothing awaits those promises, so Node reports them as
 * unhandled rejections. While the program runs, those are caught and make runProgram reject with
 * the program's own message, as the preview would.
 */
export async function runProgram(program: () => unknown): Promise<RecordedResource[]> {
  const offline = state();
  if (!offline) {
    throw new Error(
      "the offline Pulumi runtime is not installed: call installOfflineRuntime() (tests: testkit/harness/setup.ts) before running a program",
    );
  }
  if (offline.recording) {
    throw new Error("another program is still being recorded; run programs one after another");
  }
  const recording: RecordedResource[] = [];
  const failures: unknown[] = [];
  const previousListeners = process.listeners("unhandledRejection");
  const collect = (reason: unknown) => failures.push(reason);
  process.removeAllListeners("unhandledRejection");
  process.on("unhandledRejection", collect);
  offline.recording = recording;
  const restoreStackTraces = offline.stackTraces ? undefined : withoutStackTraces();
  try {
    await program();
    await settings.waitForRPCs();
    // Rejections are reported after the microtask queue drains: give them one turn.
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    offline.recording = undefined;
    restoreStackTraces?.();
    process.off("unhandledRejection", collect);
    for (const listener of previousListeners) process.on("unhandledRejection", listener);
  }
  if (failures.length > 0) {
    const messages = [...new Set(failures.map((f) => (f instanceof Error ? f.message : String(f))))];
    throw new Error(messages.join("; "));
  }
  return recording;
}

/**
 * No stack frames in new errors, and stacks formatted as their first line only: Resource.callsites
 * raises Error.stackTraceLimit to Infinity for its own trace, so the limit alone does not reach
 * it; with no frames it finds no source position and sends none. Node calls a user
 * Error.prepareStackTrace instead of its own (source-mapped) formatter
 * (https://nodejs.org/api/errors.html#errorpreparestacktraceerror-trace); tsx turned source maps
 * on when it registered, before any of our code ran, and they stay off for modules loaded from
 * here on. Returns what puts all three back.
 */
function withoutStackTraces(): () => void {
  const { stackTraceLimit, prepareStackTrace } = Error;
  const { sourceMapsEnabled } = process;
  Error.stackTraceLimit = 0;
  Error.prepareStackTrace = (error: Error) => `${error.name}: ${error.message}`;
  process.setSourceMapsEnabled(false);
  return () => {
    Error.stackTraceLimit = stackTraceLimit;
    Error.prepareStackTrace = prepareStackTrace;
    process.setSourceMapsEnabled(sourceMapsEnabled);
  };
}

function isSecretEnvelope(value: unknown): value is { value: unknown } {
  return (
    typeof value === "object" && value !== null && (value as Record<string, unknown>)[SECRET_SIG_KEY] === SECRET_SIG
  );
}

/** Wire values with their secret envelopes removed (the recorded inputs). */
export function unwrapSecrets(value: unknown): unknown {
  if (isSecretEnvelope(value)) {
    return unwrapSecrets(value.value);
  }
  if (Array.isArray(value)) {
    return value.map(unwrapSecrets);
  }
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, unwrapSecrets(v)]));
  }
  return value;
}

/** The paths of a wire value's secret envelopes (the recorded secretPaths). */
export function findSecretPaths(value: unknown, path: string): string[] {
  if (isSecretEnvelope(value)) {
    return [path];
  }
  if (typeof value === "object" && value !== null) {
    return Object.entries(value).flatMap(([k, v]) => findSecretPaths(v, path ? `${path}/${k}` : k));
  }
  return [];
}
