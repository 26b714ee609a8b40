// The state directory lock: one holder at a time, named in the refusal; a lock left by a process that is gone
// (or whose pid now belongs to another process) is taken over; release leaves no file; the holder's URL and
// table endpoint are readable by others.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { lockStateDir, processStarted, stateHolder } from "./state-lock.ts";
import { StateDirBusyError } from "./errors.ts";

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const holderFile = (holder: Record<string, unknown>) =>
  writeFileSync(
    join(dir, "serve.json"),
    JSON.stringify({ command: "claims serve", started_at: "2026-01-01T00:00:00Z", ...holder }),
  );

describe("state directory lock", () => {
  it("refuses while another live process holds the directory, naming it, and takes over once it is gone", async () => {
    dir = mkdtempSync(join(tmpdir(), "claims-lock-"));
    const other = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"]);
    try {
      holderFile({ pid: other.pid, pid_started: processStarted(other.pid!), url: "http://127.0.0.1:3999" });
      expect(() => lockStateDir(dir, "claims serve")).toThrow(StateDirBusyError);
      expect(() => lockStateDir(dir, "claims serve")).toThrow(
        `is in use by claims serve (pid ${other.pid}, http://127.0.0.1:3999): stop it first`,
      );
    } finally {
      other.kill("SIGKILL");
      await new Promise((resolve) => other.once("exit", resolve));
    }
    const lock = lockStateDir(dir, "claims serve");
    lock.update({ url: "http://127.0.0.1:3000", dynamodb: "http://127.0.0.1:4000" });
    expect(stateHolder(dir)).toMatchObject({
      pid: process.pid,
      command: "claims serve",
      url: "http://127.0.0.1:3000",
      dynamodb: "http://127.0.0.1:4000",
    });
    lock.release();
    expect(existsSync(join(dir, "serve.json"))).toBe(false);
    expect(stateHolder(dir)).toBeUndefined();
  });

  it.runIf(processStarted(process.pid) !== undefined)("does not take a reused pid for the holder", () => {
    dir = mkdtempSync(join(tmpdir(), "claims-lock-"));
    // A live pid (our parent), recorded with another start time: the holder is gone and the pid was reused.
    holderFile({ pid: process.ppid, pid_started: processStarted(process.ppid)! - 1 });
    expect(stateHolder(dir)).toBeUndefined();
    const lock = lockStateDir(dir, "claims serve");
    expect(stateHolder(dir)?.pid).toBe(process.pid);
    lock.release();
  });

  it("takes over a lock whose process exited", () => {
    dir = mkdtempSync(join(tmpdir(), "claims-lock-"));
    holderFile({ pid: spawnSync(process.execPath, ["-e", "process.exit(0)"]).pid });
    expect(stateHolder(dir)).toBeUndefined();
    const lock = lockStateDir(dir, "claims serve");
    expect(stateHolder(dir)?.pid).toBe(process.pid);
    lock.release();
  });
});
