// Policy backtest: every recorded claim the kernel decided is decided again under a candidate policy
// (its contract, claims bounds and responsibility contract), on the recorded proposal, claim, order facts
// and times, in decision order, with a refund ledger and customer windows simulated from the candidate's own
// decisions — so a tighter limit also changes what later claims on the same order, or of the same customer,
// see. Each history (a recorded batch run, or the served claims) runs on a ledger and windows of its own. A
// claim a person decided keeps the person's decision (and its course on the ledger); it is reported apart,
// with whether the candidate would have sent it to a person at all. Pure: no model, no order API, no store;
// the same history and policy give the same report.
import type { Sha256Hex } from "../crew/hash.ts";
import type { ClaimsContract, ResponsibilityContract } from "../integrity/contracts.ts";
import type { AuditEvent } from "../integrity/audit.ts";
import { KernelInputError } from "../integrity/errors.ts";
import { customerLimitsCents, type CustomerLimitsCents } from "../kernel/customer-window.ts";
import type { ReserveMode } from "../kernel/ledger.ts";
import { centsToEur, MAX_CENTS, parseCents } from "../kernel/money.ts";
import type { RegistryView } from "../integrity/registry.ts";
import type { VerdictCheck, VerdictKind } from "../integrity/verdict.ts";
import { trustingLedger, validatingLedger, type SimulatedLedger } from "./backtest-ledger.ts";
import {
  recordedTimeline,
  shownVerdict,
  type RecordedDecision,
  type RecordedKernelFacts,
  type RecordedPersonStep,
  type TimelineStep,
} from "./backtest-events.ts";
import { planExecution } from "../kernel/execution.ts";
import { decideClaim, triageClaim, type ClaimVerdict } from "../kernel/kernel.ts";

/** The policy under test: the agent's responsibility contract and its claims bounds, as a config file gives them. */
export type CandidatePolicy = {
  agentId: string;
  version: string;
  responsibility: ResponsibilityContract;
  contract: ClaimsContract;
  /** The file's own `shadow_policy`, when it has one: not decided (a backtest decides one candidate), only named. */
  shadow?: { agentId: string; version: string };
};

/** Why a candidate file's own `shadow_policy` is left out, as the output says it. */
export const IGNORED_SHADOW_NOTE =
  "ignored: a backtest decides one candidate policy; to backtest the shadow policy, put it in a policy file of its own";

/** One recorded history, simulated on a ledger of its own: a batch run (by simulation id) or the served claims. */
export type RecordedHistory = { id: string; events: readonly AuditEvent[] };

/** A history read once into its timeline: backtesting several policies on it reads the audit only once. */
export type ReadHistory = { id: string; timeline: readonly TimelineStep[] };

/** Reads each history's audit into its timeline (the part of a backtest that does not depend on the policy). */
export function readHistories(histories: readonly RecordedHistory[]): ReadHistory[] {
  return histories.map((h) => ({ id: h.id, timeline: recordedTimeline(h.events) }));
}

/** What to backtest and how. */
export type BacktestInput = {
  /** The recorded histories, as audit events or already read. */
  histories: readonly (RecordedHistory | ReadHistory)[];
  policy: CandidatePolicy;
  /** Only decisions taken at or after this instant (ms) are re-decided; earlier ones enter the ledger as recorded. */
  sinceMs?: number;
  /** Decisions after this instant (ms) are left out, with everything that followed them. */
  untilMs?: number;
  /** The SHA-256 the kernel checks idempotency keys with (the shell injects node:crypto's). */
  sha256?: Sha256Hex;
  /** Called after every `PROGRESS_EVERY` re-decided claims with how many were re-decided so far. */
  onProgress?: (decided: number) => void;
  /**
   * `"validating"`: simulate on production's validating ledger functions instead of the trusting ledger (the same
   * report, slower: the reference the trusting ledger is checked and measured against).
   */
  ledger?: "trusting" | "validating";
};

/** How many re-decided claims `onProgress` is called after. */
export const PROGRESS_EVERY = 10_000;

/** A verdict and its reason code. */
export type Outcome = { verdict: VerdictKind; reason_code: string };

/** Totals over the evaluated claims: refunded without a person, and reviews by reason code. */
export type BacktestTotals = { auto_refunded_eur: number; reviews: number; by_reason: Record<string, number> };

/** One side of a flip, with what the drill-down shows: the human reason and the checks each layer ran. */
export type DecidedSide = Outcome & { reason: string; layer: number; checks: VerdictCheck[] };

/** A flipped claim with the facts the report shows beside it. */
export type FlipDetail = {
  claim_id: string;
  history: string;
  order_id: string | null;
  amount_eur: number | null;
  decided_at: string;
  from: DecidedSide;
  to: DecidedSide;
};

/** A claim a person decided: the decision stays; would the candidate have sent the claim to a person? */
export type PersonDecision = {
  claim_id: string;
  history: string;
  decision: string;
  reviewer?: string;
  recorded: Outcome;
  candidate: Outcome;
  candidate_sends_to_person: boolean;
  /** Set when the person's approval no longer fits the simulated ledger (it would have been refused then). */
  note?: string;
};

/** The backtest's result: the JSON `claims backtest --json` prints, plus what the human output and the HTML report use. */
export type BacktestReport = {
  evaluated: number;
  not_evaluable: { claim_id: string; reason: string }[];
  flips: { claim_id: string; from: Outcome; to: Outcome }[];
  totals: { before: BacktestTotals; after: BacktestTotals };
  /** Verdict counts over the evaluated claims, before and after. */
  verdicts: { before: Record<VerdictKind, number>; after: Record<VerdictKind, number> };
  flip_details: FlipDetail[];
  human_decisions: PersonDecision[];
  histories: { id: string; evaluated: number; flips: number }[];
  policy: {
    agent_id: string;
    contract: ClaimsContract;
    escalate_on_uncertainty: number;
    /** The candidate file's own shadow policy, left out (`IGNORED_SHADOW_NOTE`). */
    ignored_shadow_policy?: { agent_id: string; version: string; note: string };
  };
};

/** Re-decides every recorded kernel decision of `input.histories` under `input.policy` (see the file comment). */
export function backtest(input: BacktestInput): BacktestReport {
  const { policy } = input;
  const limit = parseCents(policy.contract.max_refund_without_escalation);
  if (!limit.ok || limit.cents <= 0)
    throw new KernelInputError("candidate policy: max_refund_without_escalation must be a positive amount");
  let customerLimits: CustomerLimitsCents | undefined;
  try {
    const limits = policy.contract.customer_limits;
    customerLimits = limits ? customerLimitsCents(limits) : undefined;
  } catch (cause) {
    throw new KernelInputError(`candidate policy: ${(cause as Error).message}`, { cause });
  }
  const registry: RegistryView = {
    agents: {
      [policy.agentId]: {
        agent_id: policy.agentId,
        version: policy.version,
        contract: policy.responsibility,
        status: "ACTIVE",
      },
    },
  };
  const acc = newAccumulator();
  const histories: BacktestReport["histories"] = [];
  for (const history of input.histories) {
    const before = { evaluated: acc.evaluated, flips: acc.flips.length };
    simulateHistory(
      history,
      {
        ...input,
        registry,
        automatic: { kind: "automatic", limitCents: limit.cents },
        customerLimits,
        recordedLimits: customerLimits && {
          ...customerLimits,
          maxRefunds: Number.MAX_SAFE_INTEGER,
          maxCents: MAX_CENTS,
        },
      },
      acc,
    );
    histories.push({
      id: history.id,
      evaluated: acc.evaluated - before.evaluated,
      flips: acc.flips.length - before.flips,
    });
  }
  return {
    evaluated: acc.evaluated,
    not_evaluable: acc.notEvaluable,
    flips: acc.flips.map(({ claim_id, from, to }) => ({
      claim_id,
      from: { verdict: from.verdict, reason_code: from.reason_code },
      to: { verdict: to.verdict, reason_code: to.reason_code },
    })),
    totals: { before: totalsOf(acc.before), after: totalsOf(acc.after) },
    verdicts: { before: acc.before.verdicts, after: acc.after.verdicts },
    flip_details: acc.flips,
    human_decisions: acc.people,
    histories,
    policy: {
      agent_id: policy.agentId,
      contract: policy.contract,
      escalate_on_uncertainty: policy.responsibility.escalate_on_uncertainty,
      ...(policy.shadow
        ? {
            ignored_shadow_policy: {
              agent_id: policy.shadow.agentId,
              version: policy.shadow.version,
              note: IGNORED_SHADOW_NOTE,
            },
          }
        : {}),
    },
  };
}

type Side = {
  autoCents: number;
  reviews: number;
  byReason: Record<string, number>;
  verdicts: Record<VerdictKind, number>;
};
type Accumulator = {
  evaluated: number;
  notEvaluable: BacktestReport["not_evaluable"];
  flips: FlipDetail[];
  people: PersonDecision[];
  /** The person decisions of the history being simulated, by claim id, awaiting the person's step. */
  awaitingPerson: Map<string, PersonDecision>;
  /** The cents each escalated claim proposed: an approval of less binds the order. */
  proposedCents: Map<string, number>;
  /** The order each decided claim of the history being simulated holds a review or refund on. */
  orderOfClaim: Map<string, string>;
  before: Side;
  after: Side;
};

const newSide = (): Side => ({
  autoCents: 0,
  reviews: 0,
  byReason: {},
  verdicts: { ACCEPT: 0, ESCALATE: 0, REJECT: 0 },
});
const newAccumulator = (): Accumulator => ({
  evaluated: 0,
  notEvaluable: [],
  flips: [],
  people: [],
  awaitingPerson: new Map(),
  proposedCents: new Map(),
  orderOfClaim: new Map(),
  before: newSide(),
  after: newSide(),
});

function count(side: Side, verdict: VerdictKind, reasonCode: string, refundedCents: number): void {
  side.verdicts[verdict]++;
  side.autoCents += refundedCents;
  if (verdict === "ESCALATE") {
    side.reviews++;
    side.byReason[reasonCode] = (side.byReason[reasonCode] ?? 0) + 1;
  }
}

function totalsOf(side: Side): BacktestTotals {
  const byReason = Object.fromEntries(Object.entries(side.byReason).sort(([a], [b]) => (a < b ? -1 : 1)));
  return { auto_refunded_eur: centsToEur(side.autoCents), reviews: side.reviews, by_reason: byReason };
}

type SimulationEnv = BacktestInput & {
  registry: RegistryView;
  /** How the candidate's ACCEPT reserves: automatically, within its limit. */
  automatic: ReserveMode;
  /** The candidate's customer limits, when it has them: the customers' windows are simulated then. */
  customerLimits: CustomerLimitsCents | undefined;
  /** The same window without a limit: a refund entered as recorded is not checked again. */
  recordedLimits: CustomerLimitsCents | undefined;
};

const APPROVED: ReserveMode = { kind: "approved" };
/** A refund entered as recorded: only the order's balance and the ledger's holds bound it, not a limit. */
const AS_RECORDED: ReserveMode = { kind: "automatic", limitCents: MAX_CENTS };

function simulateHistory(history: RecordedHistory | ReadHistory, env: SimulationEnv, acc: Accumulator): void {
  const ledger = env.ledger === "validating" ? validatingLedger() : trustingLedger();
  acc.awaitingPerson.clear();
  acc.orderOfClaim.clear();
  /** Outcome and order of each claim decided in this history (for the people's steps that follow). */
  const orderCentsOf = new Map<string, number>();
  const timeline = "timeline" in history ? history.timeline : recordedTimeline(history.events);
  for (const step of timeline) {
    if (env.untilMs !== undefined && step.at > env.untilMs) break;
    if (step.kind === "decision") decisionStep(step, history.id, env, ledger, orderCentsOf, acc);
    else personStep(step, ledger, orderCentsOf, acc);
  }
}

/** The order id a verdict's review or refund lands on: the proposal's, else the claim's. */
function orderIdOf(proposal: unknown, fallback: string | undefined): string | undefined {
  const params = (proposal as { params?: { order_id?: unknown } } | null)?.params;
  return typeof params?.order_id === "string" && params.order_id !== "" ? params.order_id : fallback;
}

function decisionStep(
  step: RecordedDecision,
  history: string,
  env: SimulationEnv,
  ledger: SimulatedLedger,
  orderCentsOf: Map<string, number>,
  acc: Accumulator,
): void {
  const { facts, verdict: recorded } = step;
  // The customer whose window binds the claim: the order's (authoritative), when the candidate has customer limits.
  const customerId = env.customerLimits ? facts?.order?.customer_id : undefined;
  const orderId = facts ? orderIdOf(facts.proposal, facts.claim.order_id) : (recorded?.order_id ?? undefined);
  const parsedOrderCents = facts?.order ? parseCents(facts.order.amount) : undefined;
  const orderCents = parsedOrderCents?.ok ? parsedOrderCents.cents : undefined;
  // Kept for the person's later step on the claim only (most claims have none).
  if (step.personDecision !== undefined) {
    if (orderId) acc.orderOfClaim.set(step.claimId, orderId);
    if (orderCents !== undefined) orderCentsOf.set(step.claimId, orderCents);
  }
  const inWindow = env.sinceMs === undefined || step.at >= env.sinceMs;
  const agent = facts ? (facts.triaged?.agentId ?? proposalAgent(facts.proposal)) : undefined;
  const unreadable =
    step.unreadable ??
    (agent !== undefined && agent !== env.policy.agentId
      ? `proposed by agent ${agent}, and the policy's agent is ${env.policy.agentId}: the policy does not decide its proposals`
      : undefined);
  if (!inWindow || unreadable !== undefined || !facts || !recorded) {
    // Not re-decided: the recorded course enters the ledger as it happened.
    if (inWindow) acc.notEvaluable.push({ claim_id: step.claimId, reason: unreadable ?? "nothing recorded" });
    if (recorded && orderId) applyRecorded(step, recorded.verdict, orderId, ledger, env);
    return;
  }

  let candidate: ClaimVerdict;
  try {
    const triage = facts.triaged ? triageUnder(facts, env, ledger) : undefined;
    if (facts.triaged && !triage) {
      // The live policy's triage decided it; the candidate's lets it through to the crew, which a backtest never runs.
      acc.notEvaluable.push({
        claim_id: step.claimId,
        reason:
          "triaged under the recorded policy; the candidate's triage sends it to the crew, whose proposal a backtest cannot make",
      });
      if (orderId) applyRecorded(step, recorded.verdict, orderId, ledger, env);
      return;
    }
    candidate =
      triage ??
      decideClaim({
        proposal: facts.proposal,
        claim: facts.claim,
        contract: env.policy.contract,
        responsibility: env.policy.responsibility,
        registry: env.registry,
        order: facts.order ?? undefined,
        ledgerEntry: facts.order ? ledger.get(facts.order.order_id) : undefined,
        receivedAt: facts.receivedAt,
        decidedAt: facts.decidedAt,
        claimId: facts.claimId,
        dfid: facts.dfid,
        // The customer's window simulated from the candidate's own refunds, not the one the live kernel saw.
        customerWindow: customerId === undefined ? undefined : ledger.window(customerId),
        parentClaimId: facts.parentClaimId,
        sha256: env.sha256,
      });
  } catch (error) {
    if (!(error instanceof KernelInputError)) throw error;
    acc.notEvaluable.push({
      claim_id: step.claimId,
      reason: `the recorded facts cannot be decided on: ${error.message}`,
    });
    if (orderId) applyRecorded(step, recorded.verdict, orderId, ledger, env);
    return;
  }

  const person = step.personDecision;
  const flipped =
    person === undefined && (candidate.verdict !== recorded.verdict || candidate.reason_code !== recorded.reason_code);
  // A flip shows the recorded verdict's reason, layer and checks: read now, and a flip without them is not evaluable.
  const shown = flipped ? shownVerdict(step.verdictEvent!) : undefined;
  if (shown && !shown.ok) {
    acc.notEvaluable.push({ claim_id: step.claimId, reason: `the recorded verdict does not parse (${shown.error})` });
    if (orderId) applyRecorded(step, recorded.verdict, orderId, ledger, env);
    return;
  }

  // The candidate's ACCEPT reserves its refund on the simulated ledger (the kernel saw this very entry).
  let candidateCents = 0;
  if (person === undefined) {
    if (candidate.verdict === "ACCEPT") {
      const [plan] = planExecution(candidate, facts.proposal, step.claimId);
      const refused =
        plan?.type === "refund.reserve" && orderCents !== undefined
          ? reserveAutomatic(plan, orderCents, customerId, facts.decidedAt, step.claimId, env, ledger)
          : "the ACCEPT plans no refund";
      if (refused !== undefined) {
        acc.notEvaluable.push({
          claim_id: step.claimId,
          reason: `the candidate's ACCEPT does not fit the simulated ledger: ${refused}`,
        });
        return;
      }
      candidateCents = plan?.type === "refund.reserve" ? plan.amount_cents : 0;
    } else if (candidate.verdict === "ESCALATE" && orderId) {
      // Nobody decided the review the candidate opens: it stays pending for the rest of the history.
      ledger.markReviewPending(orderId, step.claimId);
    }
  } else if (orderId) {
    // A person decided: the claim keeps its recorded course (its review holds the order until the decision).
    ledger.markReviewPending(orderId, step.claimId);
  }

  acc.evaluated++;
  if (env.onProgress && acc.evaluated % PROGRESS_EVERY === 0) env.onProgress(acc.evaluated);
  const recordedCents = recorded.verdict === "ACCEPT" ? (step.refundedCents ?? 0) : 0;
  count(acc.before, recorded.verdict, recorded.reason_code, recordedCents);
  count(acc.after, candidate.verdict, candidate.reason_code, candidateCents);
  if (person !== undefined) {
    const decided: PersonDecision = {
      claim_id: step.claimId,
      history,
      decision: person,
      recorded: { verdict: recorded.verdict, reason_code: recorded.reason_code },
      candidate: { verdict: candidate.verdict, reason_code: candidate.reason_code },
      candidate_sends_to_person: candidate.verdict === "ESCALATE",
    };
    acc.people.push(decided);
    acc.awaitingPerson.set(step.claimId, decided);
    const proposed = parseCents(recorded.amount_eur);
    if (proposed.ok) acc.proposedCents.set(step.claimId, proposed.cents);
    return;
  }
  if (shown?.ok) {
    acc.flips.push({
      claim_id: step.claimId,
      history,
      order_id: recorded.order_id,
      amount_eur: recorded.amount_eur,
      decided_at: recorded.decided_at,
      from: {
        verdict: recorded.verdict,
        reason_code: recorded.reason_code,
        reason: shown.shown.reason,
        layer: shown.shown.layer,
        checks: shown.shown.checks,
      },
      to: {
        verdict: candidate.verdict,
        reason_code: candidate.reason_code,
        reason: candidate.reason,
        layer: candidate.layer,
        checks: candidate.checks,
      },
    });
  }
}

/** The candidate's triage of a claim triage decided (docs/kernel.md), on the simulated ledger. */
function triageUnder(
  facts: RecordedKernelFacts,
  env: SimulationEnv,
  ledger: SimulatedLedger,
): ClaimVerdict | undefined {
  return triageClaim({
    claim: facts.claim,
    contract: env.policy.contract,
    responsibility: env.policy.responsibility,
    order: facts.order ?? undefined,
    ledgerEntry: facts.order ? ledger.get(facts.order.order_id) : undefined,
    receivedAt: facts.receivedAt,
    decidedAt: facts.decidedAt,
    claimId: facts.claimId,
  });
}

/**
 * The candidate's automatic refund, reserved as the live kernel reserves it: on the customer's window first (under
 * customer limits, when the order has a customer), then on the order's ledger, the window's reservation released
 * when the ledger refuses. The refusal's message, or `undefined` when both hold it.
 */
function reserveAutomatic(
  plan: { order_id: string; amount_cents: number },
  orderCents: number,
  customerId: string | undefined,
  decidedAt: string,
  claimId: string,
  env: SimulationEnv,
  ledger: SimulatedLedger,
): string | undefined {
  if (customerId !== undefined) {
    const reservation = { claim_id: claimId, order_id: plan.order_id, cents: plan.amount_cents, at: decidedAt };
    const refused = ledger.reserveOnWindow(customerId, reservation, env.customerLimits!);
    if (refused !== undefined) return refused;
  }
  const refused = ledger.reserve(plan.order_id, claimId, plan.amount_cents, orderCents, env.automatic);
  if (refused !== undefined && customerId !== undefined) ledger.releaseFromWindow(customerId, claimId);
  return refused;
}

/**
 * A recorded decision that is not re-decided enters the simulated state as it happened: its review holds the order,
 * its automatic refund is on the order's ledger and (under customer limits) on the order's customer's window.
 */
function applyRecorded(
  step: RecordedDecision,
  verdict: VerdictKind,
  orderId: string,
  ledger: SimulatedLedger,
  env: SimulationEnv,
): void {
  if (verdict === "ESCALATE") ledger.markReviewPending(orderId, step.claimId);
  const cents = step.refundedCents;
  if (verdict !== "ACCEPT" || cents === undefined) return;
  // As recorded, not checked again: only the order's balance bounds it (the limit then was the live policy's).
  const refused = ledger.reserve(orderId, step.claimId, cents, MAX_CENTS, AS_RECORDED);
  const customerId = env.recordedLimits ? step.facts?.order?.customer_id : undefined;
  if (refused === undefined && customerId !== undefined && step.facts)
    ledger.reserveOnWindow(
      customerId,
      { claim_id: step.claimId, order_id: orderId, cents, at: step.facts.decidedAt },
      env.recordedLimits!,
    );
}

function personStep(
  step: RecordedPersonStep,
  ledger: SimulatedLedger,
  orderCentsOf: Map<string, number>,
  acc: Accumulator,
): void {
  if (step.kind === "review_opened") {
    ledger.markReviewPending(step.orderId, step.claimId);
    return;
  }
  const person = acc.awaitingPerson.get(step.claimId);
  acc.awaitingPerson.delete(step.claimId);
  if (person && step.reviewer) person.reviewer = step.reviewer;
  const orderId = step.orderId ?? acc.orderOfClaim.get(step.claimId);
  if (!orderId) return;
  if (step.decision === "APPROVE" && step.approvedCents !== undefined) {
    // A person's approval: not an automatic refund, so never on the customer's window (as live).
    const refused = ledger.reserve(
      orderId,
      step.claimId,
      step.approvedCents,
      orderCentsOf.get(step.claimId) ?? MAX_CENTS,
      APPROVED,
    );
    if (refused === undefined) {
      // An approval of less than proposed binds the order (as the real ledger records it).
      const proposed = acc.proposedCents.get(step.claimId);
      if (proposed !== undefined && step.approvedCents < proposed)
        ledger.clearReviewPending(orderId, step.claimId, {
          claim_id: step.claimId,
          decision: "APPROVE",
          approved_cents: step.approvedCents,
          proposed_cents: proposed,
        });
      return;
    }
    if (person) person.note = `the approval would have been refused on the simulated ledger: ${refused}`;
    return;
  }
  // A person's DENY binds the order (the simulated ledger records it as the real one does).
  ledger.clearReviewPending(
    orderId,
    step.claimId,
    step.decision === "DENY" ? { claim_id: step.claimId, decision: "DENY" } : undefined,
  );
}

/** The agent a recorded proposal names, when it names one. */
function proposalAgent(proposal: unknown): string | undefined {
  const agent = (proposal as { agent_id?: unknown } | null)?.agent_id;
  return typeof agent === "string" ? agent : undefined;
}
