// `claims serve` stopped the way systemd and pm2 stop it: one signal to its own PID (not to a process group).
// It stops the HTTP API, the pollers, the bus and the emulators, says so, and exits 0.
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = new URL("..", import.meta.url).pathname;

async function serveThenSignal(signal: NodeJS.Signals) {
  const dataDir = mkdtempSync(join(tmpdir(), "claims-serve-signal-"));
  const child = spawn(process.execPath, [join(root, "bin/claims.mjs"), "serve", "--port", "0", "--data-dir", dataDir], {
    cwd: root,
    // Its own process group: the signal below reaches the server alone, as `systemctl stop` sends it.
    detached: true,
    env: { ...process.env, NO_COLOR: "1", LLM_PROVIDER: "rules", CLAIMS_LOG_LEVEL: "ERROR" },
  });
  let stdout = "";
  child.stderr.resume();
  const exited = new Promise<{ code: number | null; signal: string | null }>((done) =>
    child.once("exit", (code, s) => done({ code, signal: s })),
  );
  await new Promise<void>((ready, failed) => {
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString("utf8");
      if (stdout.includes("Ctrl-C stops.")) ready();
    });
    void exited.then(() => failed(new Error(`claims serve exited before it was ready:\n${stdout}`)));
  });
  process.kill(child.pid!, signal);
  return { exit: await exited, stdout, pid: child.pid! };
}

describe("claims serve and signals to its own PID", () => {
  it.each(["SIGTERM", "SIGINT"] as const)(
    "stops cleanly on %s and exits 0",
    async (signal) => {
      const { exit, stdout, pid } = await serveThenSignal(signal);
      expect(exit, stdout).toEqual({ code: 0, signal: null });
      expect(stdout).toContain(
        `  pid      ${pid}: SIGINT or SIGTERM to this process stops the server cleanly (exit 0)`,
      );
      expect(stdout).toContain(`${signal}: stopping the HTTP API, the pollers, the bus and the emulators…`);
      expect(stdout.trimEnd().endsWith("Stopped.")).toBe(true);
    },
    120_000,
  );
});
