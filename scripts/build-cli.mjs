// The compiled `claims` CLI (issue 36): every TypeScript file the CLI can reach, transpiled one for one into
// dist/ (same folders, `.ts` imports rewritten to `.js`, packages left to node_modules), so a command starts
// without a TypeScript loader. `npm install` builds it (the `prepare` script), so do the tests (vitest's global
// setup); bin/claims.mjs checks it is current before it runs it. Plain JavaScript: it must run before any build.
//   node scripts/build-cli.mjs          build dist/ (prints one line)
import { readFileSync, renameSync, rmSync, statSync, writeFileSync, copyFileSync } from "node:fs";
import { join, relative } from "node:path";
import { performance } from "node:perf_hooks";
import process from "node:process";
import { URL, fileURLToPath, pathToFileURL } from "node:url";

/** The repository root (this file is in scripts/). */
export const ROOT = fileURLToPath(new URL("..", import.meta.url));
/** The entry points: the CLI, and the handler thread `claims serve` starts (local/handler-thread.ts). */
const ENTRIES = ["cli/main.ts", "local/handler-worker.ts"];
/** Plain JavaScript workers started by URL beside their module (local/emulators.ts, local/sqs-emulator.ts). */
const COPIED = ["local/dynalite-worker.mjs", "local/sqs-worker.mjs"];
const STAMP = ".build.json";

/** The compiled CLI's entry, dist/cli/main.js under `root`. */
export const entryOf = (root = ROOT) => join(root, "dist", "cli", "main.js");

/**
 * Why the build in `root`/dist cannot be run as it is (undefined when it is current): missing, or older than one
 * of the files it was built from (a source edited, moved or deleted since; package.json included).
 */
export function staleReason(root = ROOT) {
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(join(root, "dist", STAMP), "utf8"));
  } catch {
    return "there is no build in dist/";
  }
  for (const file of stamp.inputs) {
    let mtimeMs;
    try {
      mtimeMs = statSync(join(root, file)).mtimeMs;
    } catch {
      return `${file} is gone since the last build`;
    }
    if (mtimeMs > stamp.builtFromMs) return `${file} changed since the last build`;
  }
  return undefined;
}

/** Rewrites a relative `.ts` import to its `.js` twin and leaves it (and every package) outside the file. */
const oneForOne = {
  name: "one-for-one",
  setup(build) {
    build.onResolve({ filter: /.*/ }, (args) => {
      if (args.kind === "entry-point") return undefined;
      if (!args.path.startsWith(".")) return { path: args.path, external: true };
      if (/\.(ts|mjs|js)$/.test(args.path)) return { path: args.path.replace(/\.ts$/, ".js"), external: true };
      return undefined; // JSON and the like are inlined
    });
  },
};

/** Builds dist/ in `root` (into a fresh folder, then swapped in whole); returns the number of files compiled. */
export async function buildCli(root = ROOT) {
  const esbuild = await import("esbuild");
  // The files the entries reach (static and literal dynamic imports), read from one bundling pass's metafile.
  const graph = await esbuild.build({
    absWorkingDir: root,
    entryPoints: ENTRIES,
    bundle: true,
    write: false,
    outdir: "dist",
    metafile: true,
    platform: "node",
    format: "esm",
    packages: "external",
    logLevel: "silent",
  });
  const sources = Object.keys(graph.metafile.inputs).filter((f) => f.endsWith(".ts") && !f.startsWith("node_modules"));
  const inputs = [...sources, ...COPIED, "package.json"];
  const builtFromMs = Math.max(...inputs.map((f) => statSync(join(root, f)).mtimeMs));
  const next = join(root, `dist.next-${process.pid}`);
  rmSync(next, { recursive: true, force: true });
  await esbuild.build({
    absWorkingDir: root,
    entryPoints: sources,
    outbase: ".",
    outdir: next,
    bundle: true,
    plugins: [oneForOne],
    platform: "node",
    format: "esm",
    target: "node20",
    sourcemap: "linked",
    logLevel: "warning",
  });
  for (const file of COPIED) copyFileSync(join(root, file), join(next, file));
  // The version `claims --version` reads beside cli/ (dist/package.json), and ESM for every .js below.
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  writeFileSync(
    join(next, "package.json"),
    `${JSON.stringify({ name: pkg.name, version: pkg.version, type: "module", private: true }, null, 2)}\n`,
  );
  writeFileSync(join(next, STAMP), `${JSON.stringify({ builtFromMs, inputs }, null, 1)}\n`);
  // Swapped in whole: a command starting meanwhile sees the old build, none, or the new one, never half of one.
  const dist = join(root, "dist");
  const old = join(root, `dist.old-${process.pid}`);
  try {
    renameSync(dist, old);
  } catch (error) {
    if (error.code !== "ENOENT") throw error;
  }
  try {
    renameSync(next, dist);
  } catch (error) {
    // Another command built it at the same moment (from the same sources): theirs stays.
    if (error.code !== "ENOTEMPTY" && error.code !== "EEXIST") throw error;
    rmSync(next, { recursive: true, force: true });
  }
  rmSync(old, { recursive: true, force: true });
  return sources.length;
}

if (process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url) {
  const t0 = performance.now();
  const n = await buildCli().catch((error) => {
    // `npm install --omit=dev` has no esbuild: bin/claims.mjs then runs the sources through tsx, and says so.
    if (error?.code !== "ERR_MODULE_NOT_FOUND") throw error;
    process.stdout.write("claims: esbuild is not installed, the CLI is not compiled (it runs from its sources)\n");
    process.exit(0);
  });
  process.stdout.write(
    `claims: compiled ${n} files into ${relative(process.cwd(), join(ROOT, "dist")) || "dist"}/ in ${(performance.now() - t0).toFixed(0)} ms\n`,
  );
}
