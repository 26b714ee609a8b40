// A recorded kernel decision decided again under the candidate: the candidate's triage or kernel on the recorded
// facts and the simulated ledger and windows, its ACCEPT reserved as the live kernel reserves it, counted beside
// the recorded verdict; a decision that cannot be re-decided enters the simulated state as it happened.
import { KernelInputError } from "../../integrity/errors.ts";
import type { CustomerLimitsCents } from "../../kernel/customer-window.ts";
import type { ReserveMode } from "../../kernel/ledger.ts";
import { MAX_CENTS, parseCents } from "../../kernel/money.ts";
import { lineReserveOf } from "../../kernel/claim-lines.ts";
import type { LineReserve } from "../../kernel/ledger.ts";
import type { RegistryView } from "../../integrity/registry.ts";
import type { VerdictKind } from "../../integrity/verdict.ts";
import { planExecution } from "../../kernel/execution.ts";
import { decideClaim, triageClaim, type ClaimVerdict } from "../../kernel/kernel.ts";
import type { SimulatedLedger } from "./ledger.ts";
import type { RecordedKernelFacts } from "./schemas.ts";
import { shownVerdict, type RecordedDecision } from "./timeline.ts";
import { PROGRESS_EVERY, type BacktestInput, type PersonDecision } from "./types.ts";
import { count, type Accumulator } from "./tally.ts";
import { readOrder } from "../../kernel/order-view.ts";
import { currencyPolicy, refundableOf } from "../../kernel/policy.ts";
import { plannedReturn } from "../../kernel/returns.ts";
import { countPaidAtOnce } from "./returns.ts";
import { tallyOutcome } from "./outcomes.ts";

/** What simulating a history needs beyond the input: the candidate's registry, reserve mode and customer limits. */
export type SimulationEnv = BacktestInput & {
  registry: RegistryView;
  /** How the candidate's ACCEPT reserves: automatically, within its limit. */
  automatic: ReserveMode;
  /** The candidate's customer limits, when it has them: the customers' windows are simulated then. */
  customerLimits: CustomerLimitsCents | undefined;
  /** The same window without a limit: a refund entered as recorded is not checked again. */
  recordedLimits: CustomerLimitsCents | undefined;
};

/** A refund entered as recorded: only the order's balance and the ledger's holds bound it, not a limit. */
const AS_RECORDED: ReserveMode = { kind: "automatic", limitCents: MAX_CENTS };

/** The order id a verdict's review or refund lands on: the proposal's, else the claim's. */
function orderIdOf(proposal: unknown, fallback: string | undefined): string | undefined {
  const params = (proposal as { params?: { order_id?: unknown } } | null)?.params;
  return typeof params?.order_id === "string" && params.order_id !== "" ? params.order_id : fallback;
}

/** One recorded kernel decision decided again under the candidate (see the file comment). */
export function decisionStep(
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
  // The order's refundable amount in its minor units (an EUR one-line order: its amount in cents, as always).
  const reading = facts?.order ? readOrder(facts.order) : undefined;
  const orderCents = reading?.ok ? refundableOf(reading.view, env.policy.contract).minor : undefined;
  // Another currency than EUR is reserved in its own minor units under its own bound (no FX), and never counted in
  // the EUR totals; its customers' windows are not simulated (the windows count EUR).
  const currency = reading?.ok ? reading.view.total.currency : "EUR";
  // On an order with lines, the lines a refund of `cents` is reserved on (as the live pipeline reserves it).
  const linesFor = (cents: number) =>
    facts?.order ? lineReserveOf(facts.order, facts.claim, cents, env.policy.contract) : undefined;
  // Kept for the person's later step on the claim only (most claims have none).
  if (step.personDecision !== undefined || step.refundClosed === true) {
    if (orderId) acc.orderOfClaim.set(step.claimId, orderId);
    if (orderCents !== undefined) orderCentsOf.set(step.claimId, orderCents);
    acc.linesOfClaim.set(step.claimId, linesFor);
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
  // What of it the candidate pays at once, with no return asked (before the item is back).
  let candidateAtOnce = 0;
  if (person === undefined) {
    if (candidate.verdict === "ACCEPT") {
      const [planned] = planExecution(candidate, facts.proposal, step.claimId, currency);
      const plan = planned?.type === "refund.reserve" ? planned : undefined;
      const mode = currency === "EUR" ? env.automatic : automaticIn(env, currency);
      const refused =
        plan !== undefined && orderCents !== undefined && mode !== undefined
          ? reserveAutomatic(
              plan,
              orderCents,
              currency === "EUR" ? customerId : undefined,
              facts.decidedAt,
              step.claimId,
              { ...env, automatic: mode },
              ledger,
              linesFor,
            )
          : "the ACCEPT plans no refund";
      if (refused !== undefined) {
        acc.notEvaluable.push({
          claim_id: step.claimId,
          reason: `the candidate's ACCEPT does not fit the simulated ledger: ${refused}`,
        });
        return;
      }
      candidateCents = plan !== undefined ? plan.amount_cents : 0;
      const asksReturn =
        plan !== undefined &&
        facts.order != null &&
        plannedReturn(env.policy.contract, facts.order, facts.claim, plan.amount_cents) !== undefined;
      candidateAtOnce = asksReturn ? 0 : candidateCents;
      // The item's return is a recorded fact (docs/returns.md): under a candidate that asks the item back too, a
      // return never received releases the refund as it did live, so it is no refund on either side.
      if (
        step.returnCourse === "NOT_RECEIVED" &&
        plan !== undefined &&
        orderId !== undefined &&
        facts.order &&
        plannedReturn(env.policy.contract, facts.order, facts.claim, plan.amount_cents) !== undefined
      ) {
        ledger.releaseRefund(orderId, step.claimId);
        candidateCents = 0;
      }
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
  // A refund its return released (never received, or a person decided after a failed inspection) was never paid.
  const released = step.returnCourse === "NOT_RECEIVED" || step.returnCourse === "REVIEW";
  const recordedCents = recorded.verdict === "ACCEPT" && !released ? (step.refundedCents ?? 0) : 0;
  count(acc.before, recorded.verdict, recorded.reason_code, recordedCents, currency);
  count(acc.after, candidate.verdict, candidate.reason_code, candidateCents, currency);
  // Paid at once: recorded, a refund whose ACCEPT asked no return; under the candidate, one its policy asks none for.
  countPaidAtOnce(acc.paidBeforeReturn.before, step.returnCourse === undefined ? recordedCents : 0, currency);
  countPaidAtOnce(acc.paidBeforeReturn.after, candidateAtOnce, currency);
  // What the candidate's ACCEPT gives (docs/backtest.md#outcomes): cash, store credit with its bonus, an exchange.
  if (person === undefined && candidate.verdict === "ACCEPT" && facts.order)
    tallyOutcome(acc.outcomes, env.policy.contract, facts.order, facts.claim, candidateCents, currency);
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

/** The candidate's automatic reserve mode for an order in `currency` (its `currencies` bound); none without one. */
function automaticIn(env: SimulationEnv, currency: string): ReserveMode | undefined {
  const bounds = currencyPolicy(env.policy.contract, currency);
  return bounds ? { kind: "automatic", limitCents: bounds.limit.minor } : undefined;
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
  linesFor: (cents: number) => LineReserve | undefined,
): string | undefined {
  if (customerId !== undefined) {
    const reservation = { claim_id: claimId, order_id: plan.order_id, cents: plan.amount_cents, at: decidedAt };
    const refused = ledger.reserveOnWindow(customerId, reservation, env.customerLimits!);
    if (refused !== undefined) return refused;
  }
  const refused = ledger.reserve(
    plan.order_id,
    claimId,
    plan.amount_cents,
    orderCents,
    env.automatic,
    linesFor(plan.amount_cents),
  );
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
  // As recorded, not checked again: only the order's balance bounds it (the limit then was the live policy's). On an
  // order with lines it counts on its lines as live (no line bounds it either: every line's bound is the maximum).
  const lines = step.facts?.order
    ? lineReserveOf(step.facts.order, step.facts.claim, cents, env.policy.contract)
    : undefined;
  const asRecorded = lines && {
    ...lines,
    paid: Object.fromEntries(Object.keys(lines.paid).map((lineId) => [lineId, MAX_CENTS])),
  };
  const refused = ledger.reserve(orderId, step.claimId, cents, MAX_CENTS, AS_RECORDED, asRecorded);
  const customerId = env.recordedLimits ? step.facts?.order?.customer_id : undefined;
  if (refused === undefined && customerId !== undefined && step.facts)
    ledger.reserveOnWindow(
      customerId,
      { claim_id: step.claimId, order_id: orderId, cents, at: step.facts.decidedAt },
      env.recordedLimits!,
    );
}

/** The agent a recorded proposal names, when it names one. */
function proposalAgent(proposal: unknown): string | undefined {
  const agent = (proposal as { agent_id?: unknown } | null)?.agent_id;
  return typeof agent === "string" ? agent : undefined;
}
