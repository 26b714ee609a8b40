// Policy backtest: every recorded claim the kernel decided is decided again under a candidate policy
// (its contract, claims bounds and responsibility contract), on the recorded proposal, claim, order facts
// and times, in decision order, with a refund ledger simulated from the candidate's own decisions — so a
// tighter limit also changes what later claims on the same order see. Each history (a recorded batch run,
// or the served claims) runs on a ledger of its own. A claim a person decided keeps the person's decision
// (and its course on the ledger); it is reported apart, with whether the candidate would have sent it to a
// person at all. Pure: no model, no order API, no store; the same history and policy give the same report.
import type { Sha256Hex } from "../crew/hash.ts";
import type { ClaimsContract, ResponsibilityContract } from "../integrity/contracts.ts";
import type { AuditEvent } from "../integrity/audit.ts";
import { KernelInputError } from "../integrity/errors.ts";
import {
  clearReviewPending,
  emptyLedgerEntry,
  markReviewPending,
  reserveRefund,
  type LedgerEntry,
} from "../integrity/ledger.ts";
import { centsToEur, MAX_CENTS, parseCents } from "../integrity/money.ts";
import type { RegistryView } from "../integrity/registry.ts";
import type { VerdictCheck, VerdictKind } from "../integrity/verdict.ts";
import {
  recordedTimeline,
  shownVerdict,
  type RecordedDecision,
  type RecordedPersonStep,
  type TimelineStep,
} from "./backtest-events.ts";
import { planExecution } from "./execution.ts";
import { decideClaim, type ClaimVerdict } from "./kernel.ts";

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
    simulateHistory(history, { ...input, registry, limitCents: limit.cents }, acc);
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

type SimulationEnv = BacktestInput & { registry: RegistryView; limitCents: number };

/**
 * The simulated refund ledger of one history, by order id, changed only through the ledger's own rules
 * (core/integrity/ledger.ts). Changes whose outcome nothing waits for (a review held or released, a refund
 * entered as recorded) are queued per order and applied, in order, when the order's entry is next read — by the
 * kernel for a later claim on the order, or by a reservation whose answer counts. An order no later step reads
 * (most orders have one claim) is never built: the same entries, the same answers, less work.
 */
class SimulatedLedger {
  readonly #entries = new Map<string, LedgerEntry>();
  readonly #queued = new Map<string, ((entry: LedgerEntry) => LedgerEntry)[]>();
  /** The order's entry with every queued change applied; `undefined` when nothing ever touched the order. */
  get(orderId: string): LedgerEntry | undefined {
    const queued = this.#queued.get(orderId);
    if (queued === undefined) return this.#entries.get(orderId);
    this.#queued.delete(orderId);
    let entry = this.#entries.get(orderId) ?? emptyLedgerEntry(orderId);
    for (const change of queued) entry = change(entry);
    this.#entries.set(orderId, entry);
    return entry;
  }
  /** Queues a change whose outcome nothing waits for; it applies before the order's entry is next read. */
  update(orderId: string, change: (entry: LedgerEntry) => LedgerEntry): void {
    const queued = this.#queued.get(orderId);
    if (queued) queued.push(change);
    else this.#queued.set(orderId, [change]);
  }
  /** Reserves `cents` for the claim (automatic when a limit is given, else a person's approval); the refusal's message when the ledger refuses it. */
  reserve(
    orderId: string,
    claimId: string,
    cents: number,
    orderCents: number,
    limitCents?: number,
  ): string | undefined {
    const result = reserveRefund(
      this.get(orderId) ?? emptyLedgerEntry(orderId),
      claimId,
      cents,
      orderCents,
      limitCents === undefined ? { kind: "approved" } : { kind: "automatic", limitCents },
    );
    if (!result.ok) return result.message;
    this.#entries.set(orderId, result.entry);
    return undefined;
  }
}

function simulateHistory(history: RecordedHistory | ReadHistory, env: SimulationEnv, acc: Accumulator): void {
  const ledger = new SimulatedLedger();
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
  const orderId = facts ? orderIdOf(facts.proposal, facts.claim.order_id) : (recorded?.order_id ?? undefined);
  if (orderId) acc.orderOfClaim.set(step.claimId, orderId);
  if (facts?.order) {
    const cents = parseCents(facts.order.amount);
    if (cents.ok) orderCentsOf.set(step.claimId, cents.cents);
  }
  const inWindow = env.sinceMs === undefined || step.at >= env.sinceMs;
  const agent = facts ? proposalAgent(facts.proposal) : undefined;
  const unreadable =
    step.unreadable ??
    (agent !== undefined && agent !== env.policy.agentId
      ? `proposed by agent ${agent}, and the policy's agent is ${env.policy.agentId}: the policy does not decide its proposals`
      : undefined);
  if (!inWindow || unreadable !== undefined || !facts || !recorded) {
    // Not re-decided: the recorded course enters the ledger as it happened.
    if (inWindow) acc.notEvaluable.push({ claim_id: step.claimId, reason: unreadable ?? "nothing recorded" });
    if (recorded && orderId) applyRecorded(step, recorded.verdict, orderId, ledger);
    return;
  }

  let candidate: ClaimVerdict;
  try {
    candidate = decideClaim({
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
      ...(env.sha256 ? { sha256: env.sha256 } : {}),
    });
  } catch (error) {
    if (!(error instanceof KernelInputError)) throw error;
    acc.notEvaluable.push({
      claim_id: step.claimId,
      reason: `the recorded facts cannot be decided on: ${error.message}`,
    });
    if (orderId) applyRecorded(step, recorded.verdict, orderId, ledger);
    return;
  }

  const person = step.personDecision;
  const flipped =
    person === undefined && (candidate.verdict !== recorded.verdict || candidate.reason_code !== recorded.reason_code);
  // A flip shows the recorded verdict's reason, layer and checks: read now, and a flip without them is not evaluable.
  const shown = flipped ? shownVerdict(step.verdictEvent!) : undefined;
  if (shown && !shown.ok) {
    acc.notEvaluable.push({ claim_id: step.claimId, reason: `the recorded verdict does not parse (${shown.error})` });
    if (orderId) applyRecorded(step, recorded.verdict, orderId, ledger);
    return;
  }

  // The candidate's ACCEPT reserves its refund on the simulated ledger (the kernel saw this very entry).
  let candidateCents = 0;
  if (person === undefined) {
    if (candidate.verdict === "ACCEPT") {
      const [plan] = planExecution(candidate, facts.proposal, step.claimId);
      const orderCents = orderCentsOf.get(step.claimId);
      const refused =
        plan?.type === "refund.reserve" && orderCents !== undefined
          ? ledger.reserve(plan.order_id, step.claimId, plan.amount_cents, orderCents, env.limitCents)
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
      ledger.update(orderId, (e) => markReviewPending(e, step.claimId));
    }
  } else if (orderId) {
    // A person decided: the claim keeps its recorded course (its review holds the order until the decision).
    ledger.update(orderId, (e) => markReviewPending(e, step.claimId));
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

/** A recorded decision that is not re-decided enters the simulated ledger as it happened. */
function applyRecorded(step: RecordedDecision, verdict: VerdictKind, orderId: string, ledger: SimulatedLedger): void {
  if (verdict === "ESCALATE") ledger.update(orderId, (e) => markReviewPending(e, step.claimId));
  const cents = step.refundedCents;
  if (verdict === "ACCEPT" && cents !== undefined)
    // As recorded, not checked again: only the order's balance bounds it (the limit then was the live policy's).
    ledger.update(orderId, (e) => {
      const result = reserveRefund(e, step.claimId, cents, MAX_CENTS, { kind: "automatic", limitCents: MAX_CENTS });
      return result.ok ? result.entry : e;
    });
}

function personStep(
  step: RecordedPersonStep,
  ledger: SimulatedLedger,
  orderCentsOf: Map<string, number>,
  acc: Accumulator,
): void {
  if (step.kind === "review_opened") {
    ledger.update(step.orderId, (e) => markReviewPending(e, step.claimId));
    return;
  }
  const person = acc.awaitingPerson.get(step.claimId);
  acc.awaitingPerson.delete(step.claimId);
  if (person && step.reviewer) person.reviewer = step.reviewer;
  const orderId = step.orderId ?? acc.orderOfClaim.get(step.claimId);
  if (!orderId) return;
  if (step.decision === "APPROVE" && step.approvedCents !== undefined) {
    const refused = ledger.reserve(
      orderId,
      step.claimId,
      step.approvedCents,
      orderCentsOf.get(step.claimId) ?? MAX_CENTS,
    );
    if (refused === undefined) return;
    if (person) person.note = `the approval would have been refused on the simulated ledger: ${refused}`;
    return;
  }
  ledger.update(orderId, (e) => clearReviewPending(e, step.claimId));
}

/** The agent a recorded proposal names, when it names one. */
function proposalAgent(proposal: unknown): string | undefined {
  const agent = (proposal as { agent_id?: unknown } | null)?.agent_id;
  return typeof agent === "string" ? agent : undefined;
}
