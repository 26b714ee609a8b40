// `claims reconcile` on a bus journal a test writes: shared by the reconcile tests. Each journal goes into a temporary
// data directory, removed after the test. `reconcileJournal` runs the command in the test's process (the program
// bin/claims.mjs runs: cli/cli-in-process.test-kit.ts), `runClaims` as a user runs it (a child of bin/claims.mjs).
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach } from "vitest";
import { claimsInProcess } from "./cli-in-process.test-kit.ts";

const run = promisify(execFile);
const bin = join(new URL("..", import.meta.url).pathname, "bin/claims.mjs");
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A temporary data directory, removed after the test. */
export function tempDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "claims-reconcile-"));
  dirs.push(dir);
  return dir;
}

/** `claims ARGS` as a user runs it: exit code, stdout and stderr (never throws). */
export async function runClaims(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return run(process.execPath, [bin, ...args], { env: { ...process.env, NO_COLOR: "1" } }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}

/** `claims reconcile ARGS` (in this process) over a data directory whose events.jsonl holds `lines`: its exit code and stdout. */
export async function reconcileJournal(
  lines: unknown[],
  args: string[] = [],
): Promise<{ code: number; stdout: string }> {
  const dir = tempDataDir();
  writeFileSync(join(dir, "events.jsonl"), lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
  const { code, stdout } = await claimsInProcess(["reconcile", "--data-dir", dir, ...args]);
  return { code, stdout };
}
