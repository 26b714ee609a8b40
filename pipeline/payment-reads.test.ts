// What paying a refund reads and writes (issue 37): the first delivery reads no settlement (create answers the
// stored one; the provider's answer and the announced mark are written on the record just written, conditioned on
// its version), and a write that loses to another writer reads and decides again, so nothing pays or announces twice.
import { describe, expect, it } from "vitest";
import type { RefundExecutedDetail } from "../core/kernel/events.ts";
import type { SettlementRecord } from "../core/kernel/settlement.ts";
import {
  createInMemoryAuditLog,
  createInMemoryContextStore,
  createInMemorySettlementRepository,
  createRecordingPublisher,
} from "./in-memory.ts";
import { announce, payRefund, recordProviderUpdate } from "./payments.ts";
import type { PaymentDeps, PaymentProvider } from "./payments.ts";
import type { SettlementRepository } from "./ports.ts";

const ORDER = {
  order_id: "ord_1",
  purchase_date: "2026-11-01",
  category: "electronics",
  amount: 300,
  payment_ref: "pi_1",
};

const executed = (over: Partial<RefundExecutedDetail> = {}): RefundExecutedDetail => ({
  execution_id: "exe_1",
  claim_id: "clm_1",
  dfid: "dfid_clm_1",
  order_id: "ord_1",
  amount_eur: 300,
  verdict_id: "vrd_1",
  ...over,
});

/** The in-memory settlements, counting each call by method. */
function counted() {
  const inner = createInMemorySettlementRepository();
  const calls: string[] = [];
  const repo: SettlementRepository = {
    ...inner,
    get: (id) => (calls.push("get"), inner.get(id)),
    create: (r) => (calls.push("create"), inner.create(r)),
    update: (r) => (calls.push("update"), inner.update(r)),
  };
  return { repo, calls, inner };
}

function deps(settlements: SettlementRepository, refund: PaymentProvider["refund"]) {
  const publisher = createRecordingPublisher();
  let now = Date.parse("2026-11-27T10:00:00Z");
  const d: PaymentDeps = {
    settlements,
    provider: { name: "stripe", needsPaymentRef: true, refund },
    orders: createInMemoryContextStore([ORDER]),
    publisher,
    audit: createInMemoryAuditLog(),
    clock: { now: () => (now += 1000) },
  };
  return { d, publisher };
}

describe("the settlement reads a refund costs", () => {
  it("the first delivery writes the settlement three times and reads it never", async () => {
    const { repo, calls } = counted();
    const { d, publisher } = deps(repo, async () => ({ status: "SETTLED", providerRef: "re_1" }));
    expect(await payRefund(d, executed())).toBe("SETTLED");
    expect(calls).toEqual(["create", "update", "update"]);
    expect(await repo.get("clm_1")).toMatchObject({ status: "SETTLED", announced: "SETTLED", version: 3 });
    expect(publisher.published.map((e) => e.detailType)).toEqual(["RefundSettled"]);
  });

  it("a redelivery finds the stored settlement through create and pays nothing", async () => {
    const { repo, calls } = counted();
    const paid: string[] = [];
    const { d, publisher } = deps(repo, async (r) => (paid.push(r.executionId), { status: "SETTLED" }));
    await payRefund(d, executed());
    calls.length = 0;
    expect(await payRefund(d, executed())).toBe("already recorded");
    expect(await payRefund(d, executed({ execution_id: "exe_0" }))).toBe("superseded");
    expect(paid).toEqual(["exe_1"]);
    expect(calls).toEqual(["create", "create"]);
    expect(publisher.published.map((e) => e.detailType)).toEqual(["RefundSettled"]);
  });

  it("a webhook recorded while the provider answers wins: the answer's write loses, reads, and nothing announces twice", async () => {
    const { repo, calls, inner } = counted();
    const holder: { d?: PaymentDeps } = {};
    const { d, publisher } = deps(repo, async () => {
      await recordProviderUpdate(holder.d!, "clm_1", {
        execution_id: "exe_1",
        status: "SETTLED",
        provider_ref: "re_w",
      });
      return { status: "SETTLED", providerRef: "re_1" };
    });
    holder.d = d;
    expect(await payRefund(d, executed())).toBe("SETTLED");
    expect(await inner.get("clm_1")).toMatchObject({ status: "SETTLED", announced: "SETTLED", provider_ref: "re_w" });
    expect(publisher.published.map((e) => e.detailType)).toEqual(["RefundSettled"]);
    // The webhook read once; the answer's conditional write failed, so it read the stored one.
    expect(calls.filter((c) => c === "get")).toHaveLength(2);
  });

  it("a PENDING answer on a settlement a webhook already settled returns what is stored", async () => {
    const { repo } = counted();
    const holder: { d?: PaymentDeps } = {};
    const { d } = deps(repo, async () => {
      await recordProviderUpdate(holder.d!, "clm_1", { execution_id: "exe_1", status: "SETTLED" });
      return { status: "PENDING" };
    });
    holder.d = d;
    expect(await payRefund(d, executed())).toBe("SETTLED");
  });

  it("an announcement on a record changed since marks the stored one when it still holds the status, and not otherwise", async () => {
    const { repo, inner } = counted();
    const { d, publisher } = deps(repo, async () => ({ status: "PENDING" }));
    await payRefund(d, executed());
    const pending = (await inner.get("clm_1"))!;
    const failed: SettlementRecord = { ...pending, status: "FAILED", failure_reason: "expired_card", version: 2 };
    await inner.update(failed);
    // Another writer bumps the version (say a review note) without changing the status.
    await inner.update({ ...failed, version: 3 });
    await announce(d, failed);
    expect(await inner.get("clm_1")).toMatchObject({ status: "FAILED", announced: "FAILED", version: 4 });
    // A record whose status moved on since is announced (at least once) but not marked on the stored one.
    await inner.update({
      ...(await inner.get("clm_1"))!,
      status: "SETTLED",
      announced: undefined,
      version: 5,
    } as SettlementRecord);
    await announce(d, { ...failed, announced: undefined } as SettlementRecord);
    expect(await inner.get("clm_1")).toMatchObject({ status: "SETTLED", version: 5 });
    expect(publisher.published.map((e) => e.detailType)).toEqual(["RefundFailed", "RefundFailed"]);
  });
});
