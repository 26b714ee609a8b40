import { assertLedgerEntry, emptyLedgerEntry } from "../core/kernel/index.ts";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AuditEventError, createAuditEvent, LedgerInvariantError, OrderDataError } from "../core/integrity/index.ts";
import { createInMemoryAuditLog, createInMemoryContextStore, createInMemoryRefundLedger } from "./in-memory.ts";

const at = "2026-03-16T10:00:00.000Z";
const ord = { order_id: "ord_001", purchase_date: "2026-03-13T10:00:00Z", category: "electronics", amount: 299.99 };

const LINE = { line_id: "l1", category: "electronics", quantity: 2, amount: "40.00" };

describe("in-memory context store", () => {
  it("answers orders by id and a sorted snapshot, defaulting the currency", async () => {
    const store = createInMemoryContextStore([{ ...ord, order_id: "ord_b" }, ord]);
    expect(await store.getOrder("ord_001")).toEqual({ ...ord, currency: "EUR" });
    expect(await store.getOrder("ord_404")).toBeUndefined();
    expect(await store.getOrder("constructor")).toBeUndefined();
    expect(Object.keys((await store.snapshot()).orders)).toEqual(["ord_001", "ord_b"]);
  });
  it.each([
    ["a relative purchase date", { ...ord, purchase_date: "-3d" }],
    ["a sub-cent amount", { ...ord, amount: 1.234 }],
    ["a negative amount", { ...ord, amount: -1 }],
    ["a currency ISO 4217 does not know", { ...ord, currency: "EURO" }],
    ["yen with decimals", { ...ord, currency: "JPY" }],
    ["lines that repeat a line id", { ...ord, category: undefined, amount: undefined, lines: [LINE, LINE] }],
  ])("refuses %s", (_name, bad) => {
    expect(() => createInMemoryContextStore([bad])).toThrow(OrderDataError);
  });
  it("keeps an order in another currency, with lines, as the shop gave it", async () => {
    const usd = { order_id: "ord_usd", purchase_date: "2026-05-20", currency: "USD", shipping: "9.99", lines: [LINE] };
    expect(await createInMemoryContextStore([usd]).getOrder("ord_usd")).toEqual(usd);
  });
  it("refuses duplicate order ids", () => {
    expect(() => createInMemoryContextStore([ord, ord])).toThrow(/duplicate order ord_001/);
  });
});

describe("in-memory refund ledger", () => {
  const ops = fc.array(
    fc.record({
      claim: fc.constantFrom("c1", "c2", "c3", "c4", "c5"),
      cents: fc.integer({ min: 1, max: 40_000 }),
      kind: fc.constantFrom("automatic", "approved", "mark", "clear"),
    }),
    { maxLength: 40 },
  );

  it("never refunds more than the order, automatically more than the limit, or the same claim twice, over any sequence", async () => {
    await fc.assert(
      fc.asyncProperty(
        ops,
        fc.integer({ min: 1, max: 60_000 }),
        fc.integer({ min: 1, max: 60_000 }),
        async (sequence, orderCents, limitCents) => {
          const ledger = createInMemoryRefundLedger();
          const granted = new Map<string, { cents: number; automatic: boolean }>();
          // Everything races: all operations are issued before any is awaited.
          const results = await Promise.all(
            sequence.map((op) =>
              op.kind === "mark"
                ? ledger.markReviewPending("ord", op.claim).then(() => undefined)
                : op.kind === "clear"
                  ? ledger.clearReviewPending("ord", op.claim).then(() => undefined)
                  : ledger.reserve({
                      orderId: "ord",
                      claimId: op.claim,
                      cents: op.cents,
                      orderCents,
                      mode: op.kind === "automatic" ? { kind: "automatic", limitCents } : { kind: "approved" },
                    }),
            ),
          );
          results.forEach((r, i) => {
            const op = sequence[i]!;
            if (r?.ok) {
              expect(granted.has(op.claim)).toBe(false);
              granted.set(op.claim, { cents: op.cents, automatic: op.kind === "automatic" });
            }
          });
          const total = [...granted.values()].reduce((a, b) => a + b.cents, 0);
          const automatic = [...granted.values()].filter((g) => g.automatic).reduce((a, b) => a + b.cents, 0);
          expect(total).toBeLessThanOrEqual(orderCents);
          expect(automatic).toBeLessThanOrEqual(limitCents);
          const entry = await ledger.get("ord");
          expect(entry?.refunded_cents ?? 0).toBe(total);
          expect(entry?.automatic_cents ?? 0).toBe(automatic);
          if (entry) assertLedgerEntry(entry);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("hands out copies: mutating a returned entry changes nothing", async () => {
    const ledger = createInMemoryRefundLedger([
      { order_id: "o", refunded_cents: 5, claims: { a: 5 }, automatic_cents: 5 },
    ]);
    const got = await ledger.get("o");
    got!.refunded_cents = 0;
    expect((await ledger.get("o"))?.refunded_cents).toBe(5);
    expect(await ledger.get("unknown")).toBeUndefined();
  });

  it("refuses inconsistent or duplicate initial entries", () => {
    expect(() => createInMemoryRefundLedger([{ order_id: "o", refunded_cents: 1, claims: {} }])).toThrow(
      LedgerInvariantError,
    );
    expect(() => createInMemoryRefundLedger([emptyLedgerEntry("o"), emptyLedgerEntry("o")])).toThrow(/duplicate/);
  });
});

describe("in-memory audit log", () => {
  it("answers by DFID (own or root) and by simulation, in append order, with copies", async () => {
    const log = createInMemoryAuditLog();
    await log.append(
      createAuditEvent({ dfid: "sim_root", type: "SIMULATION_START", state: "RUNNING", at, simulationId: "sim_1" }),
    );
    await log.append(
      createAuditEvent({
        dfid: "d1",
        rootDfid: "sim_root",
        type: "CLAIM_RECEIVED",
        state: "RECEIVED",
        at,
        simulationId: "sim_1",
      }),
    );
    await log.append(createAuditEvent({ dfid: "d2", type: "CLAIM_RECEIVED", state: "RECEIVED", at }));
    await log.append(
      createAuditEvent({
        dfid: "d1",
        rootDfid: "sim_root",
        type: "KERNEL_VERDICT",
        state: "DECIDED",
        at,
        simulationId: "sim_1",
      }),
    );
    expect((await log.byDfid("d1")).map((e) => e.event_type)).toEqual(["CLAIM_RECEIVED", "KERNEL_VERDICT"]);
    expect((await log.byDfid("sim_root")).map((e) => e.dfid)).toEqual(["sim_root", "d1", "d1"]);
    expect((await log.bySimulation("sim_1")).length).toBe(3);
    expect(await log.bySimulation("sim_2")).toEqual([]);
    const [first] = await log.byDfid("d2");
    first!.state = "CHANGED";
    expect((await log.byDfid("d2"))[0]!.state).toBe("RECEIVED");
  });
  it("refuses an invalid event on append", async () => {
    const log = createInMemoryAuditLog();
    await expect(log.append({ dfid: "d" } as never)).rejects.toThrow(AuditEventError);
    expect(log.all()).toEqual([]);
  });
});
