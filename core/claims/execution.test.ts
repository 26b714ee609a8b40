import { describe, expect, it } from "vitest";
import { DETAIL_TYPES } from "./bus-events.ts";
import { createInMemoryAuditLog } from "../../pipeline/in-memory.ts";
import { ResponsibilityContractSchema, type Order } from "../integrity/contracts.ts";
import { createAgentRegistry } from "../integrity/registry.ts";
import { KernelInputError } from "../integrity/errors.ts";
import { createInMemoryRefundLedger } from "../../pipeline/in-memory.ts";
import { buildProposal } from "../integrity/proposal.ts";
import {
  buildVerdictRecord, ClaimNeedsReviewDetailSchema, ClaimVerdictDetailSchema, executeDecision, executionIdFor, planExecution, RefundExecutedDetailSchema, verdictIdFor,
} from "./execution.ts";
import { decideClaim, type ClaimVerdict } from "./kernel.ts";

const DECIDED_AT = "2026-03-16T10:02:00.000Z";
const EXECUTED_AT = "2026-03-16T10:02:01.000Z";
const order: Order = { order_id: "ord_001", purchase_date: "2026-03-13T10:00:00Z", category: "electronics", amount: 299.99, currency: "EUR" };
const proposalFor = (dfid: string, amount = 299.99, action: "REFUND" | "ESCALATE" = "REFUND") =>
  buildProposal({ dfid, agentId: "claims_agent_v1", output: { action, order_id: "ord_001", amount_eur: amount, category: "electronics", reason: "dead", confidence: 0.9 }, createdAt: "2026-03-16T10:01:00Z", validForMs: 600_000 });
const accept: ClaimVerdict = { verdict: "ACCEPT", reason_code: "VALIDATION_PASSED", reason: "Validation passed", layer: 12, checks: [] };
const escalate: ClaimVerdict = { verdict: "ESCALATE", reason_code: "AMOUNT_ABOVE_LIMIT", reason: "Amount 1200.0 EUR exceeds max_refund_without_escalation (500.0 EUR). Human approval required.", layer: 11, checks: [] };
const reject: ClaimVerdict = { verdict: "REJECT", reason_code: "SCHEMA_INVALID", reason: "Proposal does not parse: (root): …", layer: 1, checks: [] };

describe("verdict record", () => {
  it("matches the ClaimVerdict detail of SPEC §7.3 and is deterministic", () => {
    const input = { verdict: accept, proposal: proposalFor("d1"), claimId: "c1", dfid: "d1", decidedAt: DECIDED_AT, simulationId: "sim_1" };
    const a = buildVerdictRecord(input);
    expect(Object.keys(a).sort()).toEqual(["amount_eur", "claim_id", "decided_at", "dfid", "idempotency_key", "order_id", "policy_kind", "reason", "reason_code", "simulation_id", "verdict", "verdict_id"]);
    expect(a).toMatchObject({ claim_id: "c1", dfid: "d1", verdict: "ACCEPT", order_id: "ord_001", amount_eur: 299.99, policy_kind: "REFUND", idempotency_key: proposalFor("d1").idempotency_key });
    expect(a.verdict_id).toBe(verdictIdFor(a.idempotency_key));
    expect(buildVerdictRecord(JSON.parse(JSON.stringify(input)))).toEqual(a);
    expect(ClaimVerdictDetailSchema.parse(a)).toEqual(a);
  });
  it("gives another verdict id to another proposal or another flow", () => {
    const id = (p: unknown, dfid = "d1") => buildVerdictRecord({ verdict: accept, proposal: p, claimId: "c1", dfid, decidedAt: DECIDED_AT }).verdict_id;
    expect(new Set([id(proposalFor("d1")), id(proposalFor("d2")), id(proposalFor("d1", 100)), id("junk"), id("junk", "d2")]).size).toBe(5);
  });
  it("a proposal claiming another proposal's key still gets its own verdict id", () => {
    const victim = proposalFor("d1");
    const forged = { ...proposalFor("d1", 1), idempotency_key: victim.idempotency_key };
    const id = (p: unknown) => buildVerdictRecord({ verdict: reject, proposal: p, claimId: "c1", dfid: "d1", decidedAt: DECIDED_AT }).verdict_id;
    expect(id(forged)).not.toBe(id(victim));
  });
  it("records nulls for what an unparseable proposal does not carry", () => {
    const r = buildVerdictRecord({ verdict: reject, proposal: { params: { amount_eur: "12" }, policy_kind: "NUKE" }, claimId: "c1", dfid: "d1", decidedAt: DECIDED_AT });
    expect(r).toMatchObject({ order_id: null, amount_eur: null, policy_kind: null, verdict: "REJECT" });
    expect(r).not.toHaveProperty("simulation_id");
  });
  it("throws KernelInputError for a bad decision time", () => {
    expect(() => buildVerdictRecord({ verdict: accept, proposal: proposalFor("d1"), claimId: "c1", dfid: "d1", decidedAt: "now" })).toThrow(KernelInputError);
  });
});

describe("planExecution", () => {
  it("plans a reservation for ACCEPT, a review for ESCALATE, nothing for REJECT", () => {
    expect(planExecution(accept, proposalFor("d1"), "c1")).toEqual([{ type: "refund.reserve", claim_id: "c1", order_id: "ord_001", amount_cents: 29999, amount_eur: 299.99 }]);
    expect(planExecution(escalate, proposalFor("d1"), "c1")).toEqual([{ type: "review.create", claim_id: "c1", reason_code: "AMOUNT_ABOVE_LIMIT", reason: escalate.reason }]);
    expect(planExecution(reject, "junk", "c1")).toEqual([]);
  });
  it("refuses to plan a refund for an ACCEPT without a valid amount", () => {
    expect(() => planExecution(accept, { params: { order_id: "ord_001", amount_eur: "299.99" } }, "c1")).toThrow(KernelInputError);
  });
});

describe("executeDecision", () => {
  const claim = (id: string) => ({ claim_id: id, dfid: `dfid_${id}`, simulation_id: "sim_1" });

  it("ACCEPT reserves once, publishes ClaimVerdict then RefundExecuted, and audits both", async () => {
    const ledger = createInMemoryRefundLedger();
    const audit = createInMemoryAuditLog();
    const out = await executeDecision({ verdict: accept, proposal: proposalFor("dfid_A"), claim: claim("A"), order, ledger, audit, decidedAt: DECIDED_AT, executedAt: EXECUTED_AT });
    expect(out).toMatchObject({ executed: true, execution: "EXECUTED" });
    expect(out.events.map((e) => e.detailType)).toEqual([DETAIL_TYPES.verdict, DETAIL_TYPES.refund]);
    const refund = RefundExecutedDetailSchema.parse(out.events[1]!.detail);
    expect(refund).toEqual({ execution_id: executionIdFor(out.record.verdict_id), claim_id: "A", dfid: "dfid_A", order_id: "ord_001", amount_eur: 299.99, verdict_id: out.record.verdict_id });
    expect(await ledger.get("ord_001")).toEqual({ order_id: "ord_001", refunded_cents: 29999, claims: { A: 29999 } });
    expect((await audit.bySimulation("sim_1")).map((e) => [e.event_type, e.state])).toEqual([["KERNEL_VERDICT", "DECIDED"], ["CLAIM_REFUND_EXECUTED", "DECIDED"]]);
    expect((await audit.byDfid("dfid_A"))[0]!.details).toMatchObject({ verdict_id: out.record.verdict_id, layer: 12 });
  });

  it("a redelivered ACCEPT reserves nothing more and repeats the same ids", async () => {
    const ledger = createInMemoryRefundLedger();
    const args = { verdict: accept, proposal: proposalFor("dfid_A"), claim: claim("A"), order, ledger, audit: createInMemoryAuditLog(), decidedAt: DECIDED_AT, executedAt: EXECUTED_AT };
    const first = await executeDecision(args);
    const again = await executeDecision(args);
    expect(again).toMatchObject({ executed: true, execution: "ALREADY_EXECUTED" });
    expect(again.record).toEqual(first.record);
    expect(again.events).toEqual(first.events);
    expect((await ledger.get("ord_001"))?.refunded_cents).toBe(29999);
  });

  it("a second claim racing for an already refunded order stays ACCEPT, is not executed, and goes to review", async () => {
    const ledger = createInMemoryRefundLedger();
    const audit = createInMemoryAuditLog();
    await executeDecision({ verdict: accept, proposal: proposalFor("dfid_A"), claim: claim("A"), order, ledger, audit, decidedAt: DECIDED_AT, executedAt: EXECUTED_AT });
    const out = await executeDecision({ verdict: accept, proposal: proposalFor("dfid_E"), claim: claim("E"), order, ledger, audit, decidedAt: DECIDED_AT, executedAt: EXECUTED_AT });
    expect(out).toMatchObject({ executed: false, execution: "REFUSED", record: { verdict: "ACCEPT" }, refusal: { code: "EXCEEDS_ORDER_AMOUNT" } });
    expect(out.events.map((e) => e.detailType)).toEqual([DETAIL_TYPES.verdict, DETAIL_TYPES.review]);
    expect(ClaimNeedsReviewDetailSchema.parse(out.events[1]!.detail)).toMatchObject({ claim_id: "E", reason_code: "EXCEEDS_ORDER_AMOUNT" });
    expect(out.refusal?.reason).toBe("Refund of 299.99 EUR not executed: Refund of 299.99 EUR on order ord_001 exceeds the order amount 299.99 EUR (already refunded 299.99 EUR)");
    expect((await ledger.get("ord_001"))?.refunded_cents).toBe(29999);
    expect((await audit.byDfid("dfid_E")).map((e) => e.event_type)).toEqual(["KERNEL_VERDICT", "CLAIM_REFUND_NOT_EXECUTED", "CLAIM_NEEDS_REVIEW"]);
  });

  it("the same claim with another amount is refused, not treated as a redelivery", async () => {
    const ledger = createInMemoryRefundLedger([{ order_id: "ord_001", refunded_cents: 100, claims: { A: 100 } }]);
    const out = await executeDecision({ verdict: accept, proposal: proposalFor("dfid_A", 200), claim: claim("A"), order, ledger, audit: createInMemoryAuditLog(), decidedAt: DECIDED_AT, executedAt: EXECUTED_AT });
    expect(out).toMatchObject({ executed: false, execution: "REFUSED", refusal: { code: "ALREADY_REFUNDED_FOR_CLAIM" } });
  });

  it.each([["ESCALATE", escalate], ["REJECT", reject]] as const)("%s touches no ledger and publishes only the verdict", async (_name, verdict) => {
    const ledger = createInMemoryRefundLedger();
    const out = await executeDecision({ verdict, proposal: proposalFor("dfid_B", 1200), claim: claim("B"), order, ledger, audit: createInMemoryAuditLog(), decidedAt: DECIDED_AT, executedAt: EXECUTED_AT });
    expect(out).toMatchObject({ executed: false, execution: "NOT_APPLICABLE" });
    expect(out.events.map((e) => e.detailType)).toEqual([DETAIL_TYPES.verdict]);
    expect(await ledger.get("ord_001")).toBeUndefined();
    if (verdict.verdict === "ESCALATE") expect(out.review).toEqual({ claim_id: "B", dfid: "dfid_B", reason_code: "AMOUNT_ABOVE_LIMIT", reason: escalate.reason });
    else expect(out.review).toBeUndefined();
  });

  it("an ACCEPT without its order is a wiring error", async () => {
    await expect(executeDecision({ verdict: accept, proposal: proposalFor("dfid_A"), claim: claim("A"), order: undefined, ledger: createInMemoryRefundLedger(), audit: createInMemoryAuditLog(), decidedAt: DECIDED_AT, executedAt: EXECUTED_AT })).rejects.toThrow(KernelInputError);
  });
});

describe("kernel and execution together", () => {
  const claim = (id: string) => ({ claim_id: id, dfid: `dfid_${id}` });

  it("a second claim on an order the first claim fully refunded is REJECTed by layer 7 before any execution", async () => {
    const responsibility = ResponsibilityContractSchema.parse({ agent_id: "claims_agent_v1", role: "EXECUTOR", allowed_policy_types: ["REFUND", "REPLACE", "ESCALATE"] });
    const registry = createAgentRegistry({ acceptedMajor: 1 });
    registry.handshake({ agent_id: "claims_agent_v1", version: "1.0.0", contract: responsibility });
    const ledger = createInMemoryRefundLedger();
    const audit = createInMemoryAuditLog();
    const run = async (id: string) => {
      const proposal = proposalFor(`dfid_${id}`);
      const verdict = decideClaim({
        proposal, claim: { order_id: "ord_001", amount_eur: 299.99, category: "electronics", reason: "dead" },
        contract: { allowed_refund_categories: ["electronics"], max_refund_without_escalation: 500, return_window_days: 14 },
        responsibility, registry, order, ledgerEntry: await ledger.get("ord_001"),
        receivedAt: "2026-03-16T10:00:00Z", decidedAt: DECIDED_AT, claimId: id, dfid: `dfid_${id}`,
      });
      return executeDecision({ verdict, proposal, claim: claim(id), order, ledger, audit, decidedAt: DECIDED_AT, executedAt: EXECUTED_AT });
    };
    expect(await run("A")).toMatchObject({ record: { verdict: "ACCEPT" }, executed: true });
    expect(await run("E")).toMatchObject({ record: { verdict: "REJECT", reason_code: "EXCEEDS_REFUNDABLE_BALANCE" }, executed: false, execution: "NOT_APPLICABLE" });
    // Replaying A's decision against today's ledger still ACCEPTs (its own reservation does not count) and reserves nothing twice.
    expect(await run("A")).toMatchObject({ record: { verdict: "ACCEPT" }, execution: "ALREADY_EXECUTED" });
    expect(await ledger.get("ord_001")).toEqual({ order_id: "ord_001", refunded_cents: 29999, claims: { A: 29999 } });
  });
});
