// Test support: an independent implementation of the AWS APIs (moto's server, `moto_server`, when it is installed:
// `pip install "moto[server]"`), started on 127.0.0.1 for one test file, so the adapters' contracts and the teardown
// run against a second implementation besides the emulators. Without it the suites that use it are skipped with a
// notice (the default tests never need it: no network, no Python). It answers any credentials (test data only).
import { spawn, spawnSync } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { afterAll, beforeAll } from "vitest";

let available: boolean | undefined;

/** Whether `moto_server` can be run here (checked once). */
export function motoAvailable(): boolean {
  if (available === undefined) {
    const probe = spawnSync("moto_server", ["--help"], { stdio: "ignore", timeout: 20_000 });
    available = probe.status === 0;
    if (!available)
      console.warn(
        'moto_server is not installed: the independent AWS check (the adapters\' contracts and the teardown against moto) is skipped. Install it with `pip install "moto[server]"` to run it.',
      );
  }
  return available;
}

/** A running moto server: its endpoint (every service on one port) and how to stop it. */
export interface Moto {
  readonly endpoint: string;
  stop(): Promise<void>;
}

/** Starts moto_server on a free port of 127.0.0.1 and waits until it listens. */
export async function startMoto(): Promise<Moto> {
  const child: ChildProcess = spawn("moto_server", ["-H", "127.0.0.1", "-p", "0"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const endpoint = await new Promise<string>((resolve, reject) => {
    let seen = "";
    const onData = (chunk: Buffer) => {
      seen += chunk.toString("utf8");
      const match = /Running on (http:\/\/127\.0\.0\.1:\d+)/.exec(seen);
      if (match) resolve(match[1]!);
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.on("exit", (code) => reject(new Error(`moto_server exited (${code}) before listening: ${seen.slice(-500)}`)));
    setTimeout(() => reject(new Error(`moto_server did not listen within 60 s: ${seen.slice(-500)}`)), 60_000).unref();
  });
  return {
    endpoint,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

/** Client settings for moto (any credentials; one endpoint for every service). */
export function motoClientConfig(endpoint: string) {
  return {
    region: "eu-west-1",
    endpoint,
    credentials: { accessKeyId: "testing", secretAccessKey: "testing" },
    maxAttempts: 1,
  };
}

/** Starts moto for the file's tests (when available) and stops it after them; `endpoint` is set in beforeAll. */
export function useMoto(): { endpoint: string } {
  const handle = { endpoint: "" };
  let moto: Moto | undefined;
  beforeAll(async () => {
    if (!motoAvailable()) return;
    moto = await startMoto();
    handle.endpoint = moto.endpoint;
  }, 90_000);
  afterAll(async () => {
    await moto?.stop();
  });
  return handle;
}
