import js from "@eslint/js";
import pulumi from "@pulumi/eslint-plugin";
import { createNodeResolver, importX } from "eslint-plugin-import-x";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["**/node_modules/**", "**/dist/**", "rendered/**", "test-artifacts/**", "gateway/web/vendor/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  {
    // No import cycles between modules' values (this rule leaves type-only imports out;
    // test/foundation/import-cycles.test.ts refuses those too): what
    // two modules both need goes in a module of its own, as components/ssh/contract.ts is for the
    // connect gateway and its workspaces. The rule parses the imported TypeScript itself, hence the
    // parser setting; the gateway's ESM sources import ./x.js for ./x.ts, hence the alias.
    plugins: { "import-x": importX },
    settings: {
      "import-x/extensions": [".ts", ".mts", ".js", ".mjs"],
      "import-x/parsers": { "@typescript-eslint/parser": [".ts", ".mts"] },
      "import-x/resolver-next": [
        createNodeResolver({
          extensions: [".ts", ".mts", ".js", ".mjs", ".json"],
          extensionAlias: { ".js": [".ts", ".js"] },
        }),
      ],
    },
    rules: { "import-x/no-cycle": "error" },
  },
  {
    // The test kit (testkit/: harnesses, stand-ins, clients, the offline runtime) is what tests,
    // benchmarks and scripts import; it imports none of them back, only the product (components/,
    // gateway/src/, policies/, packages/) and itself. The product never imports the kit.
    plugins: { "import-x": importX },
    rules: {
      "import-x/no-restricted-paths": [
        "error",
        {
          zones: [
            {
              target: "./testkit",
              from: ["./test", "./gateway/test", "./gateway/bench", "./scripts", "./bin", "./examples"],
              message: "testkit/ is imported by tests, benchmarks and scripts, never the other way",
            },
            {
              target: ["./components", "./gateway/src", "./policies/rules/!(*.test).ts", "./bin", "./index.ts"],
              from: "./testkit",
              message: "the product does not import the test kit",
            },
          ],
        },
      ],
    },
  },
  {
    // @pulumi/eslint-plugin's two rules, on as pulumi/pulumi-eks has them (nodejs/eks/.eslintrc.js):
    // an Output in a plain template literal becomes a warning text, not its value; pulumi.interpolate
    // (or apply) is the way. They read types (the project service, tsconfig.json), so they run where
    // Outputs are made: the components and the program.
    files: ["index.ts", "components/**/*.ts"],
    plugins: { "@pulumi": pulumi },
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      "@pulumi/no-output-in-template-literal": "error",
      "@pulumi/no-output-instance-in-template-literal": "error",
    },
  },
);
