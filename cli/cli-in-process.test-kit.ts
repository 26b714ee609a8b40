// `claims ARGS` run inside the test's own process: the program bin/claims.mjs runs (cli/program.ts), its parsing,
// commands, messages and exit codes, without the 0.3–1.7 CPU-s a child process costs to start (issue 36). What only
// the binary proves — that it starts and its exit code reaches the shell — each command keeps in one test that runs
// bin/claims.mjs. Calls run one at a time: each captures the process's stdout and stderr (console's included, which
// vitest would otherwise take) and its exitCode meanwhile. Its variables go through vi.stubEnv: put back after the
// command, and by vitest after the test whatever happened to the command (the slow-shared project's unstubEnvs), so
// a file using this kit can share its worker with the next file (scripts/test-tiers.ts).
import { format } from "node:util";
import { vi } from "vitest";
import { runCli } from "./program.ts";

/** What a `claims` run ends with: its exit code and what it wrote. */
export interface CliOutcome {
  code: number;
  stdout: string;
  stderr: string;
}

let queue: Promise<unknown> = Promise.resolve();

/** Runs `claims ARGS` in this process with `env` over process.env (as a child would get it); never throws. */
export function claimsInProcess(args: readonly string[], env: Record<string, string> = {}): Promise<CliOutcome> {
  // What bin/claims.mjs sets before it runs the program (unless already set).
  const binDefaults = Object.fromEntries(
    ["AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED", "AWS_EC2_METADATA_DISABLED"].map((k) => [
      k,
      process.env[k] ?? "true",
    ]),
  );
  const run = queue.then(() => once(args, { ...binDefaults, NO_COLOR: "1", ...env }));
  queue = run.catch(() => undefined);
  return run;
}

async function once(args: readonly string[], env: Record<string, string>): Promise<CliOutcome> {
  const out = { stdout: "", stderr: "" };
  const streams = { stdout: process.stdout, stderr: process.stderr } as const;
  const writes = { stdout: process.stdout.write, stderr: process.stderr.write };
  for (const name of ["stdout", "stderr"] as const)
    streams[name].write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      out[name] += typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
      const done = rest.find((r) => typeof r === "function") as (() => void) | undefined;
      done?.();
      return true;
    }) as typeof process.stdout.write;
  const consoled = {
    log: console.log,
    info: console.info,
    debug: console.debug,
    warn: console.warn,
    error: console.error,
  };
  for (const method of Object.keys(consoled) as (keyof typeof consoled)[])
    console[method] = (...data: unknown[]) => {
      out[method === "warn" || method === "error" ? "stderr" : "stdout"] += `${format(...data)}\n`;
    };
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  for (const [k, v] of Object.entries(env)) vi.stubEnv(k, v);
  const exitCode = process.exitCode;
  process.exitCode = undefined;
  const signals = ["SIGINT", "SIGTERM"] as const;
  const listening = signals.map((signal) => new Set(process.listeners(signal)));
  try {
    await runCli(args);
  } finally {
    streams.stdout.write = writes.stdout;
    streams.stderr.write = writes.stderr;
    Object.assign(console, consoled);
    // A run that throws leaves its Ctrl-C listeners (cli/batch-run.ts disposes them only after a run that ended):
    // harmless in a process about to exit, not in the test's.
    signals.forEach((signal, i) => {
      for (const l of process.listeners(signal)) if (!listening[i]!.has(l)) process.off(signal, l);
    });
    for (const [k, v] of Object.entries(saved)) vi.stubEnv(k, v);
  }
  const code = Number(process.exitCode ?? 0);
  process.exitCode = exitCode;
  return { code, ...out };
}
