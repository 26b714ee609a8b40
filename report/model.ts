// Turns one simulation's audit events into the report's model. Every event's details are parsed with its
// type's schema (core/history/audit-events.ts), the one replay reads with: the audit is the only input, and an
// event that does not follow its schema is named on its claim instead of read, so the rest stays readable.
import { isCurrencyCode } from "../core/integrity/currency.ts";
import { money, moneyJson, parseMoney } from "../core/kernel/money.ts";
import { currencyFor, type Amount } from "../core/kernel/public-amount.ts";
import { auditClaimId, auditSimulationId, parseAuditDetails } from "../core/history/audit-events.ts";
import type {
  AuditDetails,
  ScenarioResult,
  SimulationEndDetails,
  SimulationStartDetails,
} from "../core/history/audit-events.ts";
import type { Claim } from "../core/claim/claim.ts";
import type { AuditEvent } from "../core/integrity/audit.ts";
import type { StepError } from "../core/crew/index.ts";
import { matchRaces } from "../core/history/race.ts";
import type { RaceGroup } from "../core/history/race.ts";
import { ReportInputError } from "./errors.ts";
import { settlementDfid } from "../core/kernel/claim-record.ts";

/** A claim's final outcome as the audit shows it. */
export type Outcome = "ACCEPT" | "ESCALATE" | "REJECT" | "NEEDS_REVIEW" | "PENDING" | "NOT_RUN";

/** Token usage of one or more LLM calls. */
export interface Usage {
  calls: number;
  prompt: number;
  completion: number;
  total: number;
  /** Some of the counts are estimates (the endpoint reported none). */
  estimated: boolean;
}

/** One LLM call of a claim (extraction included, as role `extractor`). */
interface LlmCall {
  role: string;
  model: string | undefined;
  attempts: number | undefined;
  ok: boolean;
  error: string | undefined;
  durationMs: number | undefined;
  usage: Usage | undefined;
  /** Answered through the OpenAI Batch API: priced at its discount (docs/llm.md, "Batch mode"). */
  batch?: boolean;
}

/** One kernel check as recorded in KERNEL_VERDICT. */
interface KernelCheck {
  layer: number;
  name: string;
  passed: boolean;
  reasonCode: string | undefined;
}

/** What the kernel decided, from KERNEL_VERDICT. */
interface KernelVerdict {
  verdict: string;
  reasonCode: string | undefined;
  reason: string | undefined;
  layer: number | undefined;
  checks: KernelCheck[];
  verdictId: string | undefined;
  orderId: string | undefined;
  amountEur: number | undefined;
  policyKind: string | undefined;
  decidedAt: string | undefined;
  /** What the config's shadow policy decided on the same inputs, when one was configured. */
  shadow: { verdict: string; reasonCode: string; agrees: boolean } | undefined;
}

/** A scenario of the run with what it expects. */
interface ScenarioInfo {
  id: string;
  label: string;
  expected: { verdict: string; reasonCode: string | undefined };
  /** The race the scenario belongs to: matched as a group with the race's other rows, by count. */
  race?: string | undefined;
}

/** Everything the audit tells about one claim. */
export interface ClaimTrace {
  claimId: string;
  dfid: string;
  scenario: ScenarioInfo | undefined;
  label: string | undefined;
  inputKind: "claim" | "claim_text" | "unknown";
  /** The structured claim, or the customer's text. */
  input: Claim | string | undefined;
  receivedAt: string | undefined;
  /** A CREW_STARTED event exists: the crew ran (or is running) for this claim. */
  crewStarted: boolean;
  extraction:
    | {
        ok: boolean;
        extracted: unknown;
        claim: Claim | undefined;
        reasonCode: string | undefined;
        reason: string | undefined;
        warnings: string[];
      }
    | undefined;
  analysis: string | undefined;
  /** Who wrote the analysis: the Claims Analyst, or the compact crew's Claims Officer (docs/llm.md, "Crew shape"). */
  analysisBy: "Claims Analyst" | "Claims Officer";
  stepFailures: string[];
  decisionOutput: Record<string, unknown> | undefined;
  proposal: Record<string, unknown> | undefined;
  selfCheck: { status: "passed" | "failed" | "not reached"; failures: string[] };
  crewFailure: { reasonCode: string | undefined; reason: string | undefined } | undefined;
  kernelInputs:
    | { order: unknown; ledgerEntry: unknown; receivedAt: string | undefined; decidedAt: string | undefined }
    | undefined;
  /** The currency the claim's amounts count: the order's as the kernel or triage saw it, else the claim's, else EUR. */
  currency: string;
  verdict: KernelVerdict | undefined;
  execution:
    | {
        executionId: string | undefined;
        amountEur: number | undefined;
        orderId: string | undefined;
        refundedAfterEur: number | undefined;
        approvedBy: string | undefined;
        /** What the ACCEPT gave when not a refund (docs/returns.md#outcomes): store credit's bonus, or an exchange. */
        outcome?: { kind: "STORE_CREDIT"; bonus: string } | { kind: "EXCHANGE" } | undefined;
      }
    | undefined;
  notExecuted: { code: string | undefined; reason: string | undefined } | undefined;
  review: { reasonCode: string | undefined; reason: string | undefined } | undefined;
  /** The human review the claim opened (REVIEW_REQUESTED), if any. */
  reviewRequest: ReviewRequest | undefined;
  /** A reviewer's decision on that review (REVIEW_DECIDED), if taken. */
  reviewDecision: ReviewDecision | undefined;
  /**
   * What the payment provider made of the refund (its settlement's own flow, docs/payments.md: REFUND_SETTLED /
   * REFUND_FAILED, a batch run's rehearsed decline too) and a reviewer's RETRY / CLOSE of a failed one.
   */
  payment: Payment | undefined;
  /** The claim a reviewer's RESUBMIT corrected, when this claim is the corrected one. */
  parentClaimId: string | undefined;
  /** The simulation the claim belongs to (`details.simulation_id`), if any. */
  simulationId: string | undefined;
  llmCalls: LlmCall[];
  outcome: Outcome;
  /** The order the claim is about: the kernel's, else the proposal's, else the claim's. */
  orderId: string | undefined;
  /** The amount claimed (structured or extracted claim), in EUR. */
  claimedEur: number | undefined;
  /** The amount at stake in the outcome: the kernel's (the proposal's) amount, else the claimed one. */
  amountEur: number | undefined;
  /** When the claim reached its outcome (the verdict, or the hand-over to review); undefined while pending. */
  finalAt: string | undefined;
  /** Milliseconds from receipt to the outcome, when both are known. */
  decisionMs: number | undefined;
  /** How long the batch waited for this claim, wall time (SIMULATION_END): its decisions may be as of one fixed instant. */
  batchMs?: number | undefined;
  /** The reason code of the outcome (the verdict's, or the review's for NEEDS_REVIEW). */
  reasonCode: string | undefined;
  reason: string | undefined;
  /** Whether the outcome is what the scenario expected (undefined without an expectation); a race row: its group's answer. */
  matches: boolean | undefined;
  /** The race group the claim's scenario belongs to, matched by count ("2 of 4 accepted"). */
  raceGroup?: RaceGroup | undefined;
  eventCount: number;
  /** Events of the claim whose details do not follow their schema (not read), each with what is wrong. */
  unreadable: string[];
}

/** A review opened by an ESCALATE verdict or a NEEDS_REVIEW claim, from REVIEW_REQUESTED. */
interface ReviewRequest {
  reviewId: string | undefined;
  origin: string | undefined;
  reasonCode: string | undefined;
  reason: string | undefined;
  amountEur: number | undefined;
  requestedAt: string | undefined;
}

/** The refund's settlement with the payment provider, from its own flow (`dfid_pay_<claim_id>`). */
interface Payment {
  status: "SETTLED" | "FAILED" | undefined;
  provider: string | undefined;
  failureReason: string | undefined;
  /** A reviewer's RETRY / CLOSE of the failed refund. */
  decision:
    | { decision: string; reviewer: string | undefined; note: string | undefined; paidOutOfBand: boolean | undefined }
    | undefined;
}

/** A reviewer's decision, from REVIEW_DECIDED. */
interface ReviewDecision {
  decision: string;
  reviewer: string | undefined;
  note: string | undefined;
  amountEur: number | undefined;
  executionId: string | undefined;
  resubmittedClaimId: string | undefined;
  decidedAt: string | undefined;
}

/** Money at stake per outcome, in EUR (sums of the `amountEur` of each claim in EUR; other currencies are not added). */
export interface MoneyByOutcome {
  /** Refunded by an ACCEPT (executed automatically). */
  refundedAuto: number;
  /** Refunded after a reviewer's approval. */
  refundedApproved: number;
  /** Escalated and still waiting for a reviewer. */
  escalatedPending: number;
  /** Escalated and denied by a reviewer (or the part of an approval below the proposal). */
  escalatedDenied: number;
  rejected: number;
  needsReview: number;
}

/** The whole report's model. */
export interface ReportModel {
  simulationId: string | undefined;
  start: SimulationStartDetails | undefined;
  /** Set when SIMULATION_START exists but its details do not follow the schema. */
  startProblem: string | undefined;
  end: SimulationEndDetails | undefined;
  endProblem: string | undefined;
  /** Claims in order of first appearance, then scenarios that never ran (outcome NOT_RUN). */
  claims: ClaimTrace[];
  counts: Record<Outcome, number>;
  matched: number;
  withExpectation: number;
  models: string[];
  usageByRole: { role: string; usage: Usage }[];
  totalUsage: Usage;
  /** Refunds executed: how many, their EUR total (EUR refunds only), and the total per currency (EUR first). */
  refunds: { count: number; totalEur: number; totals: Amount[] };
  money: MoneyByOutcome;
  /** Reviews opened, and how many of them are decided. */
  reviews: { requested: number; decided: number };
  eventCount: number;
}

/** A JSON object of a model's answer (any JSON value), or nothing. */
const jsonObject = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

/** Adds two usages. */
export function addUsage(a: Usage, b: Usage): Usage {
  return {
    calls: a.calls + b.calls,
    prompt: a.prompt + b.prompt,
    completion: a.completion + b.completion,
    total: a.total + b.total,
    estimated: a.estimated || b.estimated,
  };
}

/** The zero usage. */
export const NO_USAGE: Usage = { calls: 0, prompt: 0, completion: 0, total: 0, estimated: false };

function readUsage(u: AuditDetails<"LLM_CALL">["usage"]): Usage | undefined {
  if (!u) return undefined;
  return {
    calls: 1,
    prompt: u.prompt_tokens,
    completion: u.completion_tokens,
    total: u.total_tokens,
    estimated: u.estimated,
  };
}

function errorText(e: StepError | undefined): string | undefined {
  if (e === undefined) return undefined;
  return e.code !== undefined ? `${e.code}: ${e.message}` : e.message;
}

/** Orders roles the way the crew runs them; unknown roles follow alphabetically. */
export function compareRoles(a: string, b: string): number {
  const order = ["extractor", "claims_analyst", "decision_maker"];
  const ia = order.indexOf(a);
  const ib = order.indexOf(b);
  if (ia !== -1 || ib !== -1) return (ia === -1 ? order.length : ia) - (ib === -1 ? order.length : ib);
  return a < b ? -1 : a > b ? 1 : 0;
}

function emptyTrace(claimId: string, dfid: string): ClaimTrace {
  return {
    claimId,
    dfid,
    scenario: undefined,
    label: undefined,
    inputKind: "unknown",
    input: undefined,
    receivedAt: undefined,
    crewStarted: false,
    extraction: undefined,
    analysis: undefined,
    analysisBy: "Claims Analyst",
    stepFailures: [],
    decisionOutput: undefined,
    proposal: undefined,
    selfCheck: { status: "not reached", failures: [] },
    crewFailure: undefined,
    kernelInputs: undefined,
    currency: "EUR",
    verdict: undefined,
    execution: undefined,
    notExecuted: undefined,
    review: undefined,
    reviewRequest: undefined,
    reviewDecision: undefined,
    payment: undefined,
    parentClaimId: undefined,
    simulationId: undefined,
    llmCalls: [],
    outcome: "PENDING",
    orderId: undefined,
    claimedEur: undefined,
    amountEur: undefined,
    finalAt: undefined,
    decisionMs: undefined,
    reasonCode: undefined,
    reason: undefined,
    matches: undefined,
    eventCount: 0,
    unreadable: [],
  };
}

function readVerdict(d: AuditDetails<"KERNEL_VERDICT">): KernelVerdict {
  return {
    verdict: d.verdict,
    reasonCode: d.reason_code,
    reason: d.reason,
    layer: d.layer,
    checks: d.checks.map((c) => ({ layer: c.layer, name: c.name, passed: c.passed, reasonCode: c.reason_code })),
    verdictId: d.verdict_id,
    orderId: d.order_id ?? undefined,
    amountEur: d.amount_eur ?? undefined,
    policyKind: d.policy_kind ?? undefined,
    decidedAt: d.decided_at,
    shadow: d.shadow
      ? { verdict: d.shadow.verdict, reasonCode: d.shadow.reason_code, agrees: d.shadow.agrees }
      : undefined,
  };
}

function applyEvent(t: ClaimTrace, e: AuditEvent): void {
  t.eventCount++;
  t.simulationId ??= auditSimulationId(e);
  const read = parseAuditDetails(e);
  if (!read.ok) {
    t.unreadable.push(read.problem);
    return;
  }
  const { parsed } = read;
  // The refund's settlement is a flow of its own: what the provider said, and a reviewer's RETRY / CLOSE of it.
  if (e.dfid === settlementDfid(t.claimId)) {
    const payment = (t.payment ??= {
      status: undefined,
      provider: undefined,
      failureReason: undefined,
      decision: undefined,
    });
    if (parsed.type === "REFUND_SETTLED" || parsed.type === "REFUND_FAILED")
      Object.assign(payment, {
        status: parsed.type === "REFUND_SETTLED" ? "SETTLED" : "FAILED",
        provider: parsed.details.provider,
        failureReason: parsed.details.failure_reason,
      });
    else if (parsed.type === "REVIEW_DECIDED")
      payment.decision = {
        decision: parsed.details.decision,
        reviewer: parsed.details.reviewer,
        note: parsed.details.note,
        paidOutOfBand: parsed.details.paid_out_of_band,
      };
    return;
  }
  switch (parsed.type) {
    case "CLAIM_RECEIVED": {
      const { input } = parsed.details;
      if ("claim_text" in input) {
        t.inputKind = "claim_text";
        t.input = input.claim_text;
      } else {
        t.inputKind = "claim";
        t.input = input.claim;
      }
      t.label = parsed.details.label ?? t.label;
      t.receivedAt = parsed.details.received_at;
      break;
    }
    case "CLAIM_EXTRACTED":
    case "CLAIM_EXTRACTION_FAILED": {
      const d = parsed.details;
      const ok = parsed.type === "CLAIM_EXTRACTED";
      t.extraction = {
        ok,
        extracted: d.extracted,
        claim: parsed.type === "CLAIM_EXTRACTED" ? parsed.details.claim : undefined,
        reasonCode: parsed.type === "CLAIM_EXTRACTION_FAILED" ? parsed.details.reason_code : undefined,
        reason: parsed.type === "CLAIM_EXTRACTION_FAILED" ? parsed.details.reason : undefined,
        warnings: parsed.type === "CLAIM_EXTRACTED" ? parsed.details.warnings : [],
      };
      t.llmCalls.push({
        role: "extractor",
        model: d.model,
        attempts: d.attempts,
        ok: ok || d.usage !== undefined,
        error: undefined,
        durationMs: undefined,
        usage: readUsage(d.usage),
        ...(d.via === "batch" ? { batch: true } : {}),
      });
      break;
    }
    case "CREW_STARTED":
      t.crewStarted = true;
      break;
    case "LLM_CALL": {
      const d = parsed.details;
      // The compact crew's one step keeps its analysis with its call; its answer to the crew is the proposal.
      if (d.analysis !== undefined) {
        t.analysis = d.analysis;
        t.analysisBy = "Claims Officer";
      }
      t.llmCalls.push({
        role: d.role,
        model: d.model,
        attempts: d.attempts,
        ok: d.ok,
        error: errorText(d.error),
        durationMs: d.duration_ms,
        usage: readUsage(d.usage),
        ...(d.via === "batch" ? { batch: true } : {}),
      });
      break;
    }
    case "AGENT_STEP": {
      // The agent's answer is any JSON value: the analyst's carries its analysis, the decision maker's an action.
      const output = jsonObject(parsed.details.inbound.output);
      if (output && typeof output.analysis === "string") t.analysis = output.analysis;
      else if (output && "action" in output) t.decisionOutput = output;
      break;
    }
    case "AGENT_STEP_FAILED": {
      const d = parsed.details;
      if ("inbound" in d)
        t.stepFailures.push(
          `step failed: ${("error" in d.inbound ? errorText(d.inbound.error) : undefined) ?? "no error recorded"}`,
        );
      else t.stepFailures.push(`fixer ${d.fixer.fixerRole} invoked for ${d.fixer.failedRole} (${d.fixer.reason})`);
      break;
    }
    case "AGENT_DECISION":
      t.decisionOutput = parsed.details.output;
      t.proposal = parsed.details.proposal;
      t.selfCheck = { status: "passed", failures: [] };
      break;
    case "CLAIMS_SELF_CHECK_FAILED": {
      const d = parsed.details;
      t.decisionOutput = d.output;
      const failures = d.failures.map((f) => f.message);
      t.selfCheck = { status: "failed", failures: failures.length > 0 ? failures : [d.reason] };
      break;
    }
    case "CREW_FAILED":
      t.crewFailure = { reasonCode: parsed.details.reason_code, reason: parsed.details.reason };
      break;
    case "PROPOSAL_SUBMITTED": {
      // Validated above; the order and ledger entry are shown as recorded (canonical key order).
      const k = e.details.kernel_inputs as typeof parsed.details.kernel_inputs;
      t.kernelInputs = { order: k.order, ledgerEntry: k.ledgerEntry, receivedAt: k.receivedAt, decidedAt: k.decidedAt };
      orderCurrency.set(t, currencyOfOrder(k.order));
      break;
    }
    case "CLAIM_TRIAGED":
      orderCurrency.set(
        t,
        currencyOfOrder((e.details as { triage_inputs?: { order?: unknown } }).triage_inputs?.order),
      );
      break;
    case "KERNEL_VERDICT":
      t.verdict = readVerdict(parsed.details);
      t.finalAt = t.verdict.decidedAt ?? e.created_at;
      break;
    case "CLAIM_REFUND_EXECUTED": {
      const d = parsed.details;
      t.execution = {
        executionId: d.execution_id,
        amountEur: d.amount_eur,
        orderId: d.order_id,
        refundedAfterEur: d.ledger_after === undefined ? undefined : d.ledger_after.refunded_cents / 100,
        approvedBy: d.approved_by,
        outcome: d.credit
          ? {
              kind: "STORE_CREDIT",
              bonus: `${d.credit.bonus.value} ${d.credit.bonus.currency} (${d.credit.bonus_pct}%)`,
            }
          : d.exchange
            ? { kind: "EXCHANGE" }
            : undefined,
      };
      break;
    }
    case "CLAIM_REFUND_NOT_EXECUTED":
      t.notExecuted = { code: parsed.details.code, reason: parsed.details.reason };
      break;
    case "CLAIM_NEEDS_REVIEW":
      t.review = { reasonCode: parsed.details.reason_code, reason: parsed.details.reason };
      t.finalAt ??= e.created_at;
      break;
    case "REVIEW_REQUESTED": {
      const d = parsed.details;
      t.reviewRequest = {
        reviewId: d.review_id,
        origin: d.origin,
        reasonCode: d.reason_code,
        reason: d.reason,
        amountEur: d.amount_eur,
        requestedAt: d.requested_at,
      };
      break;
    }
    case "REVIEW_DECIDED": {
      const d = parsed.details;
      t.reviewDecision = {
        decision: d.decision,
        reviewer: d.reviewer,
        note: d.note,
        amountEur: d.amount_eur,
        executionId: d.execution_id,
        resubmittedClaimId: d.resubmitted_claim_id,
        decidedAt: d.decided_at,
      };
      break;
    }
    default:
      break;
  }
}

function finish(t: ClaimTrace): void {
  if (t.verdict && ["ACCEPT", "ESCALATE", "REJECT"].includes(t.verdict.verdict)) {
    t.outcome = t.verdict.verdict as Outcome;
    t.reasonCode = t.verdict.reasonCode;
    t.reason = t.verdict.reason;
  } else if (t.review) {
    t.outcome = "NEEDS_REVIEW";
    t.reasonCode = t.review.reasonCode;
    t.reason = t.review.reason;
  }
  const claim = typeof t.input === "object" ? t.input : t.extraction?.claim;
  t.currency = currencyFor(
    orderCurrency.get(t) === undefined ? undefined : { currency: orderCurrency.get(t)! },
    claim?.currency,
  );
  t.claimedEur = claim?.amount_eur;
  const proposed = t.decisionOutput?.order_id;
  t.orderId = t.verdict?.orderId ?? (typeof proposed === "string" ? proposed : undefined) ?? claim?.order_id;
  t.amountEur = t.verdict?.amountEur ?? t.reviewRequest?.amountEur ?? t.claimedEur;
  if (t.outcome === "PENDING" || t.outcome === "NOT_RUN") t.finalAt = undefined;
  const from = t.receivedAt === undefined ? NaN : Date.parse(t.receivedAt);
  const to = t.finalAt === undefined ? NaN : Date.parse(t.finalAt);
  t.decisionMs = Number.isNaN(from) || Number.isNaN(to) ? undefined : Math.max(0, to - from);
  const expected = t.scenario?.expected;
  if (expected && t.outcome !== "PENDING" && t.outcome !== "NOT_RUN") {
    t.matches =
      t.outcome === expected.verdict && (expected.reasonCode === undefined || expected.reasonCode === t.reasonCode);
  } else if (expected) {
    t.matches = false;
  }
}

/** Race rows are matched as a group, by count (core/history/race.ts), as the batch matched them. */
function matchRaceGroups(claims: readonly ClaimTrace[], scenarios: readonly ScenarioInfo[]): void {
  const actual = claims.flatMap((t) =>
    t.scenario ? [{ id: t.scenario.id, verdict: t.outcome, reason_code: t.reasonCode }] : [],
  );
  const expected = scenarios.map((s) => ({
    id: s.id,
    verdict: s.expected.verdict,
    reason_code: s.expected.reasonCode,
    race: s.race,
  }));
  for (const group of matchRaces(expected, actual))
    for (const t of claims)
      if (t.scenario && group.ids.includes(t.scenario.id))
        Object.assign(t, { matches: group.matches, raceGroup: group });
}

/** The order currency each claim's kernel or triage saw (read once per claim, kept beside its trace). */
const orderCurrency = new WeakMap<ClaimTrace, string | undefined>();

/** An order's currency as recorded, when it names an ISO 4217 code. */
function currencyOfOrder(order: unknown): string | undefined {
  const currency = (order as { currency?: unknown } | null | undefined)?.currency;
  return isCurrencyCode(currency) ? currency : undefined;
}

/**
 * The sum of the claims' amounts per currency, never adding two currencies (there is no FX): EUR first, then by code;
 * an amount not exact in its currency is left out.
 */
function totalsByCurrency(claims: readonly ClaimTrace[], amount: (t: ClaimTrace) => number | undefined): Amount[] {
  const minor = new Map<string, number>();
  for (const t of claims) {
    const parsed = parseMoney(amount(t), t.currency);
    if (parsed.ok) minor.set(t.currency, (minor.get(t.currency) ?? 0) + parsed.money.minor);
  }
  return [...minor.entries()]
    .sort(([a], [b]) => (a === "EUR" ? -1 : b === "EUR" ? 1 : a.localeCompare(b)))
    .map(([currency, units]) => moneyJson(money(units, currency)));
}

/** Sums EUR amounts in cents, so that 0.1 + 0.2 stays 0.3. */
function sumEur(values: readonly (number | undefined)[]): number {
  return Math.round(values.reduce<number>((sum, v) => sum + Math.round((v ?? 0) * 100), 0)) / 100;
}

/**
 * Money at stake per outcome: what was refunded (automatically or after review), escalated, denied, rejected or
 * handed to review — in EUR, over the claims in EUR only (no two currencies are ever added; the refunds' totals per
 * currency are `refunds.totals`).
 */
function moneyByOutcome(all: readonly ClaimTrace[]): MoneyByOutcome {
  const claims = all.filter((t) => t.currency === "EUR");
  const pick = (keep: (t: ClaimTrace) => boolean, amount: (t: ClaimTrace) => number | undefined) =>
    sumEur(claims.filter(keep).map(amount));
  const approvedBy = (t: ClaimTrace) =>
    t.execution?.approvedBy !== undefined || t.reviewDecision?.decision === "APPROVE";
  const escalated = (t: ClaimTrace) => t.outcome === "ESCALATE";
  return {
    refundedAuto: pick(
      (t) => t.outcome === "ACCEPT" && t.execution !== undefined,
      (t) => t.execution?.amountEur,
    ),
    refundedApproved: pick(
      (t) => escalated(t) && approvedBy(t),
      (t) => t.execution?.amountEur ?? t.reviewDecision?.amountEur,
    ),
    escalatedPending: pick(
      (t) => escalated(t) && t.reviewDecision === undefined,
      (t) => t.amountEur,
    ),
    // What a reviewer did not grant: a denial's whole amount, or the part of an approval below the proposal.
    escalatedDenied: pick(
      (t) => escalated(t) && t.reviewDecision !== undefined,
      (t) => {
        if (!approvedBy(t)) return t.amountEur;
        const granted = t.execution?.amountEur ?? t.reviewDecision?.amountEur ?? 0;
        return t.amountEur === undefined ? 0 : Math.max(0, Math.round((t.amountEur - granted) * 100) / 100);
      },
    ),
    rejected: pick(
      (t) => t.outcome === "REJECT",
      (t) => t.amountEur,
    ),
    needsReview: pick(
      (t) => t.outcome === "NEEDS_REVIEW",
      (t) => t.amountEur,
    ),
  };
}

/** The run's SIMULATION_START or SIMULATION_END details, or what is wrong with them. */
function parseBoundary<T extends "SIMULATION_START" | "SIMULATION_END">(
  type: T,
  event: AuditEvent | undefined,
): { value: AuditDetails<T> | undefined; problem: string | undefined } {
  if (!event) return { value: undefined, problem: undefined };
  const read = parseAuditDetails(event);
  if (!read.ok) return { value: undefined, problem: read.problem };
  return {
    value: read.parsed.type === type ? (read.parsed.details as AuditDetails<T>) : undefined,
    problem: undefined,
  };
}

/** Builds the report model from one simulation's audit events; throws `ReportInputError` when they mix simulations. */
export function buildReportModel(events: readonly AuditEvent[]): ReportModel {
  const sorted = events
    .map((e, i) => ({ e, i, t: Date.parse(e.created_at) }))
    .sort((a, b) => (Number.isNaN(a.t) || Number.isNaN(b.t) ? 0 : a.t - b.t) || a.i - b.i)
    .map((x) => x.e);
  const startEvents = sorted.filter((e) => e.event_type === "SIMULATION_START");
  const endEvents = sorted.filter((e) => e.event_type === "SIMULATION_END");
  const simIds = [
    ...new Set([...startEvents, ...endEvents].map(auditSimulationId).filter((s): s is string => s !== undefined)),
  ];
  if (simIds.length > 1)
    throw new ReportInputError(
      `the events belong to ${simIds.length} simulations (${simIds.join(", ")}); the report covers one`,
    );
  const claimSims = new Set(sorted.map(auditSimulationId).filter((s): s is string => s !== undefined));
  if (simIds.length === 0 && claimSims.size > 1)
    throw new ReportInputError(
      `the events belong to ${claimSims.size} simulations (${[...claimSims].sort().join(", ")}); the report covers one`,
    );
  const simulationId = simIds[0] ?? [...claimSims][0];

  const { value: start, problem: startProblem } = parseBoundary(
    "SIMULATION_START",
    startEvents[startEvents.length - 1],
  );
  const { value: end, problem: endProblem } = parseBoundary("SIMULATION_END", endEvents[endEvents.length - 1]);

  const traces = new Map<string, ClaimTrace>();
  for (const e of sorted) {
    if (e.event_type === "SIMULATION_START" || e.event_type === "SIMULATION_END") continue;
    if (e.event_type === "PERSONAL_DATA_ERASED") continue;
    const sim = auditSimulationId(e);
    if (simulationId !== undefined && sim !== undefined && sim !== simulationId) continue;
    const claimId = auditClaimId(e) ?? (e.dfid.startsWith("dfid_") ? e.dfid.slice(5) : e.dfid);
    let t = traces.get(claimId);
    if (!t) {
      t = emptyTrace(claimId, e.dfid);
      traces.set(claimId, t);
    }
    applyEvent(t, e);
  }

  // Scenarios: SIMULATION_START lists them with expectations; SIMULATION_END ties each to its claim.
  const scenarios: ScenarioInfo[] = (start?.scenarios ?? []).map((s) => ({
    id: s.id,
    label: s.label,
    expected: { verdict: s.expected.verdict, reasonCode: s.expected.reason_code },
    race: s.race,
  }));
  const results: ScenarioResult[] = end?.results ?? [];
  for (const r of results) {
    if (!scenarios.some((s) => s.id === r.id))
      scenarios.push({
        id: r.id,
        label: r.label,
        expected: { verdict: r.expected, reasonCode: r.expected_reason_code ?? undefined },
        race: r.race,
      });
  }
  const claimed = new Set<string>();
  for (const r of results) {
    const t = traces.get(r.claim_id);
    const s = scenarios.find((x) => x.id === r.id);
    if (t) t.batchMs = r.duration_ms;
    if (t && s && !claimed.has(s.id)) {
      t.scenario = s;
      claimed.add(s.id);
    }
  }
  // Without SIMULATION_END (a run cut short), match claims to scenarios by the label they were submitted with.
  for (const t of traces.values()) {
    if (t.scenario || t.label === undefined) continue;
    const s = scenarios.find((x) => !claimed.has(x.id) && (x.label === t.label || x.id === t.label));
    if (s) {
      t.scenario = s;
      claimed.add(s.id);
    }
  }

  const claims = [...traces.values()];
  for (const s of scenarios) {
    if (claimed.has(s.id)) continue;
    const t = emptyTrace("", "");
    t.scenario = s;
    t.label = s.label;
    t.outcome = "NOT_RUN";
    claims.push(t);
  }
  claims.forEach(finish);
  matchRaceGroups(claims, scenarios);

  const counts: Record<Outcome, number> = {
    ACCEPT: 0,
    ESCALATE: 0,
    REJECT: 0,
    NEEDS_REVIEW: 0,
    PENDING: 0,
    NOT_RUN: 0,
  };
  for (const t of claims) counts[t.outcome]++;
  const byRole = new Map<string, Usage>();
  let totalUsage = NO_USAGE;
  const models = new Set<string>();
  for (const t of claims) {
    for (const c of t.llmCalls) {
      if (c.model) models.add(c.model);
      const u = c.usage ?? { ...NO_USAGE, calls: 1 };
      byRole.set(c.role, addUsage(byRole.get(c.role) ?? NO_USAGE, u));
      totalUsage = addUsage(totalUsage, u);
    }
  }
  const executed = claims.filter((t) => t.execution);
  for (const t of claims) {
    const child = t.reviewDecision?.resubmittedClaimId;
    const corrected = child === undefined ? undefined : traces.get(child);
    if (corrected) corrected.parentClaimId = t.claimId;
  }
  return {
    simulationId,
    start,
    startProblem,
    end,
    endProblem,
    claims,
    counts,
    matched: claims.filter((t) => t.matches === true).length,
    withExpectation: claims.filter((t) => t.matches !== undefined).length,
    models: [...models].sort(),
    usageByRole: [...byRole.entries()].sort(([a], [b]) => compareRoles(a, b)).map(([role, usage]) => ({ role, usage })),
    totalUsage,
    refunds: {
      count: executed.length,
      totalEur: sumEur(executed.filter((t) => t.currency === "EUR").map((t) => t.execution?.amountEur)),
      totals: totalsByCurrency(executed, (t) => t.execution?.amountEur),
    },
    money: moneyByOutcome(claims),
    reviews: {
      requested: claims.filter((t) => t.reviewRequest).length,
      decided: claims.filter((t) => t.reviewDecision).length,
    },
    eventCount: events.length,
  };
}
