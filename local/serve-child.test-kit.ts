// `claims serve` as a child process for end-to-end tests: start it on a free port with its own data
// directory and tokens, talk to it over HTTP, read its events.jsonl, stop it (SIGTERM) or kill it (SIGKILL).
import { spawn } from "node:child_process";
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** One line of events.jsonl. */
export type BusLine = { "detail-type": string; source: string; detail: Record<string, unknown> };

/** A running `claims serve`. */
export interface ServeChild {
  readonly url: string;
  readonly apiToken: string;
  readonly reviewerToken: string;
  readonly dataDir: string;
  stdout(): string;
  /** One HTTP call with the intake token (or the reviewer token for `as: "reviewer"`). */
  api(method: string, path: string, body?: unknown, opts?: { as?: "intake" | "reviewer"; headers?: Record<string, string> }): Promise<{ status: number; body: any }>; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** The bus's journal: every accepted event, in order. */
  events(): BusLine[];
  /** SIGTERM and wait for the exit; resolves to the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL and wait for the exit. */
  kill(): Promise<void>;
}

/** Starts `claims serve --port 0` on `dataDir`; rejects with its output when it prints no URL within the limit. */
export async function startServe(options: { dataDir: string; args?: readonly string[]; env?: Record<string, string>; apiToken?: string; reviewerToken?: string; startLimitMs?: number }): Promise<ServeChild> {
  const apiToken = options.apiToken ?? randomBytes(16).toString("hex");
  const reviewerToken = options.reviewerToken ?? randomBytes(16).toString("hex");
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, ["bin/claims.mjs", "serve", "--port", "0", "--data-dir", options.dataDir, ...(options.args ?? [])], {
    cwd: ROOT,
    env: { ...process.env, CLAIMS_API_TOKEN: apiToken, CLAIMS_REVIEWER_TOKEN: reviewerToken, LLM_PROVIDER: "rules", CLAIMS_LOG_LEVEL: "ERROR", ...options.env },
  });
  let out = "";
  let exit: number | null | undefined;
  const exited = new Promise<void>((resolve) => child.once("exit", (code) => ((exit = code), resolve())));
  child.stderr.on("data", (d: Buffer) => process.stderr.write(d));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`claims serve printed no URL:\n${out}`)), options.startLimitMs ?? 60_000);
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString("utf8");
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    void exited.then(() => reject(new Error(`claims serve exited early (${String(exit)}):\n${out}`)));
  });
  return {
    url,
    apiToken,
    reviewerToken,
    dataDir: options.dataDir,
    stdout: () => out,
    async api(method, path, body, opts = {}) {
      const token = opts.as === "reviewer" ? reviewerToken : apiToken;
      const res = await fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...opts.headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // HTML or empty
      }
      return { status: res.status, body: parsed as never };
    },
    events() {
      const path = join(options.dataDir, "events.jsonl");
      if (!existsSync(path)) return [];
      return readFileSync(path, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as BusLine);
    },
    async stop() {
      if (exit === undefined) child.kill("SIGTERM");
      await exited;
      return exit ?? null;
    },
    async kill() {
      if (exit === undefined) child.kill("SIGKILL");
      await exited;
    },
  };
}

/** Polls `GET /claims/{id}` until the claim is final; the limit is generous (a loaded machine), not a speed check. */
export async function finalClaim(serve: ServeChild, claimId: string, limitMs = 240_000): Promise<Record<string, unknown>> {
  const until = Date.now() + limitMs;
  let last: unknown;
  for (let wait = 20; Date.now() < until; wait = Math.min(500, wait * 2)) {
    const res = await serve.api("GET", `/claims/${claimId}`);
    last = res.body;
    if (res.status === 200 && ["DECIDED", "NEEDS_REVIEW"].includes(String(res.body.status))) return res.body as Record<string, unknown>;
    await sleep(wait);
  }
  throw new Error(`claim ${claimId} never became final; last answer: ${JSON.stringify(last)}`);
}
