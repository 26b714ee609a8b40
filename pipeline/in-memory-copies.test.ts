// The in-memory stores keep a frozen copy of what they are given and hand that copy to every reader: no reader can
// change what is stored (a write to what it read throws), and no writer can change it afterwards through the object
// it gave. frozenCopy / plainCopy copy plain data as structuredClone does.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { dfidOf } from "../core/kernel/claim-record.ts";
import type { ClaimRecord } from "../core/kernel/claim-record.ts";
import type { StoredVerdict } from "./ports.ts";
import {
  createInMemoryClaimRepository,
  createInMemoryContextStore,
  createInMemorySessionRepository,
  createInMemoryAuditLog,
  createInMemoryVerdictRepository,
  frozenCopy,
  plainCopy,
} from "./in-memory.ts";

const isDeepFrozen = (v: unknown): boolean =>
  v === null || typeof v !== "object" || (Object.isFrozen(v) && Object.values(v).every(isDeepFrozen));

const claim = (id: string): ClaimRecord =>
  ({
    claim_id: id,
    dfid: `dfid_${id}`,
    status: "RECEIVED",
    received_at: "2026-03-16T10:00:00.000Z",
    claim: { order_id: "ord_001", amount_eur: 10, category: "electronics", reason: "broken" },
  }) as unknown as ClaimRecord;

describe("frozenCopy and plainCopy", () => {
  it("copy any JSON value as structuredClone does; frozenCopy's is frozen all the way down, plainCopy's not", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const frozen = frozenCopy(v);
        const plain = plainCopy(v);
        expect(frozen).toEqual(structuredClone(v));
        expect(plain).toEqual(structuredClone(v));
        expect(isDeepFrozen(frozen)).toBe(true);
        if (plain !== null && typeof plain === "object") {
          expect(Object.isFrozen(plain)).toBe(false);
          if (v !== null && typeof v === "object") expect(plain).not.toBe(v);
        }
      }),
    );
  });

  it("keep undefined members, array holes and a __proto__ key, and copy a Date as structuredClone does", () => {
    const odd = JSON.parse('{"__proto__": {"x": 1}}') as Record<string, unknown>;
    const list = [1, 2, 3];
    delete list[1];
    const value = { a: undefined, list, odd, at: new Date(0) };
    for (const copied of [frozenCopy(value), plainCopy(value)]) {
      expect(copied).toEqual(structuredClone(value));
      expect(Object.hasOwn(copied, "a")).toBe(true);
      expect(1 in copied.list).toBe(false);
      expect(Object.hasOwn(copied.odd, "__proto__")).toBe(true);
      expect(Object.getPrototypeOf(copied.odd)).toBe(Object.prototype);
      expect(copied.at).not.toBe(value.at);
      expect(copied.at.getTime()).toBe(0);
    }
  });
});

describe("an in-memory store's records", () => {
  it("a claim read cannot be changed, and the writer's object changes nothing once written", async () => {
    const claims = createInMemoryClaimRepository();
    const mine = claim("clm_1");
    await claims.createClaim(mine);
    (mine as { status: string }).status = "DECIDED";
    mine.claim!.amount_eur = 99;
    const read = (await claims.getClaim("clm_1"))!;
    expect(read.status).toBe("RECEIVED");
    expect(read.claim!.amount_eur).toBe(10);
    expect(() => {
      (read as { status: string }).status = "DECIDED";
    }).toThrow(TypeError);
    expect(() => {
      read.claim!.amount_eur = 1;
    }).toThrow(TypeError);
    const patch = { status: "RUNNING" as const };
    const { record } = await claims.updateClaim("clm_1", patch);
    (patch as { status: string }).status = "DECIDED";
    expect(record?.status).toBe("RUNNING");
    expect((await claims.getClaim("clm_1"))?.status).toBe("RUNNING");
    expect(claims.all().map((c) => c.status)).toEqual(["RUNNING"]);
  });

  it("a verdict's execution and publication replace the stored verdict; an earlier read keeps what it read", async () => {
    const verdicts = createInMemoryVerdictRepository();
    const verdict = {
      idempotency_key: "k1",
      claim_id: "clm_1",
      execution: "PENDING",
      record: { verdict_id: "v1" },
    } as unknown as StoredVerdict;
    const first = await verdicts.putVerdictOnce(verdict);
    const executed = await verdicts.recordExecution("k1", { execution: "EXECUTED" } as never);
    expect(await verdicts.markPublished("k1")).toBe(true);
    expect(await verdicts.markPublished("k1")).toBe(false);
    expect(first.execution).toBe("PENDING");
    expect(executed.execution).toBe("EXECUTED");
    expect(await verdicts.getVerdict("k1")).toMatchObject({ execution: "EXECUTED", published: true });
    expect(() => {
      (first as { execution: string }).execution = "EXECUTED";
    }).toThrow(TypeError);
  });

  it("a session cleared while its save's audit append is pending still comes back out if the append fails", async () => {
    const audit = createInMemoryAuditLog();
    let fail: (e: Error) => void = () => {};
    const sessions = createInMemorySessionRepository({
      ...audit,
      appendAll: () =>
        new Promise<void>((_, reject) => {
          fail = reject;
        }),
    });
    const dfid = dfidOf("clm_1");
    const event = {
      kind: "audit",
      event: {
        dfid,
        root_dfid: dfid,
        event_type: "CLAIM_RECEIVED",
        severity: "INFO",
        state: "RECEIVED",
        details: { claim_id: "clm_1" },
        created_at: "2026-03-16T10:00:00.000Z",
      },
    };
    const other = { kind: "publish", entries: [] };
    const saving = sessions.saveSession({
      claimId: "clm_1",
      version: 1,
      snapshot: { n: 1 },
      outbox: [event, other] as never,
    });
    expect((await sessions.loadSession("clm_1"))?.outbox).toEqual([other]);
    await sessions.clearOutbox("clm_1", 1);
    expect((await sessions.loadSession("clm_1"))?.outbox).toEqual([]);
    fail(new Error("the audit table is down"));
    await expect(saving).rejects.toThrow("the audit table is down");
    expect(await sessions.loadSession("clm_1")).toBeUndefined();
  });

  it("an order read cannot be changed", async () => {
    const orders = createInMemoryContextStore([
      { order_id: "ord_001", purchase_date: "2026-03-13T10:00:00Z", category: "electronics", amount: 299.99 },
    ]);
    const order = (await orders.getOrder("ord_001"))!;
    expect(() => {
      (order as { amount: number }).amount = 1;
    }).toThrow(TypeError);
    expect((await orders.getOrder("ord_001"))?.amount).toBe(299.99);
  });
});
