// The deployed functions read the refund policy as pre-parsed JSON (functions/composition/policy.ts), so no Lambda
// bundle but the batch's (which reads its claims file) carries a YAML parser; and only the two LLM callers carry
// the openai SDK. Bundled with esbuild as `sst deploy` resolves them, all handlers in one split build (below);
// bench/bundles.bench.ts builds each alone with SST's options and measures the sizes.
import { readdirSync } from "node:fs";
import { build } from "esbuild";
import type { Metafile } from "esbuild";
import { describe, expect, it } from "vitest";

const dir = new URL(".", import.meta.url).pathname;
const handlers = readdirSync(dir)
  .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"))
  .map((f) => f.replace(/\.ts$/, ""));

/**
 * Every handler bundled in ONE esbuild run (they share most modules, so one run parses each once), mapped to the npm
 * packages its bundle carries, read from the metafile. With code splitting the modules two handlers share are printed
 * once, in a chunk both import, not once per handler (about a third of the CPU of twelve whole bundles, 2.0 against
 * 6.6 CPU-s); a handler's bundle is its own output and every chunk it reaches through static or dynamic imports,
 * which holds the same packages as its whole bundle (compared for all twelve handlers with esbuild 0.28.2).
 */
let bundled: Promise<Map<string, Set<string>>> | undefined;
function packagesByHandler(): Promise<Map<string, Set<string>>> {
  bundled ??= build({
    entryPoints: Object.fromEntries(handlers.map((h) => [h, `${dir}${h}.ts`])),
    bundle: true,
    splitting: true,
    platform: "node",
    format: "esm",
    write: false,
    metafile: true,
    logLevel: "silent",
    outdir: "out",
    outExtension: { ".js": ".mjs" },
  }).then(({ metafile }) => {
    const byHandler = new Map<string, Set<string>>();
    for (const handler of handlers) {
      const entry = `out/${handler}.mjs`;
      if (metafile.outputs[entry] === undefined) continue;
      byHandler.set(handler, packagesReachedFrom(metafile, entry));
    }
    return byHandler;
  });
  return bundled;
}

/** The npm packages in the output `entry` and in every chunk it imports, directly or through other chunks. */
function packagesReachedFrom(metafile: Metafile, entry: string): Set<string> {
  const packages = new Set<string>();
  const seen = new Set<string>();
  const queue = [entry];
  for (let file = queue.pop(); file !== undefined; file = queue.pop()) {
    const output = metafile.outputs[file];
    if (seen.has(file) || output === undefined) continue;
    seen.add(file);
    for (const input of Object.keys(output.inputs)) {
      const name = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input)?.[1];
      if (name !== undefined) packages.add(name);
    }
    for (const imported of output.imports) if (!imported.external) queue.push(imported.path);
  }
  return packages;
}

async function packagesOf(handler: string): Promise<Set<string>> {
  const packages = (await packagesByHandler()).get(handler);
  if (!packages) throw new Error(`esbuild wrote no bundle for the handler ${handler}`);
  return packages;
}

describe("Lambda bundles", () => {
  // The first case waits for the one esbuild run of every handler: over 30 s at load 10.
  it.each(handlers)(
    "%s carries yaml only if it is the batch, openai only if it calls the LLM",
    async (handler) => {
      const packages = await packagesOf(handler);
      expect(packages.has("yaml"), "yaml").toBe(handler === "batch");
      expect(packages.has("openai"), "openai").toBe(handler === "worker" || handler === "intake-extract");
      expect(packages.has("zod")).toBe(true);
    },
    180_000,
  );
});

describe("a handler's packages in a split build", () => {
  const output = (inputs: string[], imports: Metafile["outputs"][string]["imports"]) => ({
    bytes: 0,
    inputs: Object.fromEntries(inputs.map((i) => [i, { bytesInOutput: 1 }])),
    imports,
    exports: [],
  });
  const metafile: Metafile = {
    inputs: {},
    outputs: {
      "out/kernel.mjs": output(
        ["functions/kernel.ts"],
        [
          { path: "out/chunk-A.mjs", kind: "import-statement" },
          { path: "out/lazy-B.mjs", kind: "dynamic-import" },
          { path: "node:fs", kind: "import-statement", external: true },
        ],
      ),
      "out/chunk-A.mjs": output(
        ["node_modules/zod/index.js", "node_modules/@smithy/core/a.js"],
        [{ path: "out/chunk-C.mjs", kind: "import-statement" }],
      ),
      "out/chunk-C.mjs": output(["node_modules/tslib/tslib.js"], []),
      "out/lazy-B.mjs": output(["node_modules/bowser/bowser.mjs"], []),
      "out/chunk-D.mjs": output(["node_modules/openai/index.mjs"], []),
    },
  };

  it("are those of its output and of every chunk it reaches, statically or dynamically, and no others", () => {
    expect([...packagesReachedFrom(metafile, "out/kernel.mjs")].sort()).toEqual([
      "@smithy/core",
      "bowser",
      "tslib",
      "zod",
    ]);
  });
});
