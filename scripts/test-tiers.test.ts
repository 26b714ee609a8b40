// The quick tier (scripts/test-tiers.ts): a test is quick unless its name, its imports, its calls, or the test
// support it imports start something heavy; a slow one shares its worker unless it or its support changes the
// process's environment, directory or modules.
import { describe, expect, it } from "vitest";
import { importsOf, ownProcessBecause, slowBecause } from "./test-tiers.ts";

const files = (tree: Record<string, string>) => (file: string) => tree[file];

describe("the quick tier", () => {
  it("reads static and literal dynamic imports", () => {
    expect(
      importsOf('import { a } from "./a.ts";\nconst b = await import("../b.ts");\nimport type { C } from "c";'),
    ).toEqual(["./a.ts", "../b.ts", "c"]);
  });

  it.each([
    ["a pure unit test", { "core/x.test.ts": 'import { x } from "./x.ts";' }, undefined],
    ["an end-to-end test by name", { "local/x.e2e.test.ts": "" }, "an end-to-end test (its name)"],
    [
      "a test that starts the local stack",
      { "functions/x.test.ts": 'import { startStack } from "../local/testing/stack-fixture.ts";' },
      "the local stack",
    ],
    [
      "a test that runs a child process",
      { "cli/x.test.ts": 'import { spawn } from "node:child_process";' },
      "a child process",
    ],
    [
      "a test that drives a browser",
      { "report/x.test.ts": 'import { chromium } from "playwright-core";' },
      "a browser",
    ],
    [
      "a test whose test kit starts an emulator",
      {
        "pipeline/x.test.ts": 'import { kit } from "./x.test-kit.ts";',
        "pipeline/x.test-kit.ts": 'import { startTableEmulator } from "../local/emulators.ts";',
      },
      "an emulator (through pipeline/x.test-kit.ts)",
    ],
    [
      "a test that sets an environment variable (the quick tier shares its process)",
      { "core/x.test.ts": 'process.env.TZ = "Asia/Tokyo";' },
      "it changes the process's environment or module registry",
    ],
    [
      "a test that mocks a module",
      { "core/x.test.ts": 'vi.mock("./clock.ts");' },
      "it changes the process's environment or module registry",
    ],
    [
      "a test that only compares an environment variable",
      { "core/x.test.ts": 'if (process.env.CI === "true") {}' },
      undefined,
    ],
    [
      "a test naming the stack in a string only",
      { "layering.test.ts": 'const cases = [["cli/main.ts", "../local/stack.ts"]];' },
      undefined,
    ],
  ])("%s", (_what, tree, why) => {
    expect(slowBecause(Object.keys(tree)[0]!, files(tree))).toBe(why);
  });
});

describe("the slow files that share a worker (project slow-shared)", () => {
  it.each([
    [
      "an emulator test that only reads the environment",
      { "adapters/x.test.ts": 'import { startEmulators } from "../local/emulators.ts";\nif (process.env.CI) {}' },
      undefined,
    ],
    [
      "a stack test that sets an environment variable",
      {
        "local/x.test.ts": 'import { startStack } from "./testing/stack-fixture.ts";\nprocess.env.CLAIMS_X = "1";',
      },
      "it changes the process's environment or module registry",
    ],
    [
      "a test whose test kit deletes an environment variable, past a kit that starts the stack",
      {
        "cli/x.test.ts": 'import { a } from "./a.test-kit.ts";',
        "cli/a.test-kit.ts":
          'import { startStack } from "../local/testing/stack-fixture.ts";\nimport { b } from "./b.test-kit.ts";',
        "cli/b.test-kit.ts": "delete process.env.CLAIMS_URL;",
      },
      "it changes the process's environment or module registry (through cli/b.test-kit.ts)",
    ],
    [
      "a test that changes directory",
      { "cli/x.test.ts": 'process.chdir("/tmp");' },
      "it changes the process's environment or module registry",
    ],
  ])("%s", (_what, tree, why) => {
    expect(ownProcessBecause(Object.keys(tree)[0]!, files(tree))).toBe(why);
  });
});
