// `npm run soak [-- --minutes 120 --rate 2 --sample 60]`: leaves `claims serve` running under a steady load and
// watches what it keeps (issue 39). A child `claims serve` (rules model, its own data directory, the simulated
// payment provider) gets `--rate` claims a second, mixed: structured and free-text claims that are refunded, claims
// that escalate (a reviewer APPROVEs or DENYs them), free text the model cannot read (a reviewer RESUBMITs a
// corrected claim or DENYs it), orders the shop does not know; each claim is read back once, as a client would.
// Every `--sample` seconds it prints the server's resident memory (RSS, the whole process: every thread, native
// memory included), the heap of each of its threads (serve's own memory report, CLAIMS_MEMORY_REPORT_S), its open
// file descriptors and the data directory's bytes per claim; at the end, RSS after the first 10 minutes against the
// last reading (the goal: within 50 MB) and the data directory's growth. A bench, not a test: nothing here asserts;
// the figures go to bench/RESULTS.md. The samples are also written as JSON lines to bench/out/soak-<start>.jsonl.
// Run the long soak under `nice -n 10` on a shared machine.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { setTimeout as sleep } from "node:timers/promises";
import type { Order } from "../core/integrity/index.ts";
import { startServe, writeServeConfig } from "./lib/serve.ts";
import type { ServeProcess } from "./lib/serve.ts";

const OUT_DIR = fileURLToPath(new URL("out", import.meta.url));
const DAY_MS = 86_400_000;

/** The options of a soak. */
export type SoakOptions = {
  minutes: number;
  /** Claims submitted per second. */
  rate: number;
  /** Seconds between samples. */
  sample: number;
  /** Keep the data directory at the end (its path is printed). */
  keep: boolean;
  /** Extra node flags for the server (e.g. --max-old-space-size=200). */
  nodeArgs: string[];
};

const USAGE =
  "usage: npm run soak -- [--minutes 10] [--rate 2] [--sample 30] [--keep] [--node-arg=--max-old-space-size=200]";

/** Reads the command line (throws with the usage on a bad option). */
export function parseSoakArgs(argv: readonly string[]): SoakOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      minutes: { type: "string" },
      rate: { type: "string" },
      sample: { type: "string" },
      keep: { type: "boolean", default: false },
      "node-arg": { type: "string", multiple: true },
    },
    strict: true,
  });
  const num = (name: string, value: string | undefined, fallback: number, min: number): number => {
    if (value === undefined) return fallback;
    const n = Number(value);
    if (!Number.isFinite(n) || n < min) throw new Error(`--${name} must be a number ≥ ${min}, got ${value}\n${USAGE}`);
    return n;
  };
  return {
    minutes: num("minutes", values.minutes, 10, 0.5),
    rate: num("rate", values.rate, 2, 0.1),
    sample: num("sample", values.sample, 30, 5),
    keep: values.keep,
    nodeArgs: values["node-arg"] ?? [],
  };
}

/** The kinds of claim a soak sends, with their weights out of 20. */
export const SOAK_MIX = [
  ["refund", 8],
  ["refundText", 4],
  ["escalate", 4],
  ["unreadable", 3],
  ["unknownOrder", 1],
] as const;
type SoakKind = (typeof SOAK_MIX)[number][0];

/** The kind of the `n`-th claim: the mix in a fixed rotation (deterministic, every kind in every 20 claims). */
export function soakKind(n: number): SoakKind {
  let at = n % 20;
  for (const [kind, weight] of SOAK_MIX) {
    if (at < weight) return kind;
    at -= weight;
  }
  return "refund";
}

/** The body of the `n`-th claim on order `orderId` (each refund and escalation on an order of its own). */
export function soakClaim(kind: SoakKind, orderId: string, n: number): Record<string, unknown> {
  switch (kind) {
    case "refund":
      return {
        claim: { order_id: orderId, amount_eur: 89.5, category: "electronics", reason: `Dead on arrival (#${n})` },
      };
    case "refundText":
      return { claim_text: `I bought order ${orderId} for 89.50 EUR and the screen is dead, please refund (#${n})` };
    case "escalate":
      return {
        claim: { order_id: orderId, amount_eur: 1200, category: "electronics", reason: `Laptop does not boot (#${n})` },
      };
    case "unreadable":
      return { claim_text: `Hi, the sofa I bought last month is falling apart, I paid 300 EUR. Please help. (#${n})` };
    case "unknownOrder":
      return {
        claim: { order_id: `ord_unknown_${n}`, amount_eur: 20, category: "electronics", reason: "Never arrived" },
      };
  }
}

/** The orders a soak of `claims` claims needs: one per claim (and per corrected claim), bought two days before `now`. */
export function soakOrders(claims: number, nowMs: number): Order[] {
  return Array.from({ length: claims }, (_, i) => ({
    order_id: `ord_soak${String(i + 1).padStart(6, "0")}`,
    purchase_date: new Date(nowMs - 2 * DAY_MS).toISOString(),
    category: "electronics",
    amount: 2000,
    currency: "EUR" as const,
  }));
}

/** One thread's heap as serve reports it (MB). */
type ThreadHeap = { used: number; total: number; external?: number };
/** serve's memory report line (CLAIMS_MEMORY_REPORT_S). */
type MemoryReport = { rss_mb: number; threads: Record<string, ThreadHeap>; [k: string]: unknown };

/** One sample of the server. */
export type SoakSample = {
  at_s: number;
  submitted: number;
  final: number;
  reviewed: number;
  rss_mb: number;
  hwm_mb: number;
  fds: number;
  data_dir_bytes: number;
  threads?: Record<string, ThreadHeap>;
  report?: Record<string, unknown>;
};

/** VmRSS and VmHWM of `pid`, in MB. */
export function procMemory(status: string): { rss: number; hwm: number } {
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN);
  return { rss: kb("VmRSS") / 1024, hwm: kb("VmHWM") / 1024 };
}

/** Bytes of every file under `dir`. */
function dirBytes(dir: string): number {
  let total = 0;
  const walk = (d: string) => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const name of names) {
      const p = join(d, name);
      try {
        const s = statSync(p);
        if (s.isDirectory()) walk(p);
        else total += s.size;
      } catch {
        // removed meanwhile (LevelDB compaction)
      }
    }
  };
  walk(dir);
  return total;
}

const mb = (n: number | undefined) => (n === undefined || Number.isNaN(n) ? "–" : n.toFixed(0));

/** Prints a sample as one line. */
export function formatSample(s: SoakSample): string {
  const heaps = Object.entries(s.threads ?? {})
    .map(([name, h]) => `${name} ${mb(h.used)}/${mb(h.total)}`)
    .join(", ");
  const perClaim = s.submitted > 0 ? (s.data_dir_bytes / s.submitted / 1024).toFixed(1) : "–";
  return `${(s.at_s / 60).toFixed(1).padStart(6)} min  claims ${String(s.submitted).padStart(6)} (final ${s.final}, reviewed ${s.reviewed})  RSS ${mb(s.rss_mb)} MB (peak ${mb(s.hwm_mb)})  heap MB used/total: ${heaps || "–"}  fds ${s.fds}  data ${(s.data_dir_bytes / 1e6).toFixed(1)} MB (${perClaim} KB/claim)`;
}

/** The end of a soak in words: RSS after 10 minutes against the end, and the data directory. */
export function soakSummary(samples: readonly SoakSample[]): string {
  if (samples.length === 0) return "no samples";
  const last = samples.at(-1)!;
  const at10 = samples.find((s) => s.at_s >= 600);
  const maxData = Math.max(...samples.map((s) => s.data_dir_bytes));
  const lines = [
    `soak: ${last.submitted} claims in ${(last.at_s / 60).toFixed(1)} min (${(last.submitted / last.at_s).toFixed(2)}/s), ${last.final} final, ${last.reviewed} reviews decided`,
    `  RSS: first ${mb(samples[0]!.rss_mb)} MB, ${at10 ? `after 10 min ${mb(at10.rss_mb)} MB, ` : ""}last ${mb(last.rss_mb)} MB, peak ${mb(last.hwm_mb)} MB${at10 ? `; last − 10 min = ${(last.rss_mb - at10.rss_mb).toFixed(0)} MB (goal: within 50)` : ""}`,
    `  data directory: last ${(last.data_dir_bytes / 1e6).toFixed(1)} MB (${(last.data_dir_bytes / Math.max(1, last.submitted) / 1024).toFixed(1)} KB per claim), largest ${(maxData / 1e6).toFixed(1)} MB`,
    `  fds: first ${samples[0]!.fds}, last ${last.fds}, most ${Math.max(...samples.map((s) => s.fds))}`,
  ];
  return lines.join("\n");
}

type Pending = { claimId: string; readAt: number };

async function main(): Promise<number> {
  let opts: SoakOptions;
  try {
    opts = parseSoakArgs(process.argv.slice(2));
  } catch (error) {
    console.error(`soak: ${(error as Error).message}`);
    return 2;
  }
  const total = Math.ceil(opts.minutes * 60 * opts.rate);
  const dir = mkdtempSync(join(tmpdir(), "claims-soak-"));
  const dataDir = join(dir, "data");
  const configPath = join(dir, "config.yaml");
  // One order per claim and per corrected claim (a RESUBMIT names a fresh order), plus room.
  const orders = soakOrders(Math.ceil(total * 1.3) + 50, Date.now());
  writeServeConfig(configPath, orders);
  let nextOrder = 0;
  const freshOrder = () => orders[nextOrder++ % orders.length]!.order_id;

  let report: MemoryReport | undefined;
  const serve: ServeProcess = await startServe({
    configPath,
    dataDir,
    env: { CLAIMS_MEMORY_REPORT_S: String(Math.max(5, Math.floor(opts.sample / 2))) },
    nodeArgs: opts.nodeArgs,
    startLimitMs: 300_000,
    onLine: (line) => {
      const m = /\[memory\] (\{.*\})\s*$/.exec(line);
      if (m?.[1]) {
        try {
          report = JSON.parse(m[1]) as MemoryReport;
        } catch {
          // a torn line
        }
      }
    },
  });
  mkdirSync(OUT_DIR, { recursive: true });
  const outFile = join(OUT_DIR, `soak-${new Date().toISOString().replace(/[:.]/g, "-")}.jsonl`);
  writeFileSync(outFile, "");
  console.log(
    `soak: claims serve pid ${serve.pid} at ${serve.url}; ${opts.rate} claims/s for ${opts.minutes} min (${total} claims), a sample every ${opts.sample} s; data dir ${dataDir}; samples to ${outFile}`,
  );

  const started = performance.now();
  const elapsedS = () => (performance.now() - started) / 1000;
  let submitted = 0;
  let final = 0;
  // Claims whose review a reviewer decided (a decision repeated while it completes counts once).
  const reviewedClaims = new Set<string>();
  let errors = 0;
  const toRead: Pending[] = [];
  const fail = (what: string) => {
    errors++;
    if (errors <= 20) console.error(`soak: ${what}`);
  };

  const submit = async (n: number) => {
    const kind = soakKind(n);
    const res = await serve.api("POST", "/claims", soakClaim(kind, freshOrder(), n), {
      "idempotency-key": `soak-${n}`,
    });
    if (res.status !== 202 || typeof res.body.claim_id !== "string")
      return fail(`POST /claims answered ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
    submitted++;
    toRead.push({ claimId: res.body.claim_id, readAt: performance.now() + 5_000 });
  };

  // A client reads its claim 5 s after submitting it, and again every 15 s until it is final.
  const reader = async () => {
    while (toRead.length > 0 && toRead[0]!.readAt <= performance.now()) {
      const { claimId } = toRead.shift()!;
      const res = await serve.api("GET", `/claims/${claimId}`);
      if (res.status !== 200) fail(`GET /claims/${claimId} answered ${res.status}`);
      else if (res.body.status === "DECIDED" || res.body.status === "NEEDS_REVIEW") final++;
      else toRead.push({ claimId, readAt: performance.now() + 15_000 });
    }
  };

  // A reviewer works the queue every 10 s: escalations APPROVEd or DENYed, unreadable claims RESUBMITted or DENYed.
  let decisions = 0;
  const reviewer = async () => {
    const page = await serve.reviewerApi("GET", "/reviews?limit=50");
    if (page.status !== 200) return fail(`GET /reviews answered ${page.status}`);
    const items = (page.body.items ?? []) as { claim_id: string; origin: string }[];
    for (const item of items) {
      const k = decisions++;
      const body =
        item.origin === "ESCALATE"
          ? k % 3 === 2
            ? { decision: "DENY", note: "photos do not show the damage" }
            : { decision: "APPROVE" }
          : k % 2 === 0
            ? {
                decision: "RESUBMIT",
                claim: { order_id: freshOrder(), amount_eur: 45, category: "electronics", reason: "Sofa leg broken" },
              }
            : { decision: "DENY", note: "no order named" };
      const res = await serve.reviewerApi("POST", `/claims/${item.claim_id}/review`, body);
      if (res.status === 200) reviewedClaims.add(item.claim_id);
      else if (res.status !== 409) fail(`POST /claims/${item.claim_id}/review answered ${res.status}`);
    }
  };

  const samples: SoakSample[] = [];
  const sample = () => {
    let status = "";
    let fds = 0;
    try {
      status = readFileSync(`/proc/${serve.pid}/status`, "utf8");
      fds = readdirSync(`/proc/${serve.pid}/fd`).length;
    } catch {
      // not Linux, or the server is gone
    }
    const { rss, hwm } = procMemory(status);
    const s: SoakSample = {
      at_s: Math.round(elapsedS()),
      submitted,
      final,
      reviewed: reviewedClaims.size,
      rss_mb: rss,
      hwm_mb: hwm,
      fds,
      data_dir_bytes: dirBytes(dataDir),
      ...(report ? { threads: report.threads, report } : {}),
    };
    samples.push(s);
    writeFileSync(outFile, `${JSON.stringify(s)}\n`, { flag: "a" });
    console.log(formatSample(s));
  };

  sample();
  const interval = 1000 / opts.rate;
  let nextSample = opts.sample;
  let nextReview = 10;
  const inFlight = new Set<Promise<void>>();
  const track = (p: Promise<void>) => {
    const q = p.catch((e: unknown) => fail((e as Error).message)).finally(() => inFlight.delete(q));
    inFlight.add(q);
  };
  for (let n = 0; n < total; n++) {
    // Steady: the n-th claim goes at n / rate seconds, whatever the answers take (at most 50 requests in flight).
    const due = started + n * interval;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    if (inFlight.size < 50) track(submit(n));
    else fail(`claim ${n} skipped: 50 requests in flight`);
    track(reader());
    if (elapsedS() >= nextReview) {
      nextReview += 10;
      track(reviewer());
    }
    if (elapsedS() >= nextSample) {
      nextSample += opts.sample;
      sample();
    }
  }
  await Promise.all(inFlight);
  // The last reads and reviews, then a last sample.
  await sleep(6_000);
  await reader();
  await reviewer();
  sample();
  console.log(soakSummary(samples));
  if (errors > 0) console.log(`soak: ${errors} request(s) answered unexpectedly (the first 20 printed above)`);
  await serve.stop();
  if (opts.keep) console.log(`soak: data directory kept: ${dataDir}`);
  else rmSync(dir, { recursive: true, force: true });
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(`soak: ${(error as Error).stack ?? String(error)}`);
      process.exit(1);
    },
  );
}
