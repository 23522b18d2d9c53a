/**
 * Imported first by scripts/render.ts, before @pulumi/pulumi: the TypeScript compiler that
 * @pulumi/pulumi loads at start-up, on first use instead. runtime/closure/parseFunction.js requires
 * it (through typescript-shim.js) for serializeFunction, which an offline render never calls, and
 * loading it costs some 36 MiB of resident memory (docs/testing.md, Memory at 1,000 workspaces).
 * The shim's entry in the require cache becomes a Proxy that requires the real shim on its first
 * use and forwards to it, so a caller that does need TypeScript gets the same module.
 */
import Module, { createRequire } from "node:module";

const requireHere = createRequire(import.meta.url);
const requireFromPulumi = createRequire(requireHere.resolve("@pulumi/pulumi"));
const shimPath = requireFromPulumi.resolve("./typescript-shim");
const lazy = new Module(shimPath);
let shim: object | undefined;

function loadShim(): object {
  if (!shim) {
    delete requireHere.cache[shimPath];
    shim = requireFromPulumi(shimPath) as object;
    requireHere.cache[shimPath] = lazy;
  }
  return shim;
}

lazy.filename = shimPath;
lazy.loaded = true;
lazy.exports = new Proxy(
  {},
  {
    get: (_, key) => Reflect.get(loadShim(), key),
    has: (_, key) => Reflect.has(loadShim(), key),
    ownKeys: () => Reflect.ownKeys(loadShim()),
    // Configurable, as a Proxy must report a property its (empty) target does not have.
    getOwnPropertyDescriptor: (_, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(loadShim(), key);
      return descriptor && { ...descriptor, configurable: true };
    },
  },
);
if (!requireHere.cache[shimPath]) requireHere.cache[shimPath] = lazy;
