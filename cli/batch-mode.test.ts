// `claims batch` with LLM_BATCH_MODE=batch (docs/llm.md, "Batch mode"): the built command against the scripted
// OpenAI-compatible stand-in and its Batch API, on the local stack. A claim whose batch is not done is held and tried
// again through its hold's timers (the run's clock moves from one try to the next; the process waits LLM_BATCH_POLL_S
// between tries, small here), and is decided as without batch mode at half the model's price. A batch that never
// completes, or whose output cannot be read, ends its claims in review after LLM_BATCH_HOLD_S on the run's clock.
// Nothing here waits on wall time: a test waits for the child to exit, or for a line it prints.
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { answerBySchema, startScriptedLlmServer } from "../adapters/llm/scripted-server.ts";
import type { ScriptedBatchOptions } from "../adapters/llm/scripted-batches.ts";
import type { ScriptedLlmServer } from "../adapters/llm/scripted-server.ts";
import { modelCost } from "../core/agents/model-cost.ts";
import type { AuditEvent } from "../core/integrity/index.ts";
import { DEFAULT_PRICE_TABLE } from "../core/llm/prices.ts";
import { replayClaim } from "../core/history/replay/index.ts";
import { loadRunAudit } from "./run-store.ts";

const root = new URL("..", import.meta.url).pathname;

/** A claim the kernel's triage rejects (no model), a structured one and a free-text one (each one crew step). */
const SCENARIOS = `scenarios:
  - id: L
    label: "Unknown order (decided without the model)"
    context:
      claim: { order_id: ord_999, amount_eur: 40.0, category: home, reason: "Lamp flickers" }
    expected: { verdict: REJECT, reason_code: ORDER_NOT_FOUND }
  - id: A
    label: "Structured, through the model"
    context:
      claim: { order_id: ord_001, amount_eur: 299.99, category: electronics, reason: "Screen is dead" }
    expected: { verdict: ACCEPT, reason_code: VALIDATION_PASSED }
  - id: T
    label: "Free text, through the model"
    context:
      claim_text: "Order ord_010: the lamp (home, 120 EUR) arrived broken, I want my money back."
    expected: { verdict: ACCEPT, reason_code: VALIDATION_PASSED }
`;

/** The same rows, expected to end with a person because their batches never answer. */
const NEVER = SCENARIOS.replace(
  /expected: \{ verdict: ACCEPT, reason_code: VALIDATION_PASSED \}/g,
  "expected: { verdict: NEEDS_REVIEW, reason_code: LLM_UNREACHABLE }",
);

const PROPOSALS = {
  ord_001: { order_id: "ord_001", amount_eur: 299.99, category: "electronics" },
  ord_010: { order_id: "ord_010", amount_eur: 120, category: "home" },
} as const;
const proposal = (raw: string) => ({
  action: "REFUND",
  ...PROPOSALS[raw.includes("ord_010") ? "ord_010" : "ord_001"],
  reason: "Within the contract's bounds.",
  confidence: 0.9,
});
const SCRIPT = answerBySchema({
  refund_proposal: (r) => JSON.stringify(proposal(r.raw)),
  claim_decision: (r) => JSON.stringify({ analysis: "Within the contract as stated.", ...proposal(r.raw) }),
  text: "The claim is within every boundary as stated.",
});

let server: ScriptedLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  rows: {
    id: string;
    claim_id: string;
    verdict: string;
    reason_code: string | null;
    reason: string | null;
    matches: boolean;
    model?: { calls: number; prompt_tokens: number; usd: number };
  }[];
  audit: AuditEvent[];
  report: string;
}

/** Runs `claims batch --json` on `scenarios` against the scripted server; `onLine` sees each stdout/stderr chunk. */
async function claimsBatch(
  scenarios: string,
  env: Record<string, string>,
  onOutput?: (text: string, kill: () => void) => void,
  flags: readonly string[] = [],
): Promise<Run> {
  const dataDir = mkdtempSync(join(tmpdir(), "claims-batch-mode-"));
  const file = join(dataDir, "scenarios.yaml");
  writeFileSync(file, scenarios);
  const child = spawn(
    process.execPath,
    [
      join(root, "bin/claims.mjs"),
      "batch",
      file,
      "--json",
      "--data-dir",
      dataDir,
      "--now",
      "2026-06-01T12:00:00Z",
      ...flags,
    ],
    {
      cwd: root,
      env: {
        ...process.env,
        NO_COLOR: "1",
        LLM_PROVIDER: "openai",
        LLM_BASE_URL: server!.baseURL,
        LLM_MODEL: "gpt-4o-mini",
        LLM_API_KEY: "test",
        ...env,
      },
    },
  );
  let stdout = "";
  let stderr = "";
  const kill = () => void child.kill("SIGINT");
  child.stdout.on("data", (d: Buffer) => {
    stdout += d.toString("utf8");
    onOutput?.(stdout + stderr, kill);
  });
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString("utf8");
    onOutput?.(stdout + stderr, kill);
  });
  const code = await new Promise<number | null>((done) => child.once("exit", (c) => done(c)));
  const json = stdout.slice(stdout.indexOf("["));
  const [runId] = readdirSync(join(dataDir, "runs")).filter((d) => d !== "LATEST");
  const runDir = join(dataDir, "runs", runId!);
  return {
    code,
    stdout,
    stderr,
    rows: stdout.includes("[") ? (JSON.parse(json) as Run["rows"]) : [],
    // Opened as `claims replay` and `claims report` read it (the customer's words are sealed at rest).
    audit: await loadRunAudit(dataDir, runId!),
    report: readFileSync(join(runDir, "report.html"), "utf8"),
  };
}

const batchEnv = (extra: Record<string, string> = {}) => ({
  LLM_BATCH_MODE: "batch",
  LLM_BATCH_POLL_S: "0.02",
  ...extra,
});
const serve = async (batches: ScriptedBatchOptions) => {
  server = await startScriptedLlmServer(SCRIPT, { models: ["gpt-4o-mini"], batches });
};
const of = (run: Run, type: string) => run.audit.filter((e) => e.event_type === type);
const verdicts = (run: Run) => run.rows.map((r) => [r.id, r.verdict, r.reason_code]);
const replays = (run: Run) => run.rows.map((r) => replayClaim(r.claim_id, run.audit).status);
const reportCost = (report: string) =>
  [...report.matchAll(/data-cost-usd="([\d.]+)"/g)].reduce((n, m) => n + Number(m[1]), 0);

describe("claims batch with LLM_BATCH_MODE=batch", () => {
  it("waits for each batch through the hold and decides as without it, every call via the Batch API at half price", async () => {
    await serve({});
    const direct = await claimsBatch(SCENARIOS, {});
    expect(direct.code, direct.stderr).toBe(0);
    await server!.close();
    await serve({ pollsBeforeDone: 2 });
    const batch = await claimsBatch(SCENARIOS, batchEnv());
    expect(batch.code, batch.stderr).toBe(0);
    expect(verdicts(batch)).toEqual(verdicts(direct));
    expect(verdicts(batch)).toEqual([
      ["L", "REJECT", "ORDER_NOT_FOUND"],
      ["A", "ACCEPT", "VALIDATION_PASSED"],
      ["T", "ACCEPT", "VALIDATION_PASSED"],
    ]);
    // Every model call went through a batch; none of them directly.
    expect(server!.requests.filter((r) => r.path === "/v1/chat/completions")).toEqual([]);
    const calls = of(batch, "LLM_CALL");
    expect(calls.length).toBe(of(direct, "LLM_CALL").length);
    expect(calls.map((e) => e.details.via)).toEqual(calls.map(() => "batch"));
    // Both model claims were held for their batches and resumed; the triaged one never was.
    const held = of(batch, "CLAIM_HELD");
    expect(held.map((e) => e.details.reason_code)).toEqual(["LLM_BATCH_PENDING", "LLM_BATCH_PENDING"]);
    expect(of(batch, "CLAIM_RESUMED")).toHaveLength(2);
    expect(batch.stderr).toMatch(
      /… A clm_\S+: RUNNING and held for its batch since .*; 1 claim held; batch batch-scripted-\d+/,
    );
    // The same tokens at half the price: in the audit's pricing, the summary and the report.
    const [d, b] = [modelCost(direct.audit, DEFAULT_PRICE_TABLE), modelCost(batch.audit, DEFAULT_PRICE_TABLE)];
    expect(b.promptTokens).toBe(d.promptTokens);
    expect(d.usd).toBeGreaterThan(0);
    expect(b.usd).toBeCloseTo(d.usd / 2, 12);
    expect(reportCost(batch.report)).toBeCloseTo(reportCost(direct.report) / 2, 5);
    expect(reportCost(direct.report)).toBeGreaterThan(0);
    // --json: each claim's model cost on its row (none for the triaged one).
    expect(batch.rows.map((r) => r.model?.calls)).toEqual([undefined, 1, 1]);
    for (const i of [1, 2]) {
      expect(batch.rows[i]!.model!.prompt_tokens).toBe(direct.rows[i]!.model!.prompt_tokens);
      expect(batch.rows[i]!.model!.usd).toBeCloseTo(direct.rows[i]!.model!.usd / 2, 8);
    }
    // Every claim replays identically from its audit, the batch's holds and resumes included.
    expect(replays(batch)).toEqual(["IDENTICAL", "IDENTICAL", "IDENTICAL"]);
  }, 120_000);

  it("runs the same way in process (--in-process): held, tried on the run's clock, decided as without it", async () => {
    await serve({ pollsBeforeDone: 1 });
    const run = await claimsBatch(SCENARIOS, batchEnv(), undefined, ["--in-process"]);
    expect(run.code, run.stderr).toBe(0);
    expect(verdicts(run).map(([, verdict]) => verdict)).toEqual(["REJECT", "ACCEPT", "ACCEPT"]);
    expect(of(run, "CLAIM_HELD").map((e) => e.details.reason_code)).toEqual(["LLM_BATCH_PENDING", "LLM_BATCH_PENDING"]);
    expect(of(run, "LLM_CALL").map((e) => e.details.via)).toEqual(["batch", "batch"]);
    expect(replays(run)).toEqual(["IDENTICAL", "IDENTICAL", "IDENTICAL"]);
  }, 120_000);

  it("ends a claim whose batch never completes in review after LLM_BATCH_HOLD_S on the run's clock, naming why", async () => {
    await serve({ endAs: "expired" });
    const run = await claimsBatch(NEVER, batchEnv({ LLM_BATCH_HOLD_S: "60" }));
    expect(run.code, run.stderr).toBe(0);
    expect(verdicts(run)).toEqual([
      ["L", "REJECT", "ORDER_NOT_FOUND"],
      ["A", "NEEDS_REVIEW", "LLM_UNREACHABLE"],
      ["T", "NEEDS_REVIEW", "LLM_UNREACHABLE"],
    ]);
    for (const r of run.rows.slice(1))
      expect(r.reason).toMatch(
        /did not come back from the Batch API before the claim's hold ran out \(last: batch \S+ ended expired without this request's answer/,
      );
    // Each ended at its hold's end on the run's clock; the next row was received at the run's instant again.
    const start = Date.parse("2026-06-01T12:00:00Z");
    const needs = of(run, "CLAIM_NEEDS_REVIEW").map((e) => Date.parse(e.created_at));
    expect(needs).toHaveLength(2);
    for (const at of needs) expect(at).toBeGreaterThanOrEqual(start + 60_000);
    expect(of(run, "CLAIM_RECEIVED").map((e) => Date.parse(e.created_at))).toEqual([start, start, start]);
    expect(run.rows.every((r) => r.matches)).toBe(true);
    expect(replays(run)).toEqual(["IDENTICAL", "IDENTICAL", "IDENTICAL"]);
  }, 120_000);

  it("keeps a claim whose batch output is bad input held, names the problem, and after the hold a person decides", async () => {
    await serve({ output: () => "this is not JSONL\n" });
    const run = await claimsBatch(NEVER, batchEnv({ LLM_BATCH_HOLD_S: "60" }));
    expect(run.code, run.stderr).toBe(0);
    const held = of(run, "CLAIM_HELD");
    expect(held).toHaveLength(2);
    for (const r of run.rows.slice(1)) {
      expect(r).toMatchObject({ verdict: "NEEDS_REVIEW", reason_code: "LLM_UNREACHABLE" });
      expect(r.reason).toMatch(/is not JSONL: line 1 is not JSON/);
    }
    // The batch was kept and read again, never sent again: one per question, and one per Fixer after the hold.
    expect(server!.requests.filter((r) => r.method === "POST" && r.path === "/v1/batches")).toHaveLength(4);
    expect(replays(run)).toEqual(["IDENTICAL", "IDENTICAL", "IDENTICAL"]);
  }, 120_000);

  it("stops on Ctrl-C while waiting: partial audit and report, Interrupted after …, exit 130", async () => {
    await serve({ pollsBeforeDone: 1_000_000 });
    let sent = false;
    const run = await claimsBatch(SCENARIOS, batchEnv(), (text, kill) => {
      if (!sent && /… A clm_\S+: RUNNING and held for its batch/.test(text)) {
        sent = true;
        kill();
      }
    });
    expect(run.code, run.stderr).toBe(130);
    expect(run.stderr).toMatch(/Interrupted after 1\/3: 2 not run/);
    expect(run.audit.map((e) => e.event_type)).not.toContain("SIMULATION_END");
    expect(of(run, "CLAIM_HELD")).toHaveLength(1);
    expect(run.report).toContain("Run incomplete");
  }, 120_000);
});
