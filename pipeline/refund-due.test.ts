// The refund-due alarm's reading over in-memory ports: the unsettled live refunds near their legal deadline, the
// clock started by the decision's refund or by the return's pay_on event, the days from the claim's return or the
// policy (default 14).
import { describe, expect, it } from "vitest";
import type { ClaimRecord } from "../core/kernel/claim-record.ts";
import type { SettlementRecord } from "../core/kernel/settlement.ts";
import type { ClaimsContract } from "../core/integrity/contracts.ts";
import { returnAudit } from "./decide/returns.ts";
import {
  createInMemoryAuditLog,
  createInMemoryClaimRepository,
  createInMemorySettlementRepository,
} from "./in-memory.ts";
import { refundsDueNow } from "./refund-due.ts";

const DAY = 86_400_000;
const T0 = "2026-06-01T10:00:00.000Z";
const at = (days: number) => Date.parse(T0) + days * DAY;
const iso = (days: number) => new Date(at(days)).toISOString();

function claim(id: string, overrides: Partial<ClaimRecord> = {}): ClaimRecord {
  const c = { order_id: `ord_${id}`, amount_eur: 40, category: "clothing", reason: "" };
  return {
    claim_id: id,
    dfid: `dfid_${id}`,
    root_dfid: `dfid_${id}`,
    status: "DECIDED",
    input: { claim: c },
    claim: c,
    received_at: T0,
    updated_at: T0,
    ...overrides,
  } as ClaimRecord;
}

function settlement(id: string, requestedDay: number, overrides: Partial<SettlementRecord> = {}): SettlementRecord {
  return {
    claim_id: id,
    dfid: `dfid_${id}`,
    order_id: `ord_${id}`,
    amount_eur: 40,
    verdict_id: `vrd_${id}`,
    provider: "stripe",
    execution_id: `exe_${id}`,
    status: "PENDING",
    requested_at: iso(requestedDay),
    updated_at: iso(requestedDay),
    attempts: [],
    version: 1,
    ...overrides,
  };
}

async function ports(contract: Partial<ClaimsContract> = {}) {
  const deps = {
    settlements: createInMemorySettlementRepository(),
    claims: createInMemoryClaimRepository(),
    audit: createInMemoryAuditLog(),
    agent: { contract } as never,
  };
  return deps;
}

describe("refunds due", () => {
  it("names an unsettled refund from refund_due_days − 4 days after it was decided (default 14), never a settled one", async () => {
    const deps = await ports();
    for (const [id, day, status] of [
      ["clm_due", 0, "PENDING"],
      ["clm_failed", -1, "FAILED"],
      ["clm_settled", -20, "SETTLED"],
      ["clm_recent", 0.5, "PENDING"],
    ] as const) {
      await deps.claims.createClaim(claim(id));
      await deps.settlements.create(settlement(id, day, { status }));
    }
    await deps.claims.createClaim(claim("clm_sim"));
    await deps.settlements.create(settlement("clm_sim", -30, { simulation_id: "sim_1" }));
    expect(await refundsDueNow(deps, at(10))).toEqual([
      { claim_id: "clm_failed", due_at: iso(13), days_left: 3 },
      { claim_id: "clm_due", due_at: iso(14), days_left: 4 },
    ]);
    expect(await refundsDueNow(deps, at(10) - 1)).toEqual([{ claim_id: "clm_failed", due_at: iso(13), days_left: 3 }]);
  });

  it("starts a return's clock at the event that paid it, with the return's refund_due_days", async () => {
    const deps = await ports({ returns: { refund_due_days: 20 } } as Partial<ClaimsContract>);
    const asked = {
      execution_id: "exe_clm_ret",
      claim_id: "clm_ret",
      dfid: "dfid_clm_ret",
      order_id: "ord_clm_ret",
      amount_eur: 40,
      verdict_id: "vrd_clm_ret",
      lines: [{ line_id: "l1", quantity: 1 }],
      pay_on: "delivered" as const,
      return_by: iso(30),
      refund_due_days: 7,
      requested_at: T0,
      outcome: "PAID" as const,
      decided_by: "dhl-1",
    };
    const record = claim("clm_ret", { return: asked });
    await deps.claims.createClaim(record);
    // Delivered on day 5, recorded (and paid) on day 6.
    await deps.audit.append(
      returnAudit(record, "RETURN_EVENT_RECORDED", "AWAITING_RETURN", at(6), {
        event_id: "dhl-1",
        event: "delivered",
        at: iso(5),
        recorded_at: iso(6),
      }),
    );
    await deps.settlements.create(settlement("clm_ret", 6));
    // A refund decided without a return uses the policy's refund_due_days.
    await deps.claims.createClaim(claim("clm_keep"));
    await deps.settlements.create(settlement("clm_keep", 0));
    expect(await refundsDueNow(deps, at(8) - 1)).toEqual([]);
    expect(await refundsDueNow(deps, at(8))).toEqual([{ claim_id: "clm_ret", due_at: iso(12), days_left: 4 }]);
    expect(await refundsDueNow(deps, at(16))).toEqual([
      { claim_id: "clm_ret", due_at: iso(12), days_left: -4 },
      { claim_id: "clm_keep", due_at: iso(20), days_left: 4 },
    ]);
  });
});
