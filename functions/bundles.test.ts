// The deployed functions read the refund policy as pre-parsed JSON (functions/composition/policy.ts), so no Lambda
// bundle but the batch's (which reads its claims file) carries a YAML parser; and only the two LLM callers carry
// the openai SDK. Bundled as `sst deploy` bundles them (esbuild, bench/bundles.bench.ts measures the sizes).
import { readdirSync } from "node:fs";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";

const dir = new URL(".", import.meta.url).pathname;
const handlers = readdirSync(dir)
  .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"))
  .map((f) => f.replace(/\.ts$/, ""));

/** Every handler bundled in ONE esbuild run (they share most modules, so one run parses each once), mapped to the
 * npm packages its own output carries, read from the metafile's per-output inputs. */
let bundled: Promise<Map<string, Set<string>>> | undefined;
function packagesByHandler(): Promise<Map<string, Set<string>>> {
  bundled ??= build({
    entryPoints: Object.fromEntries(handlers.map((h) => [h, `${dir}${h}.ts`])),
    bundle: true,
    splitting: false,
    platform: "node",
    format: "esm",
    write: false,
    metafile: true,
    logLevel: "silent",
    outdir: "out",
    outExtension: { ".js": ".mjs" },
  }).then((result) => {
    const byHandler = new Map<string, Set<string>>();
    for (const [outfile, output] of Object.entries(result.metafile.outputs)) {
      const handler = /(?:^|\/)([^/]+)\.mjs$/.exec(outfile)?.[1];
      if (handler === undefined) continue;
      const packages = Object.keys(output.inputs).flatMap(
        (p) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(p)?.[1] ?? [],
      );
      byHandler.set(handler, new Set(packages));
    }
    return byHandler;
  });
  return bundled;
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
