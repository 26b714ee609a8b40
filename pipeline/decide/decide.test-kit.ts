// Fixtures of the deciders' tests: the bundled policy's agent and orders, a registry that accepts the agent,
// and claim records as the shells load them. No ports: the deciders take plain values.
import { refundReviewId } from "../../core/kernel/settlement.ts";
import type { SettlementRecord } from "../../core/kernel/settlement.ts";
import { readFileSync } from "node:fs";
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import { parseConfig } from "../../core/claim/config.ts";
import type { AuditEvent, Order } from "../../core/integrity/index.ts";
import { createAgentRegistry } from "../../core/integrity/registry.ts";
import { DEFAULT_PIPELINE_SETTINGS } from "../deps.ts";
import type { Effect } from "../effects.ts";
import type { Observation, Request } from "./requests.ts";
import type { Next, Step } from "./step.ts";

export const NOW = Date.parse("2026-06-01T12:00:00Z");
export const config = parseConfig(
  readFileSync(new URL("../../scenarios/config.yaml", import.meta.url), "utf8"),
  "config.yaml",
  NOW,
);

const registry = createAgentRegistry({ acceptedMajor: 1 });
registry.handshake({
  agent_id: config.agent.agentId,
  version: config.agent.version,
  contract: config.agent.responsibility,
});

/** What the deciders read beyond the claim: the agent, the registry, the settings. */
export const policy = { agent: config.agent, registry, settings: DEFAULT_PIPELINE_SETTINGS };

/** An order of the bundled policy. */
export function order(id: string): Order {
  const found = config.orders.find((o) => o.order_id === id);
  if (!found) throw new Error(`no ${id} in the bundled policy`);
  return found;
}

/** A structured claim as stored, RUNNING unless told otherwise. */
export function claimRecord(
  claim: { order_id: string; amount_eur: number; category: string; reason: string },
  overrides: Partial<ClaimRecord> = {},
): ClaimRecord {
  const iso = new Date(NOW - 60_000).toISOString();
  return {
    claim_id: "clm_1",
    dfid: "dfid_clm_1",
    root_dfid: "dfid_clm_1",
    status: "RUNNING",
    input: { claim },
    claim,
    received_at: iso,
    updated_at: iso,
    ...overrides,
  };
}

export const ACCEPTABLE = {
  order_id: "ord_001",
  amount_eur: 299.99,
  category: "electronics",
  reason: "Screen is dead on arrival",
};
export const ESCALATED = {
  order_id: "ord_002",
  amount_eur: 1200,
  category: "electronics",
  reason: "Laptop does not boot",
};

/** The effects as `kind` (with the audit event's type, the published events' types): what their order is checked by. */
export function shape(effects: readonly Effect[]): string[] {
  return effects.map((e) => {
    if (e.kind === "audit") return `audit ${e.event.event_type}`;
    if (e.kind === "publish") return `publish ${e.entries.map((x) => x.detailType).join(",")}`;
    if (e.kind === "crew_event") return `crew_event ${e.message.type}`;
    return e.kind;
  });
}

/** The audit events of `effects`, in order. */
export function audits(effects: readonly Effect[]): AuditEvent[] {
  return effects.flatMap((e) => (e.kind === "audit" ? [e.event] : []));
}

/**
 * Walks a decider from its first step to its outcome, answering each request with `answer` (as the shell would
 * from the stores), without ports: the trace is what it asked (`? kind`) and each list of effects it returned.
 */
export function walkDecider<O, S>(
  first: Step<Next<O, S>>,
  decide: (state: S, observed: Observation) => Step<Next<O, S>>,
  answer: (request: Request) => Observation,
): { trace: string[]; outcome: O } {
  const trace: string[] = [];
  let step = first;
  for (;;) {
    if (step.effects.length > 0) trace.push(shape(step.effects).join(" + "));
    const { next } = step;
    if ("done" in next) return { trace, outcome: next.done };
    if ("then" in next) step = next.then;
    else {
      trace.push(`? ${next.awaiting.kind}`);
      const observed = answer(next.awaiting);
      if (observed.kind === "failed" && !next.failureObserved)
        throw new Error(`the decider does not observe a failure of ${next.awaiting.kind}`);
      step = decide(next.state, observed);
    }
  }
}

/**
 * A refund that failed (expired card) with its review PENDING, as the refund-review deciders find it; `overrides`
 * changes the claim's fields (order, amount, provider ref).
 */
export function failedSettlement(at: string, overrides: Partial<SettlementRecord> = {}): SettlementRecord {
  return {
    claim_id: "clm_1",
    dfid: "dfid_clm_1",
    order_id: "ord_001",
    amount_eur: 50,
    verdict_id: "vrd_1",
    provider: "stripe",
    execution_id: "exe_1",
    status: "FAILED",
    failure_reason: "expired_card",
    requested_at: at,
    updated_at: at,
    attempts: [],
    review: {
      review_id: refundReviewId("exe_1"),
      origin: "REFUND_FAILED",
      execution_id: "exe_1",
      status: "PENDING",
      reason_code: "REFUND_FAILED",
      reason: "The payment provider refused the refund: expired_card",
      requested_at: at,
    },
    announced: "FAILED",
    version: 3,
    ...overrides,
  };
}
