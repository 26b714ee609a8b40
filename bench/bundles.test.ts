// The bundle bench's parts: which files are handlers, SST's build options, the zod rewrite of the
// what-if build, metafile analysis, and one real build of the smallest handler (no timing).
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";
import type { Metafile } from "esbuild";
import { describe, expect, it } from "vitest";
import {
  bytesFrom,
  contributors,
  coldImports,
  handlerEntries,
  importersOf,
  packageOf,
  lazyPackagesFor,
  SST_ESM_BANNER,
  sstBuildOptions,
} from "./bundles.bench.ts";

describe("handlerEntries", () => {
  it("keeps handler sources and drops tests and declarations, sorted", () => {
    expect(handlerEntries(["worker.ts", "kernel.ts", "kernel.test.ts", "lib", "README.md", "types.d.ts"])).toEqual([
      "kernel.ts",
      "worker.ts",
    ]);
  });
});

describe("sstBuildOptions", () => {
  it("builds as sst deploy does: esm, esnext, minified, keepNames, SDK bundled, SST's banner", () => {
    const o = sstBuildOptions("functions/kernel.ts", "out/kernel.mjs");
    expect(o).toMatchObject({
      bundle: true,
      platform: "node",
      format: "esm",
      target: "esnext",
      minify: true,
      keepNames: true,
      mainFields: ["module", "main"],
      sourcemap: false,
      external: ["sharp", "pg-native"],
    });
    expect(o.banner?.js).toBe(SST_ESM_BANNER);
    expect(SST_ESM_BANNER).toContain("const require = topLevelCreateRequire(import.meta.url);");
    expect(o.plugins).toEqual([]);
  });

  it("leaves the AWS SDK to the runtime only in the what-if build", () => {
    expect(sstBuildOptions("a.ts", "a.mjs", "lean").external).toEqual(["sharp", "pg-native"]);
    expect(sstBuildOptions("a.ts", "a.mjs", "lean+sdk-external").external).toEqual([
      "sharp",
      "pg-native",
      "@aws-sdk/*",
      "@smithy/*",
    ]);
  });
});

describe("lazyPackagesFor", () => {
  it.each([
    ["kernel", ["openai", "yaml"]],
    ["worker", ["yaml"]],
    ["intake-extract", ["yaml"]],
    ["batch", ["openai"]],
  ])("the lean %s bundle leaves out %j", (fn, packages) => {
    expect(lazyPackagesFor(fn)).toEqual(packages);
  });
});

describe("metafile analysis", () => {
  const metafile = {
    inputs: {
      "core/a.ts": { bytes: 1, imports: [{ path: "node_modules/zod/index.js", kind: "import-statement" }] },
      "adapters/llm/openai.ts": {
        bytes: 1,
        imports: [{ path: "node_modules/openai/index.mjs", kind: "import-statement" }],
      },
      "node_modules/openai/index.mjs": {
        bytes: 1,
        imports: [{ path: "node_modules/zod/index.js", kind: "import-statement" }],
      },
    },
    outputs: {
      "out/k.mjs": {
        bytes: 0,
        inputs: {
          "node_modules/zod/v4/core/schemas.js": { bytesInOutput: 300 },
          "node_modules/zod/v4/locales/he.js": { bytesInOutput: 100 },
          "node_modules/@smithy/core/dist-es/a.js": { bytesInOutput: 250 },
          "node_modules/@smithy/core/dist-es/b.js": { bytesInOutput: 250 },
          "node_modules/.pnpm/x/node_modules/openai/index.mjs": { bytesInOutput: 200 },
          "core/kernel/kernel.ts": { bytesInOutput: 50 },
          "core/crew/session.ts": { bytesInOutput: 30 },
          "../../outside.ts": { bytesInOutput: 5 },
        },
        imports: [],
        exports: [],
      },
    },
  } as unknown as Metafile;

  it.each([
    ["node_modules/zod/v4/core/schemas.js", "zod"],
    ["node_modules/@smithy/core/dist-es/a.js", "@smithy/core"],
    ["node_modules/.pnpm/x/node_modules/openai/index.mjs", "openai"],
    ["core/kernel/kernel.ts", "core/"],
    ["sst.config.ts", "sst.config.ts"],
  ])("%s belongs to %s", (path, pkg) => {
    expect(packageOf(path)).toBe(pkg);
  });

  it("sums bytes per package, largest first", () => {
    expect(contributors(metafile, "out/k.mjs")).toEqual([
      { name: "@smithy/core", bytes: 500 },
      { name: "zod", bytes: 400 },
      { name: "openai", bytes: 200 },
      { name: "core/", bytes: 80 },
      { name: "outside.ts", bytes: 5 },
    ]);
  });

  it("names an output the metafile does not have", () => {
    expect(() => contributors(metafile, "out/x.mjs")).toThrow(/no output out\/x\.mjs/);
  });

  it("sums the bytes of a path fragment", () => {
    expect(bytesFrom(metafile, "out/k.mjs", "zod/v4/locales/")).toBe(100);
  });

  it("lists the project files that import a package, not packages importing it", () => {
    expect(importersOf(metafile, "zod")).toEqual(["core/a.ts"]);
    expect(importersOf(metafile, "openai")).toEqual(["adapters/llm/openai.ts"]);
  });
});

describe("a real build", () => {
  it("bundles the authorizer into an ESM file that imports and exports a handler", async () => {
    const dir = await mkdtemp(join(tmpdir(), "bundles-test-"));
    try {
      const root = fileURLToPath(new URL("..", import.meta.url));
      const out = join(dir, "authorizer.mjs");
      const result = await build({
        ...sstBuildOptions(join(root, "functions", "authorizer.ts"), out),
        absWorkingDir: root,
      });
      const text = await readFile(out, "utf8");
      expect(text.startsWith(SST_ESM_BANNER)).toBe(true);
      expect(Object.keys(result.metafile?.outputs ?? {})).toHaveLength(1);
      const mod = (await import(pathToFileURL(out).href)) as { handler?: unknown };
      expect(typeof mod.handler).toBe("function");
      const timing = coldImports([out], 5).timings.get(out);
      expect(timing?.runs).toBe(5);
      expect(timing?.importMs).toBeGreaterThan(0);
      expect(timing!.cpuLowMs).toBeLessThanOrEqual(timing!.cpuMedianMs);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("leaves openai and yaml out of a lean kernel, and zod's locales out of it", async () => {
    const dir = await mkdtemp(join(tmpdir(), "bundles-test-"));
    try {
      const root = fileURLToPath(new URL("..", import.meta.url));
      const out = join(dir, "kernel.mjs");
      const result = await build({
        ...sstBuildOptions(join(root, "functions", "kernel.ts"), out, "lean"),
        absWorkingDir: root,
      });
      const names = contributors(result.metafile!, relative(root, out)).map((c) => c.name);
      expect(names).toContain("zod");
      expect(names).toContain("@smithy/core");
      expect(names).not.toContain("openai");
      expect(names).not.toContain("yaml");
      expect(bytesFrom(result.metafile!, relative(root, out), "zod/v4/locales/")).toBeLessThan(5_000);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("refuses fewer than 5 timed imports", () => {
    expect(() => coldImports(["x.mjs"], 4)).toThrow(/at least 5 runs/);
  });
});
