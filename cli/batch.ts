// `claims batch`: runs the scenario file through the pipeline, prints each verdict against the
// expected one, records the run's audit, writes the HTML report, and says whether all matched.
import { existsSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { agentHandshake, parseConfig } from "../core/claim/config.ts";
import type { ClaimsConfig } from "../core/claim/config.ts";
import { parseScenarioFile, scenarioBody, scenarioKeys, simulationIdFor } from "../core/history/scenarios.ts";
import { simulationDfid, simulationStartEvent } from "../core/history/simulation.ts";
import { auditEvent } from "../core/history/audit-events.ts";
import type { ScenarioResult, SimulationEndDetails } from "../core/history/audit-events.ts";
import type { LlmPort } from "../core/llm/index.ts";
import type { Clock } from "../pipeline/ports.ts";
import type { FrozenClock } from "../core/crew/index.ts";
import { createHeldWork, frozen, withBatchWaits } from "./batch-wait.ts";
import type { LlmMeter, PreflightResult } from "../adapters/llm/index.ts";
import { describePreflight } from "../adapters/llm/preflight.ts";
import type { ClaimRecord } from "../core/kernel/claim-record.ts";
import type { PipelineWaits } from "../pipeline/deps.ts";
import { AgentRefusedError } from "../functions/composition/errors.ts";
import {
  formatCalls,
  formatHeader,
  formatLlmFigures,
  formatProgress,
  formatRace,
  formatScenario,
  formatSummary,
  refundedBeforeNote,
} from "./batch-output.ts";
import { ignoredSummary } from "./config-check.ts";
import type { BatchRow } from "./batch-output.ts";
import { saveRunAudit } from "./run-store.ts";
import { applyRace, closesRace, runLaterRow, scenarioRow, submitRace } from "./batch-scenarios.ts";
import { runSteps } from "./batch-steps.ts";
import type { ClaimsRuntime, RuntimeOptions } from "../local/runtime.ts";

/** The model a batch runs with: the port, a loggable description, and optionally its endpoint check, call meter and derived waits. */
export interface BatchLlm {
  port: LlmPort;
  description: string;
  /** Checks the endpoint before the first claim (a few seconds at most). */
  preflight?: () => Promise<PreflightResult>;
  /** Counts and times the calls (progress lines, per-claim and per-call figures). */
  meter?: Pick<LlmMeter, "inFlight" | "calls">;
  /** Waits derived from the LLM settings, for the runtime. */
  waits?: PipelineWaits;
  /** Whether the model was found unreachable (last check or call); an old failure is checked again in the background. */
  unreachable?: () => boolean;
  /** LLM_BATCH_MODE=batch: the run's claims ask through the OpenAI Batch API (docs/llm.md, "Batch mode"). */
  batch?: { port: LlmPort; holdMs: number; pollMs: number };
}

/** Options of one batch run. */
interface BatchOptions {
  scenariosPath: string;
  configPath: string;
  /** The run's clock; with LLM_BATCH_MODE=batch a frozen one, which the waits for batches move (cli/batch-wait.ts). */
  clock: Clock | FrozenClock;
  dataDir: string;
  llm: (config: ClaimsConfig) => BatchLlm;
  runtime: (opts: RuntimeOptions) => Promise<ClaimsRuntime>;
  /** Human progress (stdout without --json, stderr with it). */
  log: (text: string) => void;
  /** Writes the report; returns its path. */
  writeReport?: (simulationId: string) => Promise<string | undefined>;
  /** A progress line every this many ms while a claim is waited for (default 10 000; 0 = none). */
  progressEveryMs?: number;
  /** After a failed endpoint check, run every row anyway (they end NEEDS_REVIEW at once) instead of stopping. */
  keepGoing?: boolean;
  /**
   * Aborted on Ctrl-C: no further row starts, the claim waited for is left to the stack, and the run ends with
   * the partial audit and report (no SIMULATION_END: the report says "Run incomplete").
   */
  signal?: AbortSignal;
}

/** What a batch run produced. */
interface BatchOutcome {
  simulationId: string;
  rows: BatchRow[];
  allMatch: boolean;
  /** False when the endpoint check failed: the run is a failure whatever the verdicts. */
  llmReady: boolean;
  reportPath?: string;
  auditPath?: string;
  /** Lines for the summary: the endpoint check, the model's figures, anything that went wrong around the claims. */
  notes: string[];
  /** Set when the run was interrupted: how many rows (claims and review steps) ended of how many. */
  interrupted?: { done: number; total: number };
}

/** Runs the batch; configuration errors throw (`SourceFileError`, `LlmConfigError`) before anything runs. After that every claim ends in a row, and the summary, the audit and the report are always attempted. */
export async function runBatch(opts: BatchOptions): Promise<BatchOutcome> {
  const started = opts.clock.now();
  const wallStart = performance.now();
  const config = parseConfig(readFileSync(opts.configPath, "utf8"), displayPath(opts.configPath), started);
  const scenarioFile = parseScenarioFile(readFileSync(opts.scenariosPath, "utf8"), displayPath(opts.scenariosPath));
  const scenarios = scenarioFile.scenarios;
  assertAgentAccepted(config);
  const llm = opts.llm(config);
  const orderCurrency = new Map(config.orders.map((o) => [o.order_id, o.currency ?? "EUR"]));
  const simulationId = simulationIdFor(config.simulationId, started);
  const notes: string[] = [];
  const held = llm.batch ? createHeldWork(frozen(opts.clock)) : undefined;
  // The endpoint check comes first: a model that is down is said at once, naming URL, model and error.
  const check = llm.preflight ? await llm.preflight() : undefined;
  const stack = await opts.runtime({
    agent: config.agent,
    orders: config.orders,
    llm: llm.port,
    clock: opts.clock,
    ...(llm.waits ? { waits: llm.waits } : {}),
    ...(llm.batch && held ? { batch: { llm: llm.batch.port, holdMs: llm.batch.holdMs, wrapQueues: held.wrap } } : {}),
  });
  // With the Batch API a claim held for its batch is waited through its hold's timers; each row starts at the run's instant.
  const runtime =
    llm.batch && held
      ? withBatchWaits(stack, started, {
          held,
          clock: frozen(opts.clock),
          pollMs: llm.batch.pollMs,
          signal: opts.signal,
          log: opts.log,
        })
      : stack;
  const rows: BatchRow[] = [];
  const results: ScenarioResult[] = [];
  const metered = llm.meter !== undefined && llm.port.provider !== "rules" ? llm.meter : undefined;
  const claimMs: number[] = [];
  // Bus events the local stack journals in the data directory: counted from here, so an interrupted run says how many it appended.
  const journal = join(opts.dataDir, "events.jsonl");
  const journalFrom = existsSync(journal) ? statSync(journal).size : 0;
  const interrupted = () => opts.signal?.aborted === true;
  const untilInterrupted = <T>(wait: Promise<T>): Promise<T | typeof INTERRUPTED> =>
    opts.signal === undefined ? wait : raceInterruption(wait, opts.signal);
  try {
    opts.log(
      formatHeader({
        config: displayPath(opts.configPath),
        scenarios: displayPath(opts.scenariosPath),
        count: scenarios.length,
        llm: llm.description,
        ...(check === undefined ? {} : { llmCheck: describePreflight(check) }),
        agent: `${config.agent.agentId} v${config.agent.version}`,
        now: new Date(started).toISOString(),
        simulationId,
        stack: runtime.description,
        ...(llm.waits && llm.port.provider !== "rules"
          ? {
              waits: `a call ${seconds(llm.waits.callMs)}, a step up to ${seconds(llm.waits.timeouts.decisionMs)}, a claim up to ${seconds(llm.waits.claimMs)}`,
            }
          : {}),
        ...(llm.batch
          ? {
              batchApi: `the model's calls go through the OpenAI Batch API (LLM_BATCH_MODE=batch); a claim waits for its batch up to ${seconds(llm.batch.holdMs)} on the run's clock (LLM_BATCH_HOLD_S), a try every ${llm.batch.pollMs / 1000} s (LLM_BATCH_POLL_S)`,
            }
          : {}),
      }),
    );
    // A model that is down stops the run before its first claim (every claim goes through the crew), unless --keep-going.
    const stopped = check !== undefined && !check.ok && opts.keepGoing !== true;
    if (check !== undefined && !check.ok) {
      notes.push(
        stopped
          ? `The LLM endpoint check failed: ${check.message}. The run stopped before its first claim (${scenarios.length} not run); start the model server and run again, or pass --keep-going to run every row (they end NEEDS_REVIEW ${check.code}).`
          : `The LLM endpoint check failed: ${check.message}. Claims that needed the model ended NEEDS_REVIEW (${check.code}); start the model server and run again.`,
      );
    }
    // What was read differently from the file's face value, and what was ignored: said once per run.
    const ignored = [...config.reading.ignored, ...scenarioFile.ignored];
    for (const m of config.reading.mappings) opts.log(`  Read as   : ${m}`);
    if (scenarioFile.idsFromLabels.length > 0)
      opts.log(`  Read as   : scenario ids from their labels: ${scenarioFile.idsFromLabels.join(", ")}`);
    if (ignored.length > 0) opts.log(`  Ignored   : ${ignoredSummary(ignored)}`);
    if (ignored.length > 0 || config.reading.mappings.length > 0 || scenarioFile.idsFromLabels.length > 0) opts.log("");
    const rootDfid = simulationDfid(simulationId);
    await runtime.appendAudit(
      simulationStartEvent({
        simulationId,
        nowMs: started,
        config,
        scenarios: [...scenarios, ...scenarioFile.afterReviews],
        files: { config: displayPath(opts.configPath), scenarios: displayPath(opts.scenariosPath) },
        stack: runtime.description,
        llm: { provider: llm.port.provider, model: llm.port.model },
      }),
    );

    for (const [i, s] of scenarios.entries()) {
      if (stopped || interrupted()) break;
      // The rows of a race are submitted at once when the first of them comes up (each row's own submission replays it).
      if (s.race !== undefined && scenarios[i - 1]?.race !== s.race)
        await submitRace(runtime, scenarios, s.race, simulationId, started);
      const t0 = performance.now();
      const callsBefore = metered?.calls().length ?? 0;
      const body = scenarioBody(s, simulationId, started);
      let claimId = "";
      let record: ClaimRecord | undefined;
      let failure: string | undefined;
      try {
        const submitted = await runtime.submit(body, scenarioKeys(simulationId, s.id, body));
        if (!submitted.ok) {
          failure = `refused by intake: ${submitted.message}${"issues" in submitted ? ` (${submitted.issues.map((x) => `${x.path}: ${x.message}`).join("; ")})` : ""}`;
        } else {
          claimId = submitted.claimId;
          const settled = await untilInterrupted(
            withProgress(
              // A claim held for its batch has its own progress line per try (cli/batch-wait.ts).
              { log: opts.log, progressEveryMs: llm.batch ? 0 : opts.progressEveryMs },
              () => runtime.settle(submitted.claimId),
              (elapsedMs) => progressLine(s.id, submitted.claimId, elapsedMs, runtime, metered),
            ),
          );
          // Interrupted while the claim was decided: it is not a row; its events so far are in the audit.
          if (settled === INTERRUPTED) break;
          record = settled;
        }
      } catch (error) {
        failure = `the run could not finish this claim: ${(error as Error).message}`;
      }
      const ms = performance.now() - t0;
      claimMs.push(ms);
      const row = scenarioRow(s, claimId, record, failure);
      if (!row.matches) Object.assign(row, refundedBeforeNote(row, rows));
      rows.push(row);
      const { note: _note, race_group: _group, ...result } = row;
      results.push({
        ...result,
        matches: row.matches === true,
        expected_reason_code: s.expected.reason_code ?? null,
        duration_ms: Math.round(ms),
      });
      const calls = metered?.calls().slice(callsBefore);
      // Amounts are in the order's currency (the config's orders; EUR for an order it does not have).
      const currency = orderCurrency.get(row.order_id ?? "") ?? "EUR";
      const stated = ("claim" in s.input ? s.input.claim.currency?.toUpperCase() : undefined) ?? currency;
      opts.log(
        formatScenario(i + 1, scenarios.length, row, {
          currency,
          input:
            "claim" in s.input
              ? `order=${s.input.claim.order_id} amount=${s.input.claim.amount_eur} ${stated} category=${s.input.claim.category}`
              : `free text (${String(body.claim_text).length} chars)`,
          ...(record?.extracted
            ? {
                extracted: `order=${record.extracted.order_id} amount=${record.extracted.amount_eur} category=${record.extracted.category}`,
              }
            : {}),
          ...(record?.proposal
            ? {
                proposal: `${record.proposal.action} ${record.proposal.order_id} ${record.proposal.amount_eur} ${stated} (confidence ${record.proposal.confidence})`,
              }
            : {}),
          ...(calls === undefined ? {} : { llm: formatCalls(calls) }),
          ...(record?.status === "AWAITING_RETURN" && record.return
            ? {
                awaiting: `the refund waits for the item to come back (${unitsOf(record.return.lines)}): pays on ${record.return.pay_on}, shipped by ${record.return.return_by}`,
              }
            : {}),
          ...(record?.outcome === "STORE_CREDIT" && record.credit
            ? {
                credit: `+${record.credit.bonus.value} ${record.credit.bonus.currency} bonus (${record.credit.bonus_pct}%)`,
              }
            : {}),
          ms,
        }),
      );
      const race = closesRace(scenarios, i);
      if (race !== undefined) opts.log(formatRace(applyRace(race, rows, results, scenarios)));
    }

    // The steps of `reviews:` (a person's decisions, payments, return events, the sweep), once every scenario has run.
    const reviewRows = await runSteps(scenarioFile.reviews, {
      runtime,
      claimOf: new Map(rows.map((r) => [r.id, r.claim_id])),
      startedMs: started,
      log: opts.log,
      stop: () => stopped || interrupted(),
    });
    // Rows that run once the review steps have (`after_reviews:`), then every race matched as a group.
    const afterRows: BatchRow[] = [];
    for (const [i, s] of scenarioFile.afterReviews.entries()) {
      if (stopped || interrupted()) break;
      if (s.race !== undefined && scenarioFile.afterReviews[i - 1]?.race !== s.race)
        await submitRace(runtime, scenarioFile.afterReviews, s.race, simulationId, started);
      const t0 = performance.now();
      const later = await runLaterRow(runtime, s, simulationId, started);
      afterRows.push(later.row);
      results.push(later.result);
      opts.log(
        formatScenario(i + 1, scenarioFile.afterReviews.length, later.row, {
          input:
            "claim" in s.input
              ? `after the reviews: order=${s.input.claim.order_id} amount=${s.input.claim.amount_eur} EUR`
              : "after the reviews: free text",
          ms: performance.now() - t0,
        }),
      );
      const race = closesRace(scenarioFile.afterReviews, i);
      if (race !== undefined) opts.log(formatRace(applyRace(race, afterRows, results, scenarioFile.afterReviews)));
    }
    if (metered !== undefined) notes.push(...formatLlmFigures(metered.calls(), claimMs));

    // Wall time: the run's clock may be frozen (a batch is decided as of one instant), so the run ends its wall
    // duration after it started, not at the instant it started.
    const durationMs = Math.round(performance.now() - wallStart);
    const ended = Math.max(opts.clock.now(), started + durationMs);
    const endDetails: SimulationEndDetails = {
      simulation_id: simulationId,
      ended_at: new Date(ended).toISOString(),
      duration_ms: durationMs,
      total: rows.length + afterRows.length,
      matched: [...rows, ...afterRows].filter((r) => r.matches).length,
      results,
      ...(reviewRows.length === 0
        ? {}
        : {
            review_steps: reviewRows.map((r) => ({
              id: r.id,
              label: r.label,
              claim_id: r.claim_id,
              outcome: r.verdict,
              expected: r.expected,
              matches: r.matches === true,
            })),
          }),
    };
    let auditPath: string | undefined;
    let reportPath: string | undefined;
    const all = [...rows, ...reviewRows, ...afterRows];
    const total = scenarios.length + scenarioFile.reviews.length + scenarioFile.afterReviews.length;
    try {
      // An interrupted run records no SIMULATION_END: its audit and report are partial (the report says "Run incomplete").
      if (!interrupted())
        await runtime.appendAudit(
          auditEvent({
            dfid: rootDfid,
            type: "SIMULATION_END",
            state: "DONE",
            details: endDetails,
            at: new Date(ended).toISOString(),
            simulationId,
          }),
        );
      const events = await runtime.auditBySimulation(simulationId);
      auditPath = await saveRunAudit(opts.dataDir, simulationId, events);
      reportPath = opts.writeReport ? await opts.writeReport(simulationId) : undefined;
    } catch (error) {
      notes.push(
        `The ${auditPath === undefined ? "audit" : "report"} could not be written: ${(error as Error).message}`,
      );
    }
    if (interrupted()) {
      const appended = journalLinesSince(journal, journalFrom);
      notes.unshift(
        `Interrupted after ${all.length}/${total}: ${total - all.length} not run. The audit of what ran is ${auditPath === undefined ? "not written" : `in ${displayPath(auditPath)}`}${reportPath === undefined ? "" : `, the report (marked "Run incomplete") in ${displayPath(reportPath)}`}${appended > 0 ? `; ${appended} bus event(s) of this run were appended to ${displayPath(journal)}` : ""}.`,
      );
    }
    return {
      simulationId,
      rows: all,
      ...(interrupted() ? { interrupted: { done: all.length, total } } : {}),
      allMatch: !interrupted() && all.every((r) => r.matches),
      llmReady: check === undefined || check.ok,
      notes,
      ...(auditPath ? { auditPath } : {}),
      ...(reportPath ? { reportPath } : {}),
    };
  } finally {
    if (interrupted())
      opts.log(
        "Stopping the stack: a claim that is with the model finishes or times out first (Ctrl-C again exits now)…",
      );
    await runtime.close();
  }
}

/** What `untilInterrupted` answers when the run was interrupted before the wait settled. */
export const INTERRUPTED = Symbol("interrupted");

/**
 * `wait`, or INTERRUPTED when `signal` aborts first. The abort listener is removed once `wait` settles, so a run of
 * many rows does not pile listeners on the one signal (Node warns past 10: MaxListenersExceededWarning).
 */
export async function raceInterruption<T>(wait: Promise<T>, signal: AbortSignal): Promise<T | typeof INTERRUPTED> {
  if (signal.aborted) return INTERRUPTED;
  let onAbort: (() => void) | undefined;
  const interrupted = new Promise<typeof INTERRUPTED>((done) => {
    onAbort = () => done(INTERRUPTED);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([wait, interrupted]);
  } finally {
    signal.removeEventListener("abort", onAbort!);
  }
}

/** How many lines were appended to the journal at `path` after byte `from` (0 when there is none). */
function journalLinesSince(path: string, from: number): number {
  if (!existsSync(path)) return 0;
  const text = readFileSync(path).subarray(from).toString("utf8");
  return text.split("\n").filter((l) => l.trim() !== "").length;
}

/** Runs `wait`, logging `line(elapsed)` every `progressEveryMs` until it settles. */
async function withProgress<T>(
  opts: Pick<BatchOptions, "log" | "progressEveryMs">,
  wait: () => Promise<T>,
  line: (elapsedMs: number) => Promise<string>,
): Promise<T> {
  const every = opts.progressEveryMs ?? 10_000;
  if (every <= 0) return wait();
  const t0 = performance.now();
  const timer = setInterval(() => {
    void line(performance.now() - t0).then(opts.log, () => undefined);
  }, every);
  try {
    return await wait();
  } finally {
    clearInterval(timer);
  }
}

async function progressLine(
  id: string,
  claimId: string,
  elapsedMs: number,
  runtime: ClaimsRuntime,
  meter: BatchLlm["meter"] | undefined,
): Promise<string> {
  const record = await runtime.getClaim(claimId).catch(() => undefined);
  return formatProgress({
    id,
    claimId,
    status: record?.status ?? "not stored",
    elapsedMs,
    inFlight: meter?.inFlight() ?? [],
    done: meter?.calls().length,
  });
}

/** "1 unit", "3 units": what a return asks back. */
function unitsOf(lines: readonly { quantity: number }[]): string {
  const n = lines.reduce((sum, l) => sum + l.quantity, 0);
  return `${n} unit${n === 1 ? "" : "s"}`;
}

function seconds(ms: number): string {
  return `${Math.round(ms / 1000)} s`;
}

/** Refuses to run an agent the registry would refuse (the pipeline performs the same handshake), before anything starts. */
export function assertAgentAccepted(config: ClaimsConfig): void {
  const answer = agentHandshake(config);
  if (!answer.ok)
    throw new AgentRefusedError(
      `agent ${config.agent.agentId} v${config.agent.version} was refused by the registry: ${answer.message}`,
    );
}

/** The summary block for a finished batch. */
export function summarize(outcome: BatchOutcome, ms: number): string {
  return formatSummary(outcome.rows, {
    ms,
    notes: outcome.notes,
    ...(outcome.reportPath ? { report: displayPath(outcome.reportPath) } : {}),
  });
}

function displayPath(p: string): string {
  const rel = relative(process.cwd(), p);
  return rel.startsWith("..") ? p : rel;
}
