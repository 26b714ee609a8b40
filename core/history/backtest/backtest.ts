// Policy backtest: every recorded claim the kernel decided is decided again under a candidate policy
// (its contract, claims bounds and responsibility contract), on the recorded proposal, claim, order facts
// and times, in decision order, with a refund ledger and customer windows simulated from the candidate's own
// decisions — so a tighter limit also changes what later claims on the same order, or of the same customer,
// see. Each history (a recorded batch run, or the served claims) runs on a ledger and windows of its own. A
// claim a person decided keeps the person's decision (and its course on the ledger); it is reported apart,
// with whether the candidate would have sent it to a person at all. Pure: no model, no order API, no store;
// the same history and policy give the same report.
import { KernelInputError } from "../../integrity/errors.ts";
import { customerLimitsCents, type CustomerLimitsCents } from "../../kernel/customer-window.ts";
import { MAX_CENTS, parseCents } from "../../kernel/money.ts";
import type { RegistryView } from "../../integrity/registry.ts";
import { trustingLedger, validatingLedger } from "./ledger.ts";
import { recordedTimeline } from "./timeline.ts";
import { IGNORED_SHADOW_NOTE } from "./types.ts";
import type { BacktestInput, BacktestReport, ReadHistory, RecordedHistory } from "./types.ts";
import { newAccumulator, totalsOf, type Accumulator } from "./tally.ts";
import { outcomeFigures } from "./outcomes.ts";
import { decisionStep, type SimulationEnv } from "./decision.ts";
import { personStep } from "./person.ts";
import { paidBeforeReturnOf } from "./returns.ts";
import { policyChanges, recordedPolicy } from "./policy-diff.ts";

/** Reads each history's audit into its timeline (the part of a backtest that does not depend on the policy). */
export function readHistories(histories: readonly RecordedHistory[]): ReadHistory[] {
  return histories.map((h) => {
    const recorded = recordedPolicy(h.events);
    return { id: h.id, timeline: recordedTimeline(h.events), ...(recorded ? { recorded } : {}) };
  });
}

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
  // The policy the last recorded decision was taken under, from the last history that records one.
  const recorded = input.histories
    .map((h) => ("events" in h ? recordedPolicy(h.events) : h.recorded))
    .findLast((p) => p !== undefined);
  const candidate = {
    contract: policy.contract,
    escalate_on_uncertainty: policy.responsibility.escalate_on_uncertainty,
  };
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
    outcomes: outcomeFigures(acc.outcomes),
    histories,
    paid_before_return: {
      before: paidBeforeReturnOf(acc.paidBeforeReturn.before),
      after: paidBeforeReturnOf(acc.paidBeforeReturn.after),
    },
    policy: {
      agent_id: policy.agentId,
      contract: policy.contract,
      escalate_on_uncertainty: policy.responsibility.escalate_on_uncertainty,
      ...(recorded ? { changes: policyChanges(recorded, candidate) } : {}),
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

/** One history in decision order, on a ledger and customer windows of its own, up to `untilMs`. */
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
