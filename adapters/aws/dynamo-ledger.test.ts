// The refund ledger on dynalite beyond the shared contract: what a reservation costs in requests, and
// that many claims racing on many orders never push any order over its amount.
import { describe, expect, it } from "vitest";
import { assertLedgerEntry } from "../../core/integrity/ledger.ts";
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
      const refused = await ledger.reserve({ orderId: "ord_1", claimId: "clm_b", cents: 100, orderCents: 1000, mode: AUTO });
      expect(refused).toMatchObject({ ok: false, code: "ALREADY_REFUNDED_FOR_CLAIM" });
      expect(counter.snapshot().byService.DynamoDB).toEqual({ UpdateItem: 1, GetItem: 1 });
    } finally {
      remove();
    }
  });

  it("keeps every order within its amount when 60 claims race over 3 orders, each claim twice", async () => {
    const { ledger } = createDynamoPorts({ client: aws.doc, tableName: await aws.newTable() });
    const orders = { ord_a: 1_000, ord_b: 2_500, ord_c: 700 } as const;
    const ids = Object.keys(orders) as (keyof typeof orders)[];
    const attempts = Array.from({ length: 120 }, (_, i) => {
      const claim = i % 60;
      const order = ids[claim % 3]!;
      return ledger.reserve({ orderId: order, claimId: `clm_${claim}`, cents: 100 + (claim % 4) * 50, orderCents: orders[order], mode: AUTO });
    });
    const results = await Promise.all(attempts);
    for (const order of ids) {
      const entry = (await ledger.get(order))!;
      assertLedgerEntry(entry);
      expect(entry.refunded_cents).toBeLessThanOrEqual(orders[order]);
    }
    const granted = results.filter((r) => r.ok).length;
    const total = (await Promise.all(ids.map((o) => ledger.get(o)))).reduce((n, e) => n + Object.keys(e!.claims).length, 0);
    expect(granted).toBe(total);
  });
});
