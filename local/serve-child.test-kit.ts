// `claims serve` as a child process for end-to-end tests: start it on a free port with its own data
// directory and tokens, talk to it over HTTP, read its events.jsonl and its memory, stop it (SIGTERM) or
// kill it (SIGKILL), and run other `claims` commands beside it.
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
  readonly pid: number;
  readonly apiToken: string;
  readonly reviewerToken: string;
  readonly dataDir: string;
  stdout(): string;
  /** One HTTP call with the intake token (or the reviewer token for `as: "reviewer"`, or `token`). */
  api(
    method: string,
    path: string,
    body?: unknown,
    opts?: { as?: "intake" | "reviewer"; token?: string; headers?: Record<string, string> },
  ): Promise<{ status: number; body: any }>; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** The bus's journal: every accepted event, in order. */
  events(): BusLine[];
  /** SIGTERM and wait for the exit; resolves to the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL and wait for the exit. */
  kill(): Promise<void>;
  /** The process's resident memory now and at its peak (Linux /proc: VmRSS, VmHWM), in MB; undefined elsewhere. */
  memoryMb(): { rss: number; peak: number } | undefined;
}

/** Starts `claims serve --port 0` on `dataDir` and waits until it says it is ready; rejects with its output when it is not within the limit. */
export async function startServe(options: {
  dataDir: string;
  args?: readonly string[];
  env?: Record<string, string>;
  apiToken?: string;
  reviewerToken?: string;
  startLimitMs?: number;
}): Promise<ServeChild> {
  const apiToken = options.apiToken ?? randomBytes(16).toString("hex");
  const reviewerToken = options.reviewerToken ?? randomBytes(16).toString("hex");
  const child: ChildProcessWithoutNullStreams = spawn(
    process.execPath,
    ["bin/claims.mjs", "serve", "--port", "0", "--data-dir", options.dataDir, ...(options.args ?? [])],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        CLAIMS_API_TOKEN: apiToken,
        CLAIMS_REVIEWER_TOKEN: reviewerToken,
        LLM_PROVIDER: "rules",
        CLAIMS_LOG_LEVEL: "ERROR",
        ...options.env,
      },
    },
  );
  let out = "";
  let exit: number | null | undefined;
  const exited = new Promise<void>((resolve) => child.once("exit", (code) => ((exit = code), resolve())));
  child.stderr.on("data", (d: Buffer) => process.stderr.write(d));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`claims serve printed no URL:\n${out}`)),
      options.startLimitMs ?? 60_000,
    );
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString("utf8");
      const m = /listening on (http:\/\/\S+)/.exec(out);
      // Its whole start-up header is out once it says it is ready.
      if (m?.[1] && /Ready in \d+ ms/.test(out)) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    void exited.then(() => reject(new Error(`claims serve exited early (${String(exit)}):\n${out}`)));
  });
  return {
    url,
    pid: child.pid!,
    apiToken,
    reviewerToken,
    dataDir: options.dataDir,
    stdout: () => out,
    async api(method, path, body, opts = {}) {
      const token = opts.token ?? (opts.as === "reviewer" ? reviewerToken : apiToken);
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
      return readFileSync(path, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as BusLine);
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
    memoryMb() {
      try {
        const status = readFileSync(`/proc/${child.pid}/status`, "utf8");
        const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1]);
        return { rss: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024 };
      } catch {
        return undefined;
      }
    },
  };
}

/** Polls `GET /claims/{id}` until the claim is final; the limit is generous (a loaded machine), not a speed check. */
export async function finalClaim(
  serve: ServeChild,
  claimId: string,
  limitMs = 240_000,
): Promise<Record<string, unknown>> {
  const until = Date.now() + limitMs;
  let last: unknown;
  for (let wait = 20; Date.now() < until; wait = Math.min(500, wait * 2)) {
    const res = await serve.api("GET", `/claims/${claimId}`);
    last = res.body;
    if (res.status === 200 && ["DECIDED", "NEEDS_REVIEW"].includes(String(res.body.status)))
      return res.body as Record<string, unknown>;
    await sleep(wait);
  }
  throw new Error(`claim ${claimId} never became final; last answer: ${JSON.stringify(last)}`);
}

/**
 * Every claim of `ids` once final, read with one `GET /claims/{id}` each (in the order of `ids`). Meanwhile it asks
 * for one page of a single open claim (`GET /claims?status=RECEIVED,RUNNING&limit=1`) until the store has none, not
 * each claim over and over: a hundred claims polled one by one were most of the server's requests. For a store that
 * holds only claims the test waits for; a claim the list did not show open and that is not final yet is polled alone
 * (finalClaim). The limit is generous (a loaded machine), not a speed check.
 */
export async function finalClaims(
  serve: ServeChild,
  ids: readonly string[],
  limitMs = 240_000,
): Promise<Record<string, unknown>[]> {
  const until = Date.now() + limitMs;
  for (let wait = 20; Date.now() < until; wait = Math.min(500, wait * 2)) {
    const open = await serve.api("GET", "/claims?status=RECEIVED,RUNNING&limit=1");
    if (open.status === 200 && Array.isArray(open.body.items) && open.body.items.length === 0) break;
    await sleep(wait);
  }
  return Promise.all(ids.map((id) => finalClaim(serve, id, Math.max(1_000, until - Date.now()))));
}

/** Runs `claims …args` to its end (cwd: the repository); never throws for a non-zero exit. */
export function runClaims(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["bin/claims.mjs", ...args], {
      cwd: ROOT,
      env: { ...process.env, LLM_PROVIDER: "rules", ...env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
    child.once("exit", (code) => resolve({ code, stdout, stderr }));
  });
}
