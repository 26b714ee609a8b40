// `claims serve` as a bench drives it: a child process started like a user starts it (bin/claims.mjs serve,
// rules model, its own data directory and tokens, a copy of scenarios/config.yaml with the bench's orders
// added), talked to over HTTP like a client, and its CPU time read from /proc for the whole process tree
// (the server and anything it starts, threads included), so a stack that moves work out of its event loop
// is charged for all of it.
import { spawn } from "node:child_process";
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Order } from "../../core/integrity/index.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ: 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** The fields of /proc/<pid>/stat a bench needs: parent pid and CPU ticks (its own and its waited-for children's). */
export type ProcStat = { pid: number; ppid: number; ticks: number };

/** Parses one /proc/<pid>/stat line (the command name may hold spaces and parentheses: fields follow the last ")"). */
export function parseProcStat(line: string): ProcStat | undefined {
  const close = line.lastIndexOf(")");
  const pid = Number.parseInt(line, 10);
  if (close < 0 || !Number.isInteger(pid)) return undefined;
  const f = line.slice(close + 2).split(" ");
  // After the name: state(3) ppid(4) … utime(14) stime(15) cutime(16) cstime(17); f[0] is field 3.
  const num = (field: number) => Number(f[field - 3]);
  const ticks = num(14) + num(15) + num(16) + num(17);
  return Number.isFinite(ticks) ? { pid, ppid: num(4), ticks } : undefined;
}

/** CPU nanoseconds of `stats`' process `root` and all its descendants. */
export function treeCpuNs(stats: readonly ProcStat[], root: number): number {
  const children = new Map<number, ProcStat[]>();
  for (const s of stats) children.set(s.ppid, [...(children.get(s.ppid) ?? []), s]);
  let ticks = 0;
  const stack = stats.filter((s) => s.pid === root);
  for (let s = stack.pop(); s; s = stack.pop()) {
    ticks += s.ticks;
    stack.push(...(children.get(s.pid) ?? []));
  }
  return (ticks / TICKS_PER_SECOND) * 1e9;
}

/** Every process's stat line now (processes that vanish while read are skipped). */
export function readProcStats(): ProcStat[] {
  const out: ProcStat[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const s = parseProcStat(readFileSync(`/proc/${name}/stat`, "utf8"));
      if (s) out.push(s);
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

/** The config `claims serve` reads in the bench: scenarios/config.yaml with `orders` added to its context store. */
export function writeServeConfig(path: string, orders: readonly Order[]): void {
  const text = readFileSync(join(ROOT, "scenarios", "config.yaml"), "utf8");
  const marker = "context_store:\n  orders:\n";
  const at = text.indexOf(marker);
  if (at < 0)
    throw new Error(
      "serve bench: scenarios/config.yaml has no `context_store:\\n  orders:` block to add the bench's orders to",
    );
  const lines = orders
    .map(
      (o) =>
        `    ${o.order_id}: { purchase_date: "${o.purchase_date}", category: ${o.category}, amount: ${o.amount} }\n`,
    )
    .join("");
  writeFileSync(path, text.slice(0, at + marker.length) + lines + text.slice(at + marker.length), "utf8");
}

/** A running `claims serve`. */
export type ServeProcess = {
  readonly url: string;
  readonly pid: number;
  /** One HTTP call with the intake token; the parsed JSON body. */
  api(
    method: "GET" | "POST",
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: Record<string, unknown> }>;
  /** The same with the reviewer token (the review routes). */
  reviewerApi(
    method: "GET" | "POST",
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: Record<string, unknown> }>;
  /** CPU nanoseconds the server's process tree has used so far. */
  cpuNs(): number;
  stop(): Promise<void>;
};

/** Starts `claims serve --port 0` on `configPath` and `dataDir` with the rules model; `env` is added to the child's environment, `nodeArgs` go to node. */
export async function startServe(options: {
  configPath: string;
  dataDir: string;
  env?: Record<string, string>;
  nodeArgs?: readonly string[];
  startLimitMs?: number;
  /** Every line the server prints after its start (e.g. its memory reports). */
  onLine?: (line: string) => void;
}): Promise<ServeProcess> {
  const token = randomBytes(16).toString("hex");
  // nodeArgs: e.g. --cpu-prof to profile the server (Node refuses it in NODE_OPTIONS).
  const child: ChildProcessWithoutNullStreams = spawn(
    process.execPath,
    [
      ...(options.nodeArgs ?? []),
      "bin/claims.mjs",
      "serve",
      "--port",
      "0",
      "--config",
      options.configPath,
      "--data-dir",
      options.dataDir,
    ],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        CLAIMS_API_TOKEN: token,
        CLAIMS_REVIEWER_TOKEN: `${token}-reviewer`,
        LLM_PROVIDER: "rules",
        CLAIMS_LOG_LEVEL: "ERROR",
        ...options.env,
      },
    },
  );
  let out = "";
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once("exit", () => ((exited = true), resolve())));
  child.stderr.on("data", (d: Buffer) => process.stderr.write(d));
  // The server prints a line per request: read them all (a full pipe would stall it), keep only the start-up text.
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`claims serve printed no URL:\n${out}`)),
      options.startLimitMs ?? 60_000,
    );
    const onData = (d: Buffer) => {
      out += d.toString("utf8");
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m?.[1]) {
        clearTimeout(timer);
        child.stdout.off("data", onData);
        let rest = "";
        child.stdout.on("data", (chunk: Buffer) => {
          if (!options.onLine) return;
          const lines = (rest + chunk.toString("utf8")).split("\n");
          rest = lines.pop() ?? "";
          for (const line of lines) options.onLine(line);
        });
        resolve(m[1]);
      }
    };
    child.stdout.on("data", onData);
    void exit.then(() => reject(new Error(`claims serve exited early:\n${out}`)));
  });
  const pid = child.pid!;
  const call = async (
    bearer: string,
    method: string,
    path: string,
    body: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: Record<string, unknown> }> => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json", ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    let parsed: Record<string, unknown> = {};
    try {
      parsed = JSON.parse(text) as Record<string, unknown>;
    } catch {
      parsed = { text };
    }
    return { status: res.status, body: parsed };
  };
  return {
    url,
    pid,
    api: (method, path, body, headers) => call(token, method, path, body, headers),
    reviewerApi: (method, path, body) => call(`${token}-reviewer`, method, path, body),
    cpuNs: () => treeCpuNs(readProcStats(), pid),
    async stop() {
      if (!exited) child.kill("SIGTERM");
      await exit;
    },
  };
}
