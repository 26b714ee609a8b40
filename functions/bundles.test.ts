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

async function packagesOf(handler: string): Promise<Set<string>> {
  const result = await build({
    entryPoints: [`${dir}${handler}.ts`],
    bundle: true,
    platform: "node",
    format: "esm",
    write: false,
    metafile: true,
    logLevel: "silent",
    outfile: "out.mjs",
  });
  return new Set(
    Object.keys(result.metafile.inputs).flatMap((p) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(p)?.[1] ?? []),
  );
}

describe("Lambda bundles", () => {
  it.each(handlers)("%s carries yaml only if it is the batch, openai only if it calls the LLM", async (handler) => {
    const packages = await packagesOf(handler);
    expect(packages.has("yaml"), "yaml").toBe(handler === "batch");
    expect(packages.has("openai"), "openai").toBe(handler === "worker" || handler === "intake-extract");
    expect(packages.has("zod")).toBe(true);
  });
});
