// Debug containers on the Kubernetes backend, against testkit/gateway/kube-standin.ts, which STANDS IN FOR THE
// KUBERNETES API SERVER AND KUBELET (its header names the sources it models for the
// pods/ephemeralcontainers subresource). First the stand-in refuses what the API server refuses;
// then the gateway: allow-list, the second SubjectAccessReview, and the session in the container.
import {
  ApiException,
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type V1EphemeralContainer,
} from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kubernetesAuthorizer } from "../src/auth/kubernetes.js";
import { kubernetesBackend, loadKubeConfig } from "../src/backends/kubernetes.js";
import { defaultConfig, loadConfig } from "../src/config.js";
import { parseDebugOption } from "../src/debug.js";
import { EntryClient } from "../../testkit/gateway/client.js";
import { startGateway, type TestGateway } from "../../testkit/gateway/gateway.js";
import { startKubeStandin, type KubeStandin, type StandinOptions } from "../../testkit/gateway/kube-standin.js";

const DEBUG_IMAGE = "registry.example.com/debug/busybox:1.36";
const UNPULLABLE_IMAGE = "registry.example.com/debug/missing:1";

const fixtures: StandinOptions = {
  protocol: "v5.channel.k8s.io",
  serviceAccountToken: "gateway-service-account-token",
  pods: [
    { namespace: "team-a", name: "web-0", containers: ["app", "sidecar"], runAsUser: 1000 },
    { namespace: "team-a", name: "distroless-0", containers: ["app"], distroless: true },
    { namespace: "team-a", name: "scratch-0", containers: ["app"] },
    { namespace: "team-a", name: "scratch-1", containers: ["app"] },
  ],
  users: { "alice-token": "alice", "bob-token": "bob" },
  // bob may exec but not add debug containers.
  execAllowed: { alice: ["team-a"], bob: ["team-a"] },
  debugAllowed: { alice: ["team-a"] },
  pullableImages: [DEBUG_IMAGE],
};

const debugSettings = { debugImages: [DEBUG_IMAGE, UNPULLABLE_IMAGE], debugStartTimeoutMs: 3000 };

describe("the stand-in API server's pods/ephemeralcontainers", () => {
  let kube: KubeStandin;
  let core: CoreV1Api;
  beforeAll(async () => {
    kube = await startKubeStandin(fixtures);
    core = loadKubeConfig(kube.kubeconfigPath).makeApiClient(CoreV1Api);
  });
  afterAll(() => kube?.stop());

  const patch = (pod: string, ...containers: Record<string, unknown>[]) =>
    core.patchNamespacedPodEphemeralcontainers(
      {
        namespace: "team-a",
        name: pod,
        body: { spec: { ephemeralContainers: containers as unknown as V1EphemeralContainer[] } },
      },
      setHeaderOptions("Content-Type", PatchStrategy.StrategicMergePatch),
    );
  const refusal = async (promise: Promise<unknown>) => {
    const error = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ApiException);
    const { code, body } = error as ApiException<string>;
    return { code, message: (JSON.parse(body) as { message: string }).message };
  };
  const debugger1 = { name: "debugger-1", image: DEBUG_IMAGE, command: ["sleep", "60"], targetContainerName: "app" };

  it("rejects what validateEphemeralContainers rejects, and stores nothing", async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [
        { ...debugger1, ports: [{ containerPort: 80 }] },
        /ephemeralContainers\[0\]\.ports: Forbidden: cannot be set for an Ephemeral Container/,
      ],
      [{ ...debugger1, resources: { limits: { memory: "64Mi" } } }, /\.resources: Forbidden/],
      [{ ...debugger1, livenessProbe: { exec: { command: ["true"] } } }, /\.livenessProbe: Forbidden/],
      [{ ...debugger1, readinessProbe: { exec: { command: ["true"] } } }, /\.readinessProbe: Forbidden/],
      [{ ...debugger1, name: "app" }, /\.name: Duplicate value: "app"/],
      [{ ...debugger1, targetContainerName: "nope" }, /\.targetContainerName: Not found: "nope"/],
      [{ ...debugger1, image: "" }, /\.image: Required value/],
    ];
    for (const [container, message] of cases) {
      expect(await refusal(patch("scratch-0", container))).toMatchObject({
        code: 422,
        message: expect.stringMatching(message),
      });
    }
    expect(kube.ephemeralContainers("team-a/scratch-0")).toEqual([]);
  });

  it("adds one, reports its status going from waiting to running, and refuses a change to it", async () => {
    const pod = await patch("scratch-1", debugger1);
    expect(pod.spec?.ephemeralContainers).toMatchObject([{ name: "debugger-1", targetContainerName: "app" }]);
    await expect
      .poll(
        async () =>
          (await core.readNamespacedPod({ namespace: "team-a", name: "scratch-1" })).status
            ?.ephemeralContainerStatuses?.[0]?.state?.running,
      )
      .toBeDefined();
    expect(kube.ephemeralTransitions.filter((t) => t.pod === "team-a/scratch-1").map((t) => t.state)).toEqual([
      "waiting:ContainerCreating",
      "running",
    ]);
    // The same spec again changes nothing (accepted); another image for the same name is refused.
    await patch("scratch-1", debugger1);
    expect(await refusal(patch("scratch-1", { ...debugger1, image: "busybox:2" }))).toMatchObject({
      code: 422,
      message: expect.stringMatching(/existing ephemeral containers "debugger-1" may not be changed/),
    });
    expect(kube.ephemeralContainers("team-a/scratch-1")).toMatchObject([{ image: DEBUG_IMAGE }]);
    // A second one with the first one's name is the same kind of change, and "debugger-1" stays unique.
    expect(await refusal(patch("scratch-1", { ...debugger1, command: ["sh"] }))).toMatchObject({ code: 422 });
  });

  it("answers 404 for an unknown pod, and leaves an image it cannot pull waiting", async () => {
    expect(await refusal(patch("ghost", debugger1))).toMatchObject({ code: 404, message: 'pods "ghost" not found' });
    await patch("scratch-0", { ...debugger1, name: "stuck", image: UNPULLABLE_IMAGE });
    await expect
      .poll(() => kube.ephemeralTransitions.filter((t) => t.container === "stuck").map((t) => t.state))
      .toEqual(["waiting:ContainerCreating", "waiting:ErrImagePull", "waiting:ImagePullBackOff"]);
  });
});

describe("debug option and settings", () => {
  const config = { debugImages: [DEBUG_IMAGE, "busybox:1.36"], debugDefaultImage: "" };
  it("takes only images on the allow-list, character for character", () => {
    expect(parseDebugOption(null, config)).toBeNull();
    expect(parseDebugOption("true", config)).toEqual({ when: "always", image: DEBUG_IMAGE });
    expect(parseDebugOption("auto", { ...config, debugDefaultImage: "busybox:1.36" })).toEqual({
      when: "no-shell",
      image: "busybox:1.36",
    });
    expect(parseDebugOption("busybox:1.36", config)).toEqual({ when: "always", image: "busybox:1.36" });
    for (const hostile of [
      "busybox",
      "busybox:1.36 ",
      "BUSYBOX:1.36",
      "docker.io/library/busybox:1.36",
      "busybox:1.36@sha256:" + "0".repeat(64),
      "",
    ]) {
      expect(() => parseDebugOption(hostile, config), hostile).toThrow(/is not allowed on this gateway/);
    }
    expect(() => parseDebugOption("true", { debugImages: [], debugDefaultImage: "" })).toThrow(
      /debug containers are off/,
    );
  });

  it("refuses settings that cannot work", () => {
    const load = (env: Record<string, string>) => () => loadConfig(env);
    expect(load({ ENTRYWAY_DEBUG_IMAGES: JSON.stringify(["busybox:1.36"]) })().debugImages).toEqual(["busybox:1.36"]);
    expect(load({ ENTRYWAY_DEBUG_IMAGES: '["busybox:1.36"]', ENTRYWAY_DEBUG_DEFAULT_IMAGE: "alpine" })).toThrow(
      /not one of debugImages/,
    );
    expect(load({ ENTRYWAY_DEBUG_IMAGES: '["busybox; rm -rf /"]' })).toThrow(/not an image reference/);
    expect(
      load({
        ENTRYWAY_DEBUG_IMAGES: '["busybox:1.36"]',
        ENTRYWAY_AUTHORIZER: "webhook",
        ENTRYWAY_WEBHOOK_URL: "https://x",
      }),
    ).toThrow(/need the kubernetes authorizer/);
    expect(load({ ENTRYWAY_DEBUG_IMAGES: '["busybox:1.36"]', ENTRYWAY_BACKEND: "docker" })).toThrow(
      /need the kubernetes backend/,
    );
    expect(load({ ENTRYWAY_DEBUG_IMAGES: '["busybox:1.36"]', ENTRYWAY_MAX_SESSION_SECONDS: "0" })).toThrow(
      /maxSessionSeconds > 0/,
    );
  });
});

describe("gateway: debug containers through the stand-in", () => {
  let kube: KubeStandin;
  let g: TestGateway;
  let off: TestGateway;
  beforeAll(async () => {
    kube = await startKubeStandin(fixtures);
    const kubeConfig = loadKubeConfig(kube.kubeconfigPath);
    const authorizer = kubernetesAuthorizer(kubeConfig, defaultConfig.tokenAudiences);
    g = await startGateway(kubernetesBackend(kubeConfig), authorizer, debugSettings);
    off = await startGateway(kubernetesBackend(kubeConfig), authorizer);
  });
  afterAll(async () => {
    await g?.stop();
    await off?.stop();
    await kube?.stop();
  });

  const open = (gateway: TestGateway, query: Record<string, string>, token = "alice-token") =>
    EntryClient.connect(gateway.url(query), { token });
  const calls = () => ({
    tokenReviews: kube.tokenReviews.length,
    accessReviews: kube.accessReviews.length,
    patches: kube.ephemeralPatches.length,
    execs: kube.execs.length,
  });

  it("an allowed image: the container joins the target's processes, the session runs in it, the audit names who, pod and image", async () => {
    const client = await open(g, { namespace: "team-a", pod: "web-0", container: "sidecar", debug: DEBUG_IMAGE });
    client.type("echo debug-$((40+2))\n");
    await client.waitFor(/debug-42/);
    const [debugContainer] = kube.ephemeralContainers("team-a/web-0");
    expect(debugContainer).toEqual({
      name: expect.stringMatching(/^entryway-debug-[0-9a-f]{8}$/),
      image: DEBUG_IMAGE,
      targetContainerName: "sidecar",
      command: ["sleep", "43200"],
      // kubectl debug's "restricted" profile, as the target container's user.
      securityContext: {
        runAsNonRoot: true,
        runAsUser: 1000,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ["ALL"] },
        seccompProfile: { type: "RuntimeDefault" },
      },
    });
    expect(kube.execs.at(-1)).toMatchObject({ pod: "web-0", container: debugContainer!.name, tty: true });
    expect(kube.accessReviews.at(-1)?.resourceAttributes).toEqual({
      namespace: "team-a",
      name: "web-0",
      verb: "patch",
      resource: "pods",
      subresource: "ephemeralcontainers",
    });
    expect(g.debugContainers.at(-1)).toMatchObject({
      event: "debug.container",
      user: "alice",
      pod: "team-a/web-0",
      targetContainer: "sidecar",
      container: debugContainer!.name,
      image: DEBUG_IMAGE,
    });
    client.type("exit 3\n");
    expect(await client.closed).toMatchObject({ closeCode: "exit", exitCode: 3 });
    expect(g.audit.at(-1)).toMatchObject({ event: "session.end", container: `team-a/web-0/${debugContainer!.name}` });
  });

  it("debug=auto: the target's own shell when it has one, a debug container when it is distroless", async () => {
    const before = calls();
    const withShell = await open(g, { namespace: "team-a", pod: "web-0", debug: "auto" });
    withShell.type("exit 0\n");
    expect(await withShell.closed).toMatchObject({ exitCode: 0 });
    expect(kube.execs.at(-1)).toMatchObject({ pod: "web-0", container: "app" });
    expect(kube.ephemeralPatches.length).toBe(before.patches);

    const distroless = await open(g, { namespace: "team-a", pod: "distroless-0", debug: "auto" });
    distroless.type("echo in-$((1+1))\n");
    await distroless.waitFor(/in-2/);
    expect(kube.ephemeralContainers("team-a/distroless-0")).toMatchObject([
      { image: DEBUG_IMAGE, targetContainerName: "app" },
    ]);
    distroless.type("exit 0\n");
    expect(await distroless.closed).toMatchObject({ exitCode: 0 });
  });

  it("control: a distroless target without the debug option gets no shell", async () => {
    const closed = await (await open(g, { namespace: "team-a", pod: "distroless-0" })).closed;
    expect(closed).toMatchObject({
      closeCode: "backend-error",
      reason: expect.stringMatching(/no such file or directory/),
    });
  });

  it("refuses an image off the allow-list before any API call", async () => {
    const before = calls();
    for (const image of ["busybox", `${DEBUG_IMAGE} `, "registry.example.com/debug/busybox:1.37"]) {
      const closed = await (await open(g, { namespace: "team-a", pod: "web-0", debug: image })).closed;
      expect(closed).toMatchObject({
        closeCode: "bad-request",
        reason: expect.stringMatching(/is not allowed on this gateway/),
      });
    }
    expect(calls()).toEqual(before);
    expect(g.audit.at(-1)).toMatchObject({
      event: "session.refused",
      target: "team-a/web-0",
      closeCode: "bad-request",
    });
  });

  it("refuses when the SubjectAccessReview for pods/ephemeralcontainers says no, after the exec check and before anything is created", async () => {
    const before = calls();
    const closed = await (await open(g, { namespace: "team-a", pod: "web-0", debug: "true" }, "bob-token")).closed;
    expect(closed).toMatchObject({
      closeCode: "denied",
      reason: expect.stringMatching(/bob may not add debug containers to pod team-a\/web-0/),
    });
    expect(
      kube.accessReviews
        .slice(before.accessReviews)
        .map((r) => `${r.resourceAttributes?.verb} ${r.resourceAttributes?.subresource}`),
    ).toEqual(["create exec", "patch ephemeralcontainers"]);
    expect(kube.ephemeralPatches.length).toBe(before.patches);
    expect(kube.execs.length).toBe(before.execs);
  });

  it("refuses when the feature is off, before any API call", async () => {
    const before = calls();
    const closed = await (await open(off, { namespace: "team-a", pod: "web-0", debug: "true" })).closed;
    expect(closed).toMatchObject({
      closeCode: "bad-request",
      reason: expect.stringMatching(/debug containers are off on this gateway/),
    });
    expect(calls()).toEqual(before);
  });

  it("says so when the container does not start in time (an image the kubelet cannot pull)", async () => {
    const closed = await (await open(g, { namespace: "team-a", pod: "scratch-0", debug: UNPULLABLE_IMAGE })).closed;
    expect(closed).toMatchObject({
      closeCode: "backend-error",
      reason: expect.stringMatching(
        /^debug container entryway-debug-[0-9a-f]{8} did not start within 3 s \((ErrImagePull|ImagePullBackOff)/,
      ),
    });
    expect(g.debugContainers.at(-1)).toMatchObject({ pod: "team-a/scratch-0", image: UNPULLABLE_IMAGE });
  });
});
