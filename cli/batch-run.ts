// `claims batch`'s run (docs/cli.md): the scenarios through the full pipeline, every verdict compared with the expected
// one. Imported only when `claims batch` runs, so its help loads nothing heavy (cli/command-batch.ts registers it).
import { resolve } from "node:path";
import { localLlm } from "../local/serve-llm.ts";
import type { ClaimsConfig } from "../core/claim/config.ts";
import { frozenClock, systemClock } from "../core/crew/index.ts";
import { runBatch, summarize } from "./batch.ts";
import { jsonRow } from "./batch-output.ts";
import type { RowModelCost } from "./batch-output.ts";
import type { AuditEvent } from "../core/integrity/index.ts";
import type { PriceTable } from "../core/llm/prices.ts";
import { interruptOnSignals } from "./serve-signals.ts";
import type { BatchLlm } from "./batch.ts";
import { dataDirFrom, loadRunAudit } from "./run-store.ts";
import { ensureOwnerOnlyDir } from "../local/owner-only.ts";
import { createInProcessRuntime } from "../local/runtime.ts";
import { startLocalStack } from "../local/stack.ts";
import type { LocalStack } from "../local/stack.ts";
import type { ClaimsRuntime, RuntimeBatch } from "../local/runtime.ts";
import type { FunctionKey } from "../app/manifest.ts";
import type { PipelineDeps } from "../pipeline/deps.ts";
import { loadPriceTable } from "../adapters/llm/prices-file.ts";
import { formatModelCost, modelCost } from "../core/agents/model-cost.ts";
import { mustExist } from "./options.ts";
import { writeReportFor } from "./report-run.ts";

/** The LLM of a local run (local/serve-llm.ts): the environment over the config file's defaults; a batch may use the Batch API. */
const llmFor = (config: ClaimsConfig): BatchLlm => localLlm(config, process.env, Number.POSITIVE_INFINITY, "batch");

/** Handler logs of a local run: errors only (the console tells the story), unless CLAIMS_LOG_LEVEL asks for more. */
const quietHandlers = (): { logLevel?: "ERROR" } => (process.env.CLAIMS_LOG_LEVEL ? {} : { logLevel: "ERROR" });

/** The options `claims batch` parsed (cli/command-batch.ts). */
export interface BatchOptions {
  config: string;
  now?: number;
  json?: boolean;
  dataDir?: string;
  inProcess?: boolean;
  claimTimeout?: number;
  keepGoing?: boolean;
}

/** Runs `claims batch` on `scenarios`: the exit code is set on process.exitCode. */
export async function runBatchCommand(scenarios: string, o: BatchOptions): Promise<void> {
  const log = (text: string) => (o.json ? process.stderr : process.stdout).write(`${text}\n`);
  // A batch is decided as of one instant: every claim is received when the run starts (or at --now),
  // so relative order dates and boundaries such as "exactly 14 days" mean what they say.
  const clock = frozenClock(o.now ?? systemClock().now());
  const dataDir = dataDirFrom(o.dataDir);
  ensureOwnerOnlyDir(dataDir);
  // A price table that cannot be used stops the run before anything starts (exit 2).
  const prices = loadPriceTable();
  const t0 = performance.now();
  // Ctrl-C (or SIGTERM): the run ends with its partial audit and report, exit 130; a second one exits at once.
  const interrupt = interruptOnSignals(log);
  const outcome = await runBatch({
    signal: interrupt.signal,
    scenariosPath: mustExist(scenarios, "scenario file"),
    configPath: mustExist(o.config, "config file"),
    clock,
    dataDir,
    log,
    ...(o.keepGoing ? { keepGoing: true } : {}),
    llm: llmFor,
    // The local stack by default: the production handlers on dynalite, fauxqs and the local bus.
    runtime: async (opts) =>
      o.inProcess
        ? createInProcessRuntime(opts)
        : stackRuntime(
            await startLocalStack({
              configPath: resolve(o.config),
              clock,
              llm: opts.llm,
              orders: opts.orders,
              dataDir,
              sweepEveryMs: 0,
              ...quietHandlers(),
              ...(opts.waits ? { waits: opts.waits } : {}),
              ...(o.claimTimeout === undefined ? {} : { settleTimeoutMs: o.claimTimeout * 1000 }),
              ...(opts.batch ? { wrapDeps: batchDeps(opts.batch) } : {}),
            }),
          ),
    writeReport: (simulationId) => writeReportFor(dataDir, simulationId, undefined, prices),
  });
  log(summarize(outcome, performance.now() - t0));
  const audit = await loadRunAudit(dataDir, outcome.simulationId);
  log(`  ${formatModelCost(modelCost(audit, prices))}\n`);
  if (o.json) {
    const costOf = claimCosts(audit, prices);
    const rows = outcome.rows.map((r) => jsonRow(r, costOf(r.claim_id)));
    process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
  }
  interrupt.dispose();
  process.exitCode = outcome.interrupted ? 130 : outcome.allMatch && outcome.llmReady ? 0 : 1;
}

/**
 * LLM_BATCH_MODE=batch on the local stack: every function's handler asks the Batch API for the run's claims, waits
 * for it up to the hold, and sends its delayed re-tries through the run's held work (cli/batch-wait.ts).
 */
function batchDeps(batch: RuntimeBatch): (fn: FunctionKey, deps: PipelineDeps) => PipelineDeps {
  return (_fn, deps) => ({
    ...deps,
    batchLlm: batch.llm,
    queues: batch.wrapQueues(deps.queues),
    settings: { ...deps.settings, llmBatchHoldMs: batch.holdMs },
  });
}

/** The stack's runtime, told when the stack is idle (queues empty, no handler busy): a wait for a batch needs it. */
function stackRuntime(stack: LocalStack): ClaimsRuntime {
  return { ...stack.runtime, idle: () => stack.drained() };
}

/**
 * The model cost of each claim of a run (its calls priced with `prices`, a Batch API call at the discount), once: for
 * the first row of the claim; nothing for a claim whose calls cost nothing per token (the rules model, self-hosted).
 */
function claimCosts(audit: readonly AuditEvent[], prices: PriceTable): (claimId: string) => RowModelCost | undefined {
  const seen = new Set<string>();
  return (claimId) => {
    if (claimId === "" || seen.has(claimId)) return undefined;
    seen.add(claimId);
    const cost = modelCost(
      audit.filter((e) => e.details.claim_id === claimId),
      prices,
    );
    if (cost.calls === 0 || (cost.usd === 0 && cost.unpriced === 0)) return undefined;
    return {
      calls: cost.calls,
      prompt_tokens: cost.promptTokens,
      completion_tokens: cost.completionTokens,
      usd: Number(cost.usd.toFixed(8)),
    };
  };
}
