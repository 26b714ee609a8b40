// Bundle size and cold import cost of every Lambda handler (issues 5, 13): each functions/*.ts bundled with
// esbuild the way SST 4 builds a Node function for `sst deploy`, its raw and gzip size, what weighs
// most in it (esbuild metafile), and the CPU time a fresh `node` process spends importing it.
//
// What SST does (sst/sst pkg/runtime/node/build.go): bundle, platform node, format esm (default),
// target esnext, keepNames, mainFields module/main, minify when deploying, no sourcemap by default,
// externals only `sharp` and `pg-native` (the AWS SDK is bundled, not taken from the runtime), and a
// banner that defines `require`, `__filename` and `__dirname` for ESM.
import { spawnSync } from "node:child_process";
import { mkdir, readdir, readFile } from "node:fs/promises";
import { basename, dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import type { BuildOptions, Metafile, Plugin } from "esbuild";
import { formatTable, quantile } from "./lib/harness.ts";

const benchDir = dirname(fileURLToPath(import.meta.url));
const rootDir = dirname(benchDir);

/** Goal of issue 5: every bundle under this many bytes (300 KB, read as 300 × 1024). */
export const BUNDLE_GOAL_BYTES = 300 * 1024;
/** Goal of issue 5: a cold import under this many milliseconds. */
export const IMPORT_GOAL_MS = 100;

/** The banner SST puts on every ESM bundle (build.go), so CommonJS dependencies can `require`. */
export const SST_ESM_BANNER = [
  `import { createRequire as topLevelCreateRequire } from 'module';`,
  `const require = topLevelCreateRequire(import.meta.url);`,
  `import { fileURLToPath as topLevelFileUrlToPath, URL as topLevelURL } from "url"`,
  `const __filename = topLevelFileUrlToPath(import.meta.url)`,
  `const __dirname = topLevelFileUrlToPath(new topLevelURL(".", import.meta.url))`,
  "",
].join("\n");

/** Packages SST always leaves out of the bundle (build.go `forceExternal`). */
export const SST_FORCE_EXTERNAL = ["sharp", "pg-native"] as const;

/** How a bundle is built: as SST does, or one of the what-ifs measured beside it. */
export type BundleVariant =
  /** Exactly SST's deploy build. */
  | "sst"
  /** `openai` and `yaml` out of the functions that do not use them at run time (as a lazy `import()` would leave them). */
  | "lean"
  /** `lean` plus `@aws-sdk/*` and `@smithy/*` left to the nodejs22.x runtime. */
  | "lean+sdk-external";

/** Every variant, in the order the report shows them. */
export const VARIANTS: readonly BundleVariant[] = ["sst", "lean", "lean+sdk-external"];

/** The handler entry points: `functions/*.ts` without tests, sorted. */
export function handlerEntries(fileNames: readonly string[]): string[] {
  return fileNames.filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts") && !f.endsWith(".d.ts")).sort();
}

/** The functions whose handlers call the LLM (and so need `openai`). */
export const LLM_FUNCTIONS: readonly string[] = ["worker", "intake-extract"];
/** The functions that parse YAML at run time beyond the agent config (the batch reads scenarios.yaml). */
export const YAML_FUNCTIONS: readonly string[] = ["batch"];

/** The packages the `lean` variant leaves out of `fn`: `openai` unless it calls the LLM, `yaml` unless it is the batch. */
export function lazyPackagesFor(fn: string): string[] {
  return [...(LLM_FUNCTIONS.includes(fn) ? [] : ["openai"]), ...(YAML_FUNCTIONS.includes(fn) ? [] : ["yaml"])];
}

/**
 * Stands in for packages a function would load lazily: an empty CommonJS module, so the import graph
 * still resolves and the bundle is what a dynamic `import()` on first use would leave at start-up.
 * (The agent config would then ship pre-parsed as JSON, so no function but the batch needs `yaml`.)
 */
function lazyStubPlugin(packages: readonly string[]): Plugin {
  const filter = new RegExp(`^(${packages.map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|")})(/.*)?$`);
  return {
    name: "lazy-package-stub",
    setup(b) {
      if (packages.length === 0) return;
      b.onResolve({ filter }, (args) => ({ path: args.path, namespace: "lazy-stub" }));
      b.onLoad({ filter: /.*/, namespace: "lazy-stub" }, () => ({ contents: "module.exports = {};", loader: "js" }));
    },
  };
}

/** The esbuild options SST uses for a deployed ESM function (plus a metafile), for `variant`. */
export function sstBuildOptions(entry: string, outfile: string, variant: BundleVariant = "sst"): BuildOptions {
  const sdkExternal = variant === "lean+sdk-external" ? ["@aws-sdk/*", "@smithy/*"] : [];
  const fn = basename(entry).replace(/\.ts$/, "");
  const plugins = variant === "sst" ? [] : [lazyStubPlugin(lazyPackagesFor(fn))];
  return {
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "esnext",
    keepNames: true,
    mainFields: ["module", "main"],
    minify: true,
    sourcemap: false,
    metafile: true,
    write: true,
    logLevel: "error",
    external: [...SST_FORCE_EXTERNAL, ...sdkExternal],
    banner: { js: SST_ESM_BANNER },
    plugins,
  };
}

/** The package an esbuild input path belongs to (`zod`, `@smithy/core`), or its project folder (`core`, `adapters`). */
export function packageOf(inputPath: string): string {
  const nm = inputPath.lastIndexOf("node_modules/");
  if (nm >= 0) {
    const parts = inputPath.slice(nm + "node_modules/".length).split("/");
    const first = parts[0] ?? inputPath;
    return first.startsWith("@") && parts[1] !== undefined ? `${first}/${parts[1]}` : first;
  }
  const clean = inputPath.replace(/^(\.\.\/)+/, "");
  return clean.includes("/") ? `${clean.split("/")[0]}/` : clean;
}

/** One contributor to a bundle: a package or project folder and the bytes it puts in the output. */
export type Contributor = { name: string; bytes: number };

/** Bytes in `output` per package, largest first (ties by name); a package's files are summed. */
export function contributors(metafile: Metafile, output: string): Contributor[] {
  const out = metafile.outputs[output];
  if (out === undefined)
    throw new Error(
      `bundles: the metafile has no output ${output} (outputs: ${Object.keys(metafile.outputs).join(", ")})`,
    );
  const by = new Map<string, number>();
  for (const [path, input] of Object.entries(out.inputs)) {
    const name = packageOf(path);
    by.set(name, (by.get(name) ?? 0) + input.bytesInOutput);
  }
  return [...by.entries()]
    .map(([name, bytes]) => ({ name, bytes }))
    .sort((a, b) => b.bytes - a.bytes || a.name.localeCompare(b.name));
}

/** Bytes in `output` from files whose input path contains `fragment` (e.g. `zod/v4/locales/`). */
export function bytesFrom(metafile: Metafile, output: string, fragment: string): number {
  const out = metafile.outputs[output];
  if (out === undefined) throw new Error(`bundles: the metafile has no output ${output}`);
  let sum = 0;
  for (const [path, input] of Object.entries(out.inputs)) if (path.includes(fragment)) sum += input.bytesInOutput;
  return sum;
}

/** Project files (outside node_modules) that import `pkg` directly, sorted. */
export function importersOf(metafile: Metafile, pkg: string): string[] {
  const found = new Set<string>();
  for (const [path, input] of Object.entries(metafile.inputs)) {
    if (path.includes("node_modules/")) continue;
    if (input.imports.some((i) => i.path.includes("node_modules/") && packageOf(i.path) === pkg)) found.add(path);
  }
  return [...found].sort();
}

/** One built bundle. */
export type BundleResult = {
  fn: string;
  variant: BundleVariant;
  file: string;
  rawBytes: number;
  gzipBytes: number;
  contributors: Contributor[];
  zodLocaleBytes: number;
  importers: Record<string, string[]>;
};

/** Builds every handler in `variant` into bench/out/bundles/<variant>/<fn>.mjs. */
export async function buildBundles(variant: BundleVariant): Promise<BundleResult[]> {
  const fnDir = join(rootDir, "functions");
  const entries = handlerEntries(await readdir(fnDir));
  const outDir = join(benchDir, "out", "bundles", variant);
  await mkdir(outDir, { recursive: true });
  const results: BundleResult[] = [];
  for (const entry of entries) {
    const fn = entry.replace(/\.ts$/, "");
    const file = join(outDir, `${fn}.mjs`);
    const result = await build({ ...sstBuildOptions(join(fnDir, entry), file, variant), absWorkingDir: rootDir });
    const metafile = result.metafile;
    if (metafile === undefined) throw new Error(`bundles: esbuild returned no metafile for ${entry}`);
    const output = relative(rootDir, file);
    const bytes = await readFile(file);
    results.push({
      fn,
      variant,
      file,
      rawBytes: bytes.length,
      gzipBytes: gzipSync(bytes, { level: 9 }).length,
      contributors: contributors(metafile, output),
      zodLocaleBytes: bytesFrom(metafile, output, "zod/v4/locales/"),
      importers: Object.fromEntries(["zod", "openai", "yaml"].map((p) => [p, importersOf(metafile, p)])),
    });
  }
  return results;
}

/** `SST_RESOURCE_*` values that let a handler module initialise outside AWS (placeholders; nothing is called). */
export function placeholderResourceEnv(): Record<string, string> {
  const url = (name: string) => JSON.stringify({ url: `https://sqs.us-east-1.amazonaws.com/000000000000/${name}` });
  return {
    SST_RESOURCE_App: JSON.stringify({ name: "claims-crew", stage: "bench" }),
    SST_RESOURCE_Table: JSON.stringify({ name: "claims-bench" }),
    SST_RESOURCE_Bus: JSON.stringify({
      name: "claims-bench",
      arn: "arn:aws:events:us-east-1:000000000000:event-bus/claims-bench",
    }),
    SST_RESOURCE_ApiToken: JSON.stringify({ value: "bench-token" }),
    SST_RESOURCE_LlmApiKey: JSON.stringify({ value: "bench-key" }),
    SST_RESOURCE_CrewEventsQueue: url("crew-events.fifo"),
    SST_RESOURCE_AgentStepsQueue: url("agent-steps"),
    SST_RESOURCE_ProposalsQueue: url("proposals"),
    SST_RESOURCE_ExtractionQueue: url("extraction"),
    SST_RESOURCE_TimersQueue: url("timers"),
    AWS_REGION: "us-east-1",
    LLM_PROVIDER: "rules",
  };
}

/** What an importing child prints: ms of the `import()` itself, whether `handler` is a function, and its own CPU time so far (µs). */
const IMPORT_DRIVER =
  "const t0 = performance.now(); const m = await import(process.argv[1]); const ms = performance.now() - t0;" +
  "const u = process.cpuUsage(); process.stdout.write(JSON.stringify({ ms, handler: typeof m.handler, cpuUs: u.user + u.system }));";

/** What a bare child prints: its CPU time at the end of start-up (µs). */
const BARE_DRIVER = "const u = process.cpuUsage(); process.stdout.write(JSON.stringify({ cpuUs: u.user + u.system }));";

/** Runs one child process; its stdout parsed as JSON. Throws with its stderr when it fails. */
function nodeChild(args: readonly string[], env: NodeJS.ProcessEnv): Record<string, unknown> {
  const child = spawnSync(process.execPath, args, { env, encoding: "utf8" });
  if (child.error) throw child.error;
  if (child.status !== 0)
    throw new Error(
      `bundles: node ${args.join(" ").slice(0, 80)} exited ${String(child.status)}: ${child.stderr.slice(0, 500)}`,
    );
  return JSON.parse(child.stdout) as Record<string, unknown>;
}

/** Cold import of one bundle over `runs` fresh processes: CPU ms beyond a bare node start (low end quoted, median beside it), and the in-process `import()` wall ms (median). */
export type ImportTiming = { cpuLowMs: number; cpuMedianMs: number; importMs: number; runs: number };

/**
 * Starts `runs` fresh `node` processes importing each file (round-robin, so load spikes spread over all
 * bundles) and `runs` bare ones. Each child reports its own CPU time (`process.cpuUsage`, start-up
 * included) after the import; a bundle's import CPU = the child's − the median bare child's.
 */
export function coldImports(
  files: readonly string[],
  runs: number,
): { bareCpuMs: number; timings: Map<string, ImportTiming> } {
  if (!Number.isInteger(runs) || runs < 5)
    throw new RangeError(`bundles: at least 5 runs per bundle, got ${String(runs)}`);
  const env = { ...process.env, ...placeholderResourceEnv(), NODE_OPTIONS: "" };
  const bareSamples: number[] = [];
  const cpu = new Map<string, number[]>(files.map((f) => [f, []]));
  const inProcess = new Map<string, number[]>(files.map((f) => [f, []]));
  nodeChild(["-e", BARE_DRIVER], env); // warm the page cache for the node binary
  for (let i = 0; i < runs; i++) {
    bareSamples.push(Number(nodeChild(["-e", BARE_DRIVER], env).cpuUs) / 1000);
    for (const file of files) {
      const reported = nodeChild(["--input-type=module", "-e", IMPORT_DRIVER, pathToFileURL(file).href], env) as {
        ms: number;
        handler: string;
        cpuUs: number;
      };
      if (reported.handler !== "function")
        throw new Error(`bundles: ${file} does not export a handler function (got ${reported.handler})`);
      cpu.get(file)!.push(reported.cpuUs / 1000);
      inProcess.get(file)!.push(reported.ms);
    }
  }
  const med = (xs: number[]) =>
    quantile(
      [...xs].sort((a, b) => a - b),
      0.5,
    );
  const bareCpuMs = med(bareSamples);
  const timings = new Map<string, ImportTiming>();
  for (const file of files) {
    const c = cpu.get(file)!;
    timings.set(file, {
      cpuLowMs: Math.min(...c) - bareCpuMs,
      cpuMedianMs: med(c) - bareCpuMs,
      importMs: med(inProcess.get(file)!),
      runs,
    });
  }
  return { bareCpuMs, timings };
}

const kb = (bytes: number) => Math.round((bytes / 1024) * 10) / 10;
const topText = (cs: readonly Contributor[], n: number) =>
  cs
    .slice(0, n)
    .map((c) => `${c.name} ${kb(c.bytes).toFixed(0)}`)
    .join(", ");

/** Builds every variant, times cold imports, and returns the markdown section. */
export async function run(): Promise<string> {
  const runs = Number(process.env.BUNDLE_IMPORT_RUNS ?? 7);
  const built = new Map<BundleVariant, BundleResult[]>();
  for (const variant of VARIANTS) built.set(variant, await buildBundles(variant));
  const all = [...built.values()].flat();
  const { bareCpuMs, timings } = coldImports(
    all.map((b) => b.file),
    runs,
  );
  const t = (b: BundleResult) => timings.get(b.file)!;
  const sst = built.get("sst")!;
  const byFn = (variant: BundleVariant, fn: string) => built.get(variant)!.find((b) => b.fn === fn)!;

  const mainRows = sst.map((b) => ({
    function: b.fn,
    "raw KB": kb(b.rawBytes),
    "gzip KB": kb(b.gzipBytes),
    "< 300 KB (raw)": b.rawBytes < BUNDLE_GOAL_BYTES ? "met" : "MISSED",
    "cold import CPU ms (low)": Math.round(t(b).cpuLowMs),
    "(median)": Math.round(t(b).cpuMedianMs),
    "import() wall ms (median)": Math.round(t(b).importMs),
    "< 100 ms": t(b).cpuLowMs < IMPORT_GOAL_MS ? "met" : "MISSED",
    "largest contributors, KB": topText(b.contributors, 5),
  }));
  const whatIfRows = sst.map((b) => {
    const row: Record<string, string | number> = {
      function: b.fn,
      "zod locales in the SST build, KB": kb(b.zodLocaleBytes),
    };
    for (const variant of VARIANTS) {
      const v = byFn(variant, b.fn);
      row[`${variant}: raw / gzip KB`] = `${kb(v.rawBytes).toFixed(0)} / ${kb(v.gzipBytes).toFixed(0)}`;
      row[`${variant}: import CPU ms (low)`] = Math.round(t(v).cpuLowMs);
    }
    return row;
  });
  const sample = byFn("sst", "kernel");
  const importerRows = (["zod", "openai", "yaml"] as const).map((p) => ({
    package: p,
    "KB in the kernel bundle": kb(sample.contributors.find((c) => c.name === p)?.bytes ?? 0),
    "imported by (project files)": sample.importers[p]?.join(", ") || "(none)",
  }));
  const leanTop = built
    .get("lean")!
    .map((b) => ({ function: b.fn, "lean build: largest contributors, KB": topText(b.contributors, 7) }));

  return [
    "## Lambda bundles and cold imports (bench/bundles.bench.ts)",
    "",
    "Definitions:",
    "- **bundle**: each `functions/*.ts` (not tests) built as `sst deploy` builds it (sst/sst `pkg/runtime/node/build.go`): esbuild `bundle`, `platform: node`, `format: esm`, `target: esnext`, `keepNames`, `mainFields: [module, main]`, `minify`, no sourcemap, externals only `sharp`/`pg-native` (SST bundles the AWS SDK; it does not use the runtime's copy), and SST's `createRequire`/`__filename`/`__dirname` banner. Output in `bench/out/bundles/`.",
    "- **raw KB** = bytes of the `.mjs` ÷ 1024; **gzip KB** = gzip level 9 of it (close to what the deployment zip holds). Goal: < 300 KB, read here as raw bytes.",
    `- **cold import CPU** = CPU time (\`process.cpuUsage\`, user + system) of a fresh \`node --input-type=module -e "await import(bundle)"\` process (${process.version}; Lambda runs Node 22) read right after the import, minus the median of a bare \`node -e ""\` (${bareCpuMs.toFixed(1)} ms here), with placeholder \`SST_RESOURCE_*\` variables set; ${String(runs)} processes per bundle, all bundles of all variants taking turns round-robin. **low** = the lowest of the runs (the quoted figure), median beside it. **import() wall ms** = the import timed inside the child with \`performance.now()\`. Goal: < 100 ms. Lambda's INIT also runs the runtime bootstrap and, on the first event, the lazy composition (clients, config), which is not counted here.`,
    "- **largest contributors** = bytes in the output per npm package (or project folder), from esbuild's metafile.",
    "",
    "### As SST builds them",
    "",
    formatTable(mainRows),
    "",
    "### What-if builds (not deployed; the same handlers, built with esbuild plugins that stand for a source change)",
    "",
    "- **lean**: `openai` left out of every function but worker and intake-extract, `yaml` out of every function but the batch (replaced by an empty module: what a dynamic `import()` on first use would leave at start-up; the agent config would ship pre-parsed as JSON).",
    "- **lean+sdk-external**: lean with `@aws-sdk/*` and `@smithy/*` left to the nodejs22.x runtime's copy (here resolved from the repository's node_modules, so its import time is indicative only).",
    "",
    formatTable(whatIfRows),
    "",
    "Who pulls the three largest non-SDK packages in (kernel bundle; the same in every handler but the authorizer):",
    "",
    formatTable(importerRows),
    "",
    formatTable(leanTop),
  ].join("\n");
}
