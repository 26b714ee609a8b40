// The refund ledger on dynalite beyond the shared contract: what a reservation costs in requests (one put
// for the first refund on an order the kernel read as absent), and that many claims racing on many orders
// — also from processes that each read the order's entry as absent — never push any order over its amount.
import { describe, expect, it } from "vitest";
import { assertLedgerEntry } from "../../core/kernel/ledger.ts";
import { createDynamoPorts } from "./dynamo-ports.ts";
import { useEmulatedAws } from "./emulators.test-kit.ts";
import { countRequests, createRequestCounter } from "./request-counter.ts";

const aws = useEmulatedAws();
const AUTO = { kind: "automatic", limitCents: 1_000_000 } as const;

describe("DynamoDB refund ledger", () => {
  it("creates an order's entry on its first reservation and reserves with one UpdateItem afterwards", async () => {
    const { ledger } = createDynamoPorts({ client: aws.doc, tableName: await aws.newTable() });
    const counter = createRequestCounter();
    const remove = countRequests(aws.doc, counter);
    try {
      await ledger.reserve({ orderId: "ord_1", claimId: "clm_a", cents: 100, orderCents: 1000, mode: AUTO });
      expect(counter.snapshot().byService.DynamoDB).toEqual({ UpdateItem: 3 });
      counter.reset();
      await ledger.reserve({ orderId: "ord_1", claimId: "clm_b", cents: 100, orderCents: 1000, mode: AUTO });
      expect(counter.snapshot().byService.DynamoDB).toEqual({ UpdateItem: 1 });
      counter.reset();
      const refused = await ledger.reserve({
        orderId: "ord_1",
        claimId: "clm_b",
        cents: 100,
        orderCents: 1000,
        mode: AUTO,
      });
      expect(refused).toMatchObject({ ok: false, code: "ALREADY_REFUNDED_FOR_CLAIM" });
      expect(counter.snapshot().byService.DynamoDB).toEqual({ UpdateItem: 1, GetItem: 1 });
    } finally {
      remove();
    }
  });

  it("reserves the first refund on an order this process read as absent with one PutItem of the whole entry", async () => {
    const { ledger } = createDynamoPorts({ client: aws.doc, tableName: await aws.newTable() });
    const counter = createRequestCounter();
    const remove = countRequests(aws.doc, counter);
    try {
      expect(await ledger.get("ord_1")).toBeUndefined();
      counter.reset();
      const out = await ledger.reserve({
        orderId: "ord_1",
        claimId: "clm_a",
        cents: 100,
        orderCents: 1000,
        mode: AUTO,
      });
      expect(out).toEqual({
        ok: true,
        entry: { order_id: "ord_1", refunded_cents: 100, claims: { clm_a: 100 }, automatic_cents: 100 },
      });
      expect(counter.snapshot().byService.DynamoDB).toEqual({ PutItem: 1 });
      expect(await ledger.get("ord_1")).toEqual(out.ok ? out.entry : undefined);
      expect(await ledger.get("ord_2", "sim_1")).toBeUndefined();
      const approved = await ledger.reserve({
        orderId: "ord_2",
        claimId: "clm_b",
        cents: 300,
        orderCents: 1000,
        mode: { kind: "approved" },
        scope: "sim_1",
      });
      expect(approved).toEqual({
        ok: true,
        entry: { order_id: "ord_2", refunded_cents: 300, claims: { clm_b: 300 }, approved: ["clm_b"] },
      });
      expect(await ledger.get("ord_2")).toBeUndefined();
    } finally {
      remove();
    }
  });

  it("falls back to the conditional update when the entry read as absent was created meanwhile", async () => {
    const tableName = await aws.newTable();
    const reader = createDynamoPorts({ client: aws.doc, tableName }).ledger;
    const other = createDynamoPorts({ client: aws.doc, tableName }).ledger;
    expect(await reader.get("ord_1")).toBeUndefined();
    await other.reserve({ orderId: "ord_1", claimId: "clm_b", cents: 900, orderCents: 1000, mode: AUTO });
    expect(
      await reader.reserve({ orderId: "ord_1", claimId: "clm_a", cents: 200, orderCents: 1000, mode: AUTO }),
    ).toMatchObject({ ok: false, code: "EXCEEDS_ORDER_AMOUNT" });
    expect(await reader.get("ord_2")).toBeUndefined();
    await other.markReviewPending("ord_2", "clm_r");
    expect(
      await reader.reserve({ orderId: "ord_2", claimId: "clm_a", cents: 100, orderCents: 1000, mode: AUTO }),
    ).toMatchObject({ ok: false, code: "REVIEW_PENDING_ON_ORDER" });
    expect(await reader.get("ord_3")).toBeUndefined();
    await other.reserve({ orderId: "ord_3", claimId: "clm_b", cents: 100, orderCents: 1000, mode: AUTO });
    expect(
      await reader.reserve({ orderId: "ord_3", claimId: "clm_a", cents: 100, orderCents: 1000, mode: AUTO }),
    ).toEqual({
      ok: true,
      entry: { order_id: "ord_3", refunded_cents: 200, claims: { clm_a: 100, clm_b: 100 }, automatic_cents: 200 },
    });
  });

  it("keeps an order within its amount when 30 processes that each read it as absent reserve at once", async () => {
    const tableName = await aws.newTable();
    const processes = Array.from({ length: 30 }, () => createDynamoPorts({ client: aws.doc, tableName }).ledger);
    for (const p of processes) expect(await p.get("ord_1")).toBeUndefined();
    const results = await Promise.all(
      processes.map((p, i) =>
        p.reserve({ orderId: "ord_1", claimId: `clm_${i}`, cents: 300, orderCents: 1000, mode: AUTO }),
      ),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(3);
    const entry = (await processes[0]!.get("ord_1"))!;
    assertLedgerEntry(entry);
    expect(entry.refunded_cents).toBe(900);
  });

  it("keeps every order within its amount when 60 claims race over 3 orders, each claim twice", async () => {
    const { ledger } = createDynamoPorts({ client: aws.doc, tableName: await aws.newTable() });
    const orders = { ord_a: 1_000, ord_b: 2_500, ord_c: 700 } as const;
    const ids = Object.keys(orders) as (keyof typeof orders)[];
    const attempts = Array.from({ length: 120 }, (_, i) => {
      const claim = i % 60;
      const order = ids[claim % 3]!;
      return ledger.reserve({
        orderId: order,
        claimId: `clm_${claim}`,
        cents: 100 + (claim % 4) * 50,
        orderCents: orders[order],
        mode: AUTO,
      });
    });
    const results = await Promise.all(attempts);
    for (const order of ids) {
      const entry = (await ledger.get(order))!;
      assertLedgerEntry(entry);
      expect(entry.refunded_cents).toBeLessThanOrEqual(orders[order]);
    }
    const granted = results.filter((r) => r.ok).length;
    const total = (await Promise.all(ids.map((o) => ledger.get(o)))).reduce(
      (n, e) => n + Object.keys(e!.claims).length,
      0,
    );
    expect(granted).toBe(total);
  });
});
