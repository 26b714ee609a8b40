// `npm run bench -- cli-start` (issue 36): how long a `claims` command takes to start, as a user runs it — the
// compiled CLI (bin/claims.mjs → dist/, commands loaded lazily) beside the same commands run from the TypeScript
// sources through tsx (`node --import tsx cli/main.ts`, how bin/claims.mjs started every command before).
// Each sample is one fresh process: its wall time from spawn to exit, and its CPU time (user + system, all
// threads, and the processes it waited for, such as tsx's esbuild service): what this process's
// /proc/self/stat counts for its waited-for children (cutime + cstime) grew by. Peak memory is the command's own
// process (read at its exit by a preloaded module). `claims list` runs against a `claims serve` started here (bench/lib/serve.ts), 3 claims in it.
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { formatTable, quantileOf } from "./lib/harness.ts";
import { startServe } from "./lib/serve.ts";
import { buildCli, staleReason } from "../scripts/build-cli.mjs";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const ROUNDS = Number(process.env.CLI_START_ROUNDS ?? 7);

/** A module run before the command: writes the process's own peak memory (KB) to a file at exit. */
function usagePreload(dir: string): string {
  const file = join(dir, "usage.mjs");
  writeFileSync(
    file,
    `import { appendFileSync } from "node:fs";
process.on("exit", () => {
  appendFileSync(process.env.CLI_START_USAGE, JSON.stringify({ rssKb: process.resourceUsage().maxRSS }) + "\\n");
});`,
  );
  return pathToFileURL(file).href;
}

type Sample = { wallMs: number; cpuMs: number; rssMb: number };

/** CPU milliseconds of this process's waited-for children so far (/proc/self/stat cutime + cstime, 100 ticks a second). */
function childrenCpuMs(): number {
  const line = readFileSync("/proc/self/stat", "utf8");
  const f = line.slice(line.lastIndexOf(")") + 2).split(" ");
  return (Number(f[16 - 3]) + Number(f[17 - 3])) * 10;
}

export async function run(): Promise<string> {
  if (staleReason() !== undefined) await buildCli();
  const dir = mkdtempSync(join(tmpdir(), "claims-cli-start-"));
  const preload = usagePreload(dir);
  const usageFile = join(dir, "usage.jsonl");
  const token = randomBytes(16).toString("hex");
  const serve = await startServe({
    configPath: join(ROOT, "scenarios", "config.yaml"),
    dataDir: join(dir, "data"),
    env: { CLAIMS_API_TOKEN: token },
  });
  try {
    for (let i = 0; i < 3; i++)
      await serve.api("POST", "/claims", { claim_text: "I bought order ord_001 for 299.99 EUR, the screen is dead" });
    const entries = {
      compiled: ["bin/claims.mjs"],
      "from sources (tsx)": ["--import", "tsx", "cli/main.ts"],
    } as const;
    const commands: Record<string, string[]> = {
      "--version": ["--version"],
      "--help": ["--help"],
      "list (a served store of 3 claims)": ["list", "--url", serve.url],
    };
    const samples = new Map<string, Sample[]>();
    for (let round = 0; round < ROUNDS + 1; round++) {
      for (const [command, args] of Object.entries(commands)) {
        for (const [entry, argv] of Object.entries(entries)) {
          rmSync(usageFile, { force: true });
          const cpu0 = childrenCpuMs();
          const t0 = performance.now();
          const r = spawnSync(process.execPath, ["--import", preload, ...argv, ...args], {
            cwd: ROOT,
            env: { ...process.env, CLI_START_USAGE: usageFile, CLAIMS_API_TOKEN: token },
            encoding: "utf8",
          });
          const wallMs = performance.now() - t0;
          if (r.status !== 0) throw new Error(`${entry} ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
          const cpuMs = childrenCpuMs() - cpu0;
          const usage = JSON.parse(readFileSync(usageFile, "utf8")) as { rssKb: number };
          if (round === 0) continue; // warm-up: the file cache
          const key = `${command}\u0000${entry}`;
          samples.set(key, [...(samples.get(key) ?? []), { wallMs, cpuMs, rssMb: usage.rssKb / 1024 }]);
        }
      }
    }
    const median = (xs: number[]) => quantileOf(xs, 0.5);
    const rows = [...samples].map(([key, s]) => {
      const [command, entry] = key.split("\u0000") as [string, string];
      return {
        command: `claims ${command}`,
        entry,
        "wall ms (median, min–max)": `${median(s.map((x) => x.wallMs)).toFixed(0)} (${Math.min(...s.map((x) => x.wallMs)).toFixed(0)}–${Math.max(...s.map((x) => x.wallMs)).toFixed(0)})`,
        "CPU ms (median)": median(s.map((x) => x.cpuMs)).toFixed(0),
        "peak MB (median)": median(s.map((x) => x.rssMb)).toFixed(0),
      };
    });
    return [
      "## CLI start (bench/cli-start.bench.ts)",
      "",
      `${ROUNDS} rounds after one warm-up, the two entries taking turns; one fresh process per sample (wall: spawn to exit; CPU: the process and those it waited for).`,
      "",
      formatTable(rows),
    ].join("\n");
  } finally {
    await serve.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
