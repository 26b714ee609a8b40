// What the pipeline's services run with: ports, the agent's contracts and the settings, passed in at the edge.
import type { ClaimsContract, RegistryView, ResponsibilityContract } from "../core/integrity/index.ts";
import type { PaymentProvider } from "./payments.ts";
import type { RefundLedger } from "./ports.ts";
import type { AuditLog } from "./ports.ts";
import type { OrderSource, SettlementRepository } from "./ports.ts";
import type { LlmPort } from "../core/llm/index.ts";
import type {
  ClaimRepository,
  Clock,
  EventPublisher,
  IdSource,
  ReviewRepository,
  SessionRepository,
  VerdictRepository,
  WorkQueues,
} from "./ports.ts";
import type { ClaimsCrewTimeouts } from "../core/agents/crew.ts";
import type { CrewShapeSetting } from "../core/claim/crew-shape.ts";
import type { Sha256Hex } from "../core/crew/hash.ts";
import { STEP_TIMER_MODES, STEP_TIMERS_VAR, stepTimerModeOf } from "../core/claim/step-timers.ts";
import type { StepTimerMode } from "../core/claim/step-timers.ts";
import { OutageHoldSettingError, StepTimersSettingError } from "./errors.ts";

/** The proposing agent as configured and registered. */
export interface AgentSettings {
  agentId: string;
  version: string;
  responsibility: ResponsibilityContract;
  contract: ClaimsContract;
  /** How people decide what the kernel escalates: the four-eyes bound, how long a review may wait (docs/reviews.md). */
  review?: { secondApprovalAboveEur?: number; dueMs?: number } | undefined;
  /** Which crew decides a claim (docs/llm.md, "Crew shape"); absent: `compact`. */
  crewShape?: CrewShapeSetting | undefined;
  /** A second policy decided beside this one on every decision, recorded and never acted on (docs/backtest.md). */
  shadow?: Omit<AgentSettings, "shadow">;
}

/** Tunables of the pipeline. */
export interface PipelineSettings {
  /** How long a proposal stays valid for the kernel (layer 2). */
  proposalValidityMs: number;
  timeouts: ClaimsCrewTimeouts;
  /** `false` sends every claim to the crew, triage skipped: only to measure what triage spares (bench/model-calls.bench.ts). */
  triage?: boolean;
  /**
   * `false` sends all free text to the model, even text the patterns read alone (docs/llm.md, "Extraction by
   * patterns"): only to measure what reading by patterns spares (bench/model-calls.bench.ts).
   */
  extractByPatterns?: boolean;
  /**
   * How long a claim that needs an unreachable model waits for it before it ends NEEDS_REVIEW LLM_UNREACHABLE
   * (docs/llm.md: the outage hold); 0 or absent: at once, no hold (`claims batch`, in-process runs).
   */
  llmOutageHoldMs?: number;
  /** While a claim is held, how long until its step or extraction is tried again (default 30 s: the endpoint's recheck). */
  llmOutageRetryMs?: number;
  /**
   * How long a claim whose model call went to the OpenAI Batch API (LLM_BATCH_MODE=batch) waits for the batch's answer
   * before it ends NEEDS_REVIEW LLM_UNREACHABLE as in an outage (docs/llm.md, "Batch mode"); absent: no batch mode.
   */
  llmBatchHoldMs?: number;
  /**
   * How long a claim waits for an order source that cannot answer, from its proposal's creation, before it goes
   * to a person (`ORDER_SOURCE_UNAVAILABLE`); shorter than `proposalValidityMs`. Default
   * DEFAULT_ORDER_SOURCE_WAIT_MS (pipeline/decide/kernel.ts).
   */
  orderSourceWaitMs?: number;
  /**
   * Who arms a claim's step-deadline timer first (CLAIMS_STEP_TIMERS, docs/architecture.md#timers-and-the-sweep):
   * `lazy` (absent: the default) — the sweep's first tick of a claim still open after its cutoff, so a claim decided in
   * seconds sends no timer message; `eager` — the crew's start, for its first step deadline. Ticks re-arm it either way.
   */
  stepTimers?: StepTimerMode;
}

export type { StepTimerMode } from "../core/claim/step-timers.ts";

/** CLAIMS_STEP_TIMERS: `lazy` (unset: the default) or `eager`; anything else is an error naming the variable. */
export function stepTimersFromEnv(env: Readonly<Record<string, string | undefined>>): StepTimerMode {
  const raw = env[STEP_TIMERS_VAR];
  const mode = stepTimerModeOf(raw);
  if (mode === undefined)
    throw new StepTimersSettingError(
      `${STEP_TIMERS_VAR} must be ${STEP_TIMER_MODES.join(" or ")} (who arms a claim's first step-deadline timer: the sweep, or the crew's start), got '${raw}'`,
    );
  return mode;
}

/** The outage hold when CLAIMS_LLM_OUTAGE_HOLD_S is not set: one hour. */
export const DEFAULT_LLM_OUTAGE_HOLD_S = 3600;

/** CLAIMS_LLM_OUTAGE_HOLD_S in milliseconds: whole seconds from 0 (no hold) to 7 days; unset: one hour. */
export function llmOutageHoldMsFromEnv(env: Readonly<Record<string, string | undefined>>): number {
  const raw = env.CLAIMS_LLM_OUTAGE_HOLD_S?.trim();
  if (raw === undefined || raw === "") return DEFAULT_LLM_OUTAGE_HOLD_S * 1000;
  const s = Number(raw);
  if (!/^\d+$/.test(raw) || s > 7 * 86_400)
    throw new OutageHoldSettingError(
      `CLAIMS_LLM_OUTAGE_HOLD_S must be a whole number of seconds from 0 (no hold) to 604800 (7 days), got '${raw}'`,
    );
  return s * 1000;
}

/** Default settings (in-process runs and tests): a proposal is valid for 15 minutes; LLM steps time out after 2 minutes. Real runs derive theirs from the LLM's time budget (`pipelineWaitsFor`). */
export const DEFAULT_PIPELINE_SETTINGS: PipelineSettings = {
  proposalValidityMs: 15 * 60_000,
  timeouts: { analystMs: 120_000, decisionMs: 120_000, fixerMs: 120_000 },
};

/** Every wait of the pipeline, derived from one LLM call's time budget (docs/llm.md: no fixed limit shorter than the LLM needs). */
export interface PipelineWaits {
  /** One model call including its retries and a structured answer's repair round (LLM_TIMEOUT_MS). */
  readonly callMs: number;
  /** What each wait adds for queue hops and handler overhead. */
  readonly slackMs: number;
  /** Crew step deadlines: analyst and fixer make one call, the Decision Maker up to two (its self-check repair). */
  readonly timeouts: ClaimsCrewTimeouts;
  /** One extraction invocation (one call), and the extraction queue's visibility timeout (an attempt's cycle). */
  readonly extractionMs: number;
  readonly extractionVisibilityMs: number;
  /** One worker invocation (the longest step), and the agent-steps queue's visibility timeout. */
  readonly workerMs: number;
  readonly workerVisibilityMs: number;
  /** A whole claim, from submission to DECIDED or NEEDS_REVIEW, in the worst case: every extraction receive, then analyst, fixer, decision and fixer again, then the kernel. */
  readonly claimMs: number;
}

/** The pipeline's waits for an LLM whose calls take at most `llmTimeoutMs` each; `extractionReceives` is the extraction queue's maxReceives (app/manifest.ts, 5). */
export function pipelineWaitsFor(llmTimeoutMs: number, extractionReceives = 5): PipelineWaits {
  const callMs = llmTimeoutMs;
  const slackMs = Math.max(10_000, Math.round(callMs / 10));
  const timeouts = { analystMs: callMs + slackMs, decisionMs: 2 * callMs + slackMs, fixerMs: callMs + slackMs };
  const extractionMs = callMs + slackMs;
  const extractionVisibilityMs = extractionMs + slackMs;
  const workerMs = timeouts.decisionMs;
  return {
    callMs,
    slackMs,
    timeouts,
    extractionMs,
    extractionVisibilityMs,
    workerMs,
    workerVisibilityMs: workerMs + slackMs,
    claimMs:
      extractionReceives * extractionVisibilityMs +
      timeouts.analystMs +
      timeouts.decisionMs +
      2 * timeouts.fixerMs +
      slackMs,
  };
}

/** The settings of a real run: the default validity window and crew step deadlines derived from the LLM's time budget. */
export function pipelineSettingsFor(llmTimeoutMs: number, llmOutageHoldMs = 0): PipelineSettings {
  return {
    ...DEFAULT_PIPELINE_SETTINGS,
    timeouts: pipelineWaitsFor(llmTimeoutMs).timeouts,
    ...(llmOutageHoldMs > 0 ? { llmOutageHoldMs } : {}),
  };
}

/** Every port and setting; each service takes the subset it needs. */
export interface PipelineDeps {
  claims: ClaimRepository;
  sessions: SessionRepository;
  verdicts: VerdictRepository;
  queues: WorkQueues;
  publisher: EventPublisher;
  audit: AuditLog;
  ledger: RefundLedger;
  reviews: ReviewRepository;
  orders: OrderSource;
  llm: LlmPort;
  /**
   * With LLM_BATCH_MODE=batch: the model behind the OpenAI Batch API, for the claims of a batch run (those carrying a
   * simulation id: `claims batch`, the scheduled batch); every other claim keeps `llm` (docs/llm.md, "Batch mode").
   */
  batchLlm?: LlmPort;
  clock: Clock;
  ids: IdSource;
  agent: AgentSettings;
  registry: RegistryView;
  settings: PipelineSettings;
  /** Where refund settlements live (docs/payments.md); absent where nothing pays refunds. */
  settlements?: SettlementRepository;
  /** The payment provider the refund executor pays through (PAYMENT_PROVIDER). */
  payments?: PaymentProvider;
  /**
   * The signing secret of `provider`'s webhooks (Stripe's: STRIPE_WEBHOOK_SECRET), read on use; undefined when
   * `provider` is not the configured one (its route is then not served here).
   */
  webhookSecret?: (provider: string) => string | undefined;
  /** The SHA-256 for proposal keys (the shell injects node:crypto's; default the pure one of core). */
  sha256?: Sha256Hex;
}

/** The ports effects are performed through. */
export type EffectPorts = Pick<PipelineDeps, "queues" | "audit" | "claims" | "publisher" | "reviews" | "ledger">;
