// `npm run bench [-- filter…]`: runs every bench/*.bench.ts (or those whose name contains one of the
// filters, e.g. `npm run bench -- kernel`) in alphabetical order — so aws-requests counts the profile
// that cost then prices — each exporting `run(): Promise<string>` that returns a markdown section;
// prints the sections and writes them to bench/out/latest.md.
// Re-runs itself under `node --expose-gc` so benches can take GC-settled heap readings.
import { spawnSync } from "node:child_process";
import { mkdir, readdir, writeFile } from "node:fs/promises";
import { cpus } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const REEXEC_MARKER = "CLAIMS_BENCH_REEXEC";
const benchDir = dirname(fileURLToPath(import.meta.url));
const outFile = join(benchDir, "out", "latest.md");

/** The bench files to run: every *.bench.ts, narrowed to names containing any of `filters`. */
export function selectBenchFiles(files: readonly string[], filters: readonly string[]): string[] {
  const benches = files.filter((f) => f.endsWith(".bench.ts")).sort();
  if (filters.length === 0) return benches;
  return benches.filter((f) => filters.some((filter) => f.includes(filter)));
}

function reexecWithGc(): never {
  const child = spawnSync(
    process.execPath,
    [...process.execArgv, "--expose-gc", fileURLToPath(import.meta.url), ...process.argv.slice(2)],
    { stdio: "inherit", env: { ...process.env, [REEXEC_MARKER]: "1" } },
  );
  if (child.error) throw child.error;
  process.exit(child.status ?? 1);
}

async function main(): Promise<number> {
  const hasGc = typeof (globalThis as { gc?: unknown }).gc === "function";
  if (!hasGc && process.env[REEXEC_MARKER] !== "1") reexecWithGc();

  const filters = process.argv.slice(2).filter((arg) => !arg.startsWith("-"));
  const available = selectBenchFiles(await readdir(benchDir), []);
  const selected = selectBenchFiles(available, filters);
  if (selected.length === 0) {
    const what = filters.length > 0 ? `matching ${filters.map((f) => `"${f}"`).join(", ")}` : "at all";
    console.error(
      `bench: no bench/*.bench.ts files ${what}. Available: ${available.length > 0 ? available.join(", ") : "(none)"}`,
    );
    return 1;
  }

  const header = [
    "# Benchmarks",
    "",
    `- date: ${new Date().toISOString()}`,
    `- node: ${process.version}, cpu: ${cpus()[0]?.model ?? "unknown"} × ${String(cpus().length)}`,
    `- gc: ${hasGc ? "--expose-gc (heap readings after full GC)" : "not exposed (heap readings without GC)"}`,
    `- files: ${selected.join(", ")}`,
  ].join("\n");
  console.log(`${header}\n`);

  const sections: string[] = [header];
  let failures = 0;
  for (const file of selected) {
    const started = process.hrtime.bigint();
    let section: string;
    try {
      const mod = (await import(pathToFileURL(join(benchDir, file)).href)) as { run?: unknown };
      if (typeof mod.run !== "function") throw new Error(`${file} does not export run(): Promise<string>`);
      const out: unknown = await (mod.run as () => unknown)();
      if (typeof out !== "string")
        throw new Error(`${file}: run() resolved to ${typeof out}, expected a markdown string`);
      section = out.trim();
    } catch (error) {
      failures++;
      const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
      section = `## ${file} — FAILED\n\n\`\`\`\n${message}\n\`\`\``;
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    section += `\n\n_${file}: ${seconds.toFixed(1)} s_`;
    console.log(`${section}\n`);
    sections.push(section);
  }

  await mkdir(dirname(outFile), { recursive: true });
  await writeFile(outFile, `${sections.join("\n\n")}\n`, "utf8");
  console.log(`bench: wrote ${outFile}${failures > 0 ? ` (${String(failures)} failed)` : ""}`);
  return failures > 0 ? 1 : 0;
}

if (process.argv[1] !== undefined && pathToFileURL(process.argv[1]).href === import.meta.url) {
  process.exitCode = await main();
}
