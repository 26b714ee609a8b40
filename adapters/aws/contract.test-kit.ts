// Shared contract tests of the pipeline's storage ports. Each `describe…Contract` runs the same cases
// against any implementation (in-memory in core/, DynamoDB here), so the two cannot drift apart.
// `factory` returns a fresh, empty port for every test.
import { describe, expect, it } from "vitest";
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import { busEntry } from "../../core/kernel/events.ts";
import type { ClaimVerdictDetail } from "../../core/kernel/events.ts";
import type { ReviewRecord } from "../../core/kernel/review.ts";
import type { Effect } from "../../pipeline/effects.ts";
import { createAuditEvent } from "../../core/integrity/audit.ts";
import type { AuditEvent } from "../../core/integrity/audit.ts";
import { assertLedgerEntry } from "../../core/kernel/ledger.ts";
import type { LineReserve, ReserveMode } from "../../core/kernel/ledger.ts";
import type { AuditLog, ContextStore, RefundLedger } from "../../pipeline/ports.ts";
import { claimListKey } from "../../pipeline/ports.ts";
import { VersionConflictError } from "../../core/errors.ts";
import type { SettlementRecord } from "../../core/kernel/settlement.ts";
import { pendingReviewKey } from "../../pipeline/ports.ts";
import { recentServedEvents } from "../../pipeline/served.ts";
import type { SettlementRepository } from "../../pipeline/ports.ts";
import type {
  ClaimRepository,
  ReviewRepository,
  SessionRepository,
  StoredVerdict,
  VerdictRepository,
} from "../../pipeline/ports.ts";

/** Makes a fresh, empty port. */
export type PortFactory<T> = () => Promise<T>;

// ── fixtures ─────────────────────────────────────────────────────────────────────────────────

/** A RECEIVED structured claim; `overrides` replace fields. */
export function claimFixture(id: string, overrides: Partial<ClaimRecord> = {}): ClaimRecord {
  const claim = { order_id: `ord_${id}`, amount_eur: 49.99, category: "electronics", reason: "" };
  return {
    claim_id: id,
    dfid: `dfid_${id}`,
    root_dfid: `dfid_${id}`,
    label: "Kaputt — ünïcode ✓",
    status: "RECEIVED",
    input: { claim },
    claim,
    received_at: "2025-03-01T10:00:00.000Z",
    updated_at: "2025-03-01T10:00:00.000Z",
    ...overrides,
  };
}

/** A stored verdict for `key` (an ACCEPT waiting for execution unless overridden). */
export function verdictFixture(key: string, overrides: Partial<StoredVerdict> = {}): StoredVerdict {
  const record = {
    verdict_id: `vrd_${key.slice(0, 8)}`,
    claim_id: "clm_1",
    dfid: "dfid_clm_1",
    verdict: "ACCEPT",
    reason_code: "ACCEPTED",
    reason: "Within policy.",
    order_id: "ord_1",
    amount_eur: 12.5,
    policy_kind: null,
    idempotency_key: key,
    decided_at: "2025-03-01T10:00:05.000Z",
  } as unknown as ClaimVerdictDetail;
  return {
    idempotency_key: key,
    claim_id: "clm_1",
    record,
    layer: 6,
    checks: [{ layer: 1, ok: true, note: null }],
    execution: "PENDING",
    events: [busEntry("ClaimVerdict", record)],
    published: false,
    ...overrides,
  };
}

const key64 = (n: number) => n.toString(16).padStart(64, "0");

/** A pending review of clm_1. */
export function reviewFixture(overrides: Partial<ReviewRecord> = {}): ReviewRecord {
  return {
    review_id: "rev_1",
    claim_id: "clm_1",
    dfid: "dfid_clm_1",
    origin: "ESCALATE",
    status: "PENDING",
    reason_code: "AMOUNT_ABOVE_LIMIT",
    reason: "above the limit",
    order_id: "ord_1",
    amount_eur: 700,
    requested_at: "2025-03-01T10:00:05.000Z",
    version: 1,
    ...overrides,
  };
}

/** An audit event of flow `dfid` at `at`. */
export function auditFixture(
  dfid: string,
  at: string,
  extra: {
    type?: AuditEvent["event_type"];
    rootDfid?: string;
    simulationId?: string;
    details?: Record<string, unknown>;
  } = {},
): AuditEvent {
  return createAuditEvent({
    dfid,
    type: extra.type ?? "AGENT_STEP",
    state: "RUNNING",
    at,
    details: extra.details ?? {},
    ...(extra.rootDfid ? { rootDfid: extra.rootDfid } : {}),
    ...(extra.simulationId ? { simulationId: extra.simulationId } : {}),
  });
}

/** Authoritative orders for the context store contract (unsorted on purpose). */
export const ORDER_FIXTURES = [
  {
    order_id: "ord_b",
    purchase_date: "2025-02-20",
    category: "electronics",
    amount: 129.99,
    currency: "EUR",
    customer_id: "cus_1",
  },
  { order_id: "ord_a", purchase_date: "2025-02-01T09:30:00Z", category: "books", amount: 15 },
  { order_id: "ord_c", purchase_date: "2025-01-15", category: "garden", amount: 1000.5, currency: "EUR" },
] as const;

const settle = async <T>(promises: Promise<T>[]) => {
  const results = await Promise.allSettled(promises);
  return {
    ok: results.filter((r): r is PromiseFulfilledResult<Awaited<T>> => r.status === "fulfilled").map((r) => r.value),
    errors: results.filter((r): r is PromiseRejectedResult => r.status === "rejected").map((r) => r.reason as unknown),
  };
};

// ── ClaimRepository ──────────────────────────────────────────────────────────────────────────

/** The ClaimRepository contract. */
export function describeClaimRepositoryContract(name: string, factory: PortFactory<ClaimRepository>): void {
  describe(`ClaimRepository contract: ${name}`, () => {
    it("stores a claim and reads it back unchanged (unicode, empty strings, nested input)", async () => {
      const repo = await factory();
      const record = claimFixture("clm_1");
      expect(await repo.createClaim(record)).toEqual({ created: true, record });
      expect(await repo.getClaim("clm_1")).toEqual(record);
      expect(await repo.getClaim("clm_unknown")).toBeUndefined();
    });

    it("keeps the first claim when the claim id is taken", async () => {
      const repo = await factory();
      const first = claimFixture("clm_1");
      await repo.createClaim(first);
      const again = await repo.createClaim(claimFixture("clm_1", { label: "other" }));
      expect(again).toEqual({ created: false, record: first, sameRequest: false });
    });

    it("answers a repeated idempotency key with the first claim, telling whether the request was the same", async () => {
      const repo = await factory();
      const first = claimFixture("clm_1");
      expect((await repo.createClaim(first, { key: "idem-1", requestHash: "h1" })).created).toBe(true);
      expect(await repo.createClaim(claimFixture("clm_2"), { key: "idem-1", requestHash: "h1" })).toEqual({
        created: false,
        record: first,
        sameRequest: true,
      });
      expect(await repo.createClaim(claimFixture("clm_3"), { key: "idem-1", requestHash: "h2" })).toEqual({
        created: false,
        record: first,
        sameRequest: false,
      });
      expect(await repo.getClaim("clm_2")).toBeUndefined();
      expect(await repo.getClaim("clm_3")).toBeUndefined();
      expect((await repo.createClaim(claimFixture("clm_4"), { key: "idem-2", requestHash: "h1" })).created).toBe(true);
    });

    it("creates one claim when the same idempotency key races", async () => {
      const repo = await factory();
      const { ok } = await settle(
        Array.from({ length: 5 }, (_, i) =>
          repo.createClaim(claimFixture(`clm_${i}`), { key: "idem-race", requestHash: "h" }),
        ),
      );
      expect(ok.filter((r) => r.created)).toHaveLength(1);
      const winner = ok.find((r) => r.created)!.record.claim_id;
      expect(ok.every((r) => r.record.claim_id === winner)).toBe(true);
      const stored = await Promise.all(Array.from({ length: 5 }, (_, i) => repo.getClaim(`clm_${i}`)));
      expect(stored.filter(Boolean).map((r) => r!.claim_id)).toEqual([winner]);
    });

    it("applies a patch to a claim that is not final and returns the record after it", async () => {
      const repo = await factory();
      await repo.createClaim(claimFixture("clm_1"));
      const patch = { status: "RUNNING" as const, updated_at: "2025-03-01T10:00:01.000Z", label: undefined };
      const out = await repo.updateClaim("clm_1", patch);
      const expected = { ...claimFixture("clm_1"), ...patch };
      expect(out).toEqual({ record: expected, changed: true });
      expect(await repo.getClaim("clm_1")).toEqual(expected);
      expect((await repo.getClaim("clm_1"))?.label).toBeUndefined();
    });

    it.each([
      { status: "DECIDED" as const, onlyFrom: undefined, changed: false },
      { status: "NEEDS_REVIEW" as const, onlyFrom: undefined, changed: false },
      { status: "RUNNING" as const, onlyFrom: ["RECEIVED" as const], changed: false },
      { status: "RUNNING" as const, onlyFrom: ["RECEIVED" as const, "RUNNING" as const], changed: true },
      { status: "DECIDED" as const, onlyFrom: ["DECIDED" as const], changed: true },
      { status: "RECEIVED" as const, onlyFrom: [], changed: false },
    ])("a claim in $status with onlyFrom $onlyFrom is changed: $changed", async ({ status, onlyFrom, changed }) => {
      const repo = await factory();
      const record = claimFixture("clm_1", { status });
      await repo.createClaim(record);
      const out = await repo.updateClaim(
        "clm_1",
        { reason: "patched", updated_at: "2025-03-01T11:00:00.000Z" },
        onlyFrom,
      );
      expect(out.changed).toBe(changed);
      const expected = changed ? { ...record, reason: "patched", updated_at: "2025-03-01T11:00:00.000Z" } : record;
      expect(out.record).toEqual(expected);
      expect(await repo.getClaim("clm_1")).toEqual(expected);
    });

    it("does not create a claim by updating an unknown one", async () => {
      const repo = await factory();
      expect(await repo.updateClaim("clm_none", { status: "RUNNING" })).toEqual({ record: undefined, changed: false });
      expect(await repo.getClaim("clm_none")).toBeUndefined();
    });

    const at = (m: number) => `2025-03-01T10:${String(m).padStart(2, "0")}:00.000Z`;
    /** Seven claims received a minute apart (clm_a first), in every status. */
    const seed = async (repo: ClaimRepository) => {
      const rows: [string, ClaimRecord["status"], ClaimRecord["verdict"]][] = [
        ["clm_a", "DECIDED", "ACCEPT"],
        ["clm_b", "RUNNING", undefined],
        ["clm_c", "NEEDS_REVIEW", undefined],
        ["clm_d", "DECIDED", "REJECT"],
        ["clm_e", "RECEIVED", undefined],
        ["clm_f", "DECIDED", "ACCEPT"],
        ["clm_g", "RUNNING", undefined],
      ];
      for (const [i, [id, status, verdict]] of rows.entries())
        await repo.createClaim(
          claimFixture(id, { status, ...(verdict ? { verdict } : {}), received_at: at(i), updated_at: at(i + 10) }),
        );
    };
    const ids = (page: { items: ClaimRecord[] }) => page.items.map((c) => c.claim_id);

    it("lists every claim newest receipt first, page by page, each cursor continuing where its page ended", async () => {
      const repo = await factory();
      await seed(repo);
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await repo.listClaims({ limit: 3, ...(cursor ? { cursor } : {}) });
        seen.push(...ids(page));
        cursor = page.nextCursor;
        pages++;
      } while (cursor && pages < 10);
      expect(seen).toEqual(["clm_g", "clm_f", "clm_e", "clm_d", "clm_c", "clm_b", "clm_a"]);
      expect(pages).toBe(3);
      const all = await repo.listClaims({ limit: 7 });
      expect(ids(all)).toEqual(seen);
      expect(all.nextCursor).toBeUndefined();
      expect(all.items[0]).toEqual(
        claimFixture("clm_g", { status: "RUNNING", received_at: at(6), updated_at: at(16) }),
      );
    });

    it.each([
      { query: { statuses: ["RUNNING"] as ClaimRecord["status"][] }, expected: ["clm_g", "clm_b"] },
      {
        query: { statuses: ["RECEIVED", "RUNNING"] as ClaimRecord["status"][] },
        expected: ["clm_g", "clm_e", "clm_b"],
      },
      { query: { statuses: ["DECIDED"] as ClaimRecord["status"][] }, expected: ["clm_f", "clm_d", "clm_a"] },
      { query: { verdict: "ACCEPT" as const }, expected: ["clm_f", "clm_a"] },
      { query: { statuses: ["DECIDED"] as ClaimRecord["status"][], verdict: "REJECT" as const }, expected: ["clm_d"] },
      { query: { since: at(3) }, expected: ["clm_g", "clm_f", "clm_e", "clm_d"] },
      {
        query: { since: at(2), statuses: ["NEEDS_REVIEW", "RUNNING"] as ClaimRecord["status"][] },
        expected: ["clm_g", "clm_c"],
      },
      { query: { before: at(2) }, expected: ["clm_b", "clm_a"] },
      { query: { since: at(1), before: at(5), verdict: "ACCEPT" as const }, expected: [] },
    ])("filters the listing: $query", async ({ query, expected }) => {
      const repo = await factory();
      await seed(repo);
      expect(ids(await repo.listClaims({ limit: 10, ...query }))).toEqual(expected);
      // The same answer one claim at a time, through the cursor.
      const paged: string[] = [];
      let cursor: string | undefined;
      for (let i = 0; i < 10; i++) {
        const page = await repo.listClaims({ limit: 1, ...query, ...(cursor ? { cursor } : {}) });
        paged.push(...ids(page));
        cursor = page.nextCursor;
        if (!cursor) break;
      }
      expect(paged).toEqual(expected);
    });

    it("answers an empty page when the cursor lies before since", async () => {
      const repo = await factory();
      await seed(repo);
      const page = await repo.listClaims({ limit: 2, since: at(5) });
      expect(ids(page)).toEqual(["clm_g", "clm_f"]);
      expect(page.nextCursor).toBeUndefined();
      expect(
        await repo.listClaims({
          limit: 2,
          since: at(5),
          cursor: claimListKey({ received_at: at(1), claim_id: "clm_b" }),
        }),
      ).toEqual({ items: [] });
    });

    it("follows status changes in the listing", async () => {
      const repo = await factory();
      await repo.createClaim(claimFixture("clm_a", { received_at: at(1), updated_at: at(1) }));
      await repo.createClaim(claimFixture("clm_b", { received_at: at(2), updated_at: at(2) }));
      await repo.updateClaim("clm_a", { status: "RUNNING", updated_at: at(10) });
      await repo.updateClaim("clm_b", { status: "DECIDED", verdict: "ESCALATE", updated_at: at(3) });
      const list = async (statuses: ClaimRecord["status"][]) => ids(await repo.listClaims({ statuses, limit: 10 }));
      expect(await list(["RECEIVED"])).toEqual([]);
      expect(await list(["RUNNING"])).toEqual(["clm_a"]);
      expect(await list(["DECIDED"])).toEqual(["clm_b"]);
      expect(ids(await repo.listClaims({ verdict: "ESCALATE", limit: 10 }))).toEqual(["clm_b"]);
      // A status change alone (updated_at unchanged) moves the claim too, and a patch may reopen a final one.
      await repo.updateClaim("clm_a", { status: "NEEDS_REVIEW" });
      await repo.updateClaim("clm_b", { status: "RUNNING" }, ["DECIDED"]);
      expect(await list(["RUNNING"])).toEqual(["clm_b"]);
      expect(await list(["NEEDS_REVIEW", "DECIDED"])).toEqual(["clm_a"]);
      expect(ids(await repo.listClaims({ limit: 10 }))).toEqual(["clm_b", "clm_a"]);
    });

    it("lists a claim AWAITING_RETURN by that status, out of the open ones, and moves it on conditionally (docs/returns.md)", async () => {
      const repo = await factory();
      await repo.createClaim(claimFixture("clm_r", { received_at: at(1), updated_at: at(1) }));
      await repo.updateClaim("clm_r", { status: "RUNNING", updated_at: at(2) });
      await repo.updateClaim("clm_r", { status: "AWAITING_RETURN", verdict: "ACCEPT", updated_at: at(3) }, ["RUNNING"]);
      const list = async (statuses: ClaimRecord["status"][]) => ids(await repo.listClaims({ statuses, limit: 10 }));
      expect(await list(["AWAITING_RETURN"])).toEqual(["clm_r"]);
      expect(await list(["RECEIVED", "RUNNING"])).toEqual([]);
      // Awaiting its return, the claim is decided: an update without onlyFrom leaves it, one from AWAITING_RETURN takes.
      expect((await repo.updateClaim("clm_r", { status: "RUNNING" })).changed).toBe(false);
      expect((await repo.updateClaim("clm_r", { status: "DECIDED" }, ["AWAITING_RETURN"])).changed).toBe(true);
      expect((await repo.updateClaim("clm_r", { status: "DECIDED" }, ["AWAITING_RETURN"])).changed).toBe(false);
      expect(await list(["AWAITING_RETURN"])).toEqual([]);
      expect(await list(["DECIDED"])).toEqual(["clm_r"]);
    });

    it("refuses a limit out of range", async () => {
      const repo = await factory();
      await expect(repo.listClaims({ limit: 0 })).rejects.toMatchObject({ code: "INVALID_CLAIM_QUERY" });
      await expect(repo.listClaims({ limit: 1.5 })).rejects.toMatchObject({ code: "INVALID_CLAIM_QUERY" });
    });
  });
}

// ── SessionRepository ────────────────────────────────────────────────────────────────────────

const outboxFixture = (claimId: string): Effect[] => [
  { kind: "crew_event", claimId, message: { type: "crew.tick", crewId: claimId, nowMs: 1_740_823_200_000 } },
  { kind: "timer", claimId, dueMs: 1_740_823_320_000 },
];

/** The SessionRepository contract; `factory` gives the repository and the audit log of the same store. */
export function describeSessionRepositoryContract(
  name: string,
  stores: PortFactory<{ repo: SessionRepository; audit: AuditLog }>,
): void {
  const factory = async () => (await stores()).repo;
  describe(`SessionRepository contract: ${name}`, () => {
    it("records the outbox's own audit events with the save (in the audit log, not in the loaded outbox)", async () => {
      const { repo, audit } = await stores();
      const own = [
        auditFixture("dfid_clm_1", "2025-03-01T10:00:00.000Z", { type: "CREW_STARTED" }),
        auditFixture("dfid_clm_1", "2025-03-01T10:00:00.000Z", { type: "AGENT_DECISION" }),
      ];
      // Not the claim's own flow, or a simulation's (copied under its root): performed after the save like the rest.
      const other = auditFixture("dfid_clm_2", "2025-03-01T10:00:00.000Z");
      const simulated = auditFixture("dfid_clm_1", "2025-03-01T10:00:00.000Z", {
        type: "AGENT_STEP_FAILED",
        rootDfid: "dfid_sim_1",
        simulationId: "sim_1",
      });
      const outbox: Effect[] = [
        { kind: "audit", event: own[0]! },
        ...outboxFixture("clm_1"),
        { kind: "audit", event: other },
        { kind: "audit", event: own[1]! },
        { kind: "audit", event: simulated },
      ];
      await repo.saveSession({ claimId: "clm_1", version: 1, snapshot: { n: 1 }, outbox });
      expect(await repo.loadSession("clm_1")).toEqual({
        claimId: "clm_1",
        version: 1,
        snapshot: { n: 1 },
        outbox: [...outboxFixture("clm_1"), { kind: "audit", event: other }, { kind: "audit", event: simulated }],
      });
      expect(await audit.byDfid("dfid_clm_1")).toEqual(own);
      expect(await audit.byDfid("dfid_clm_2")).toEqual([]);
      expect(await audit.bySimulation("sim_1")).toEqual([]);

      // A lost race records nothing; the next version's events follow the first version's.
      const late = auditFixture("dfid_clm_1", "2025-03-01T10:00:01.000Z", { type: "AGENT_STEP_FAILED" });
      await expect(
        repo.saveSession({ claimId: "clm_1", version: 1, snapshot: {}, outbox: [{ kind: "audit", event: late }] }),
      ).rejects.toBeInstanceOf(VersionConflictError);
      expect(await audit.byDfid("dfid_clm_1")).toEqual(own);
      const next = auditFixture("dfid_clm_1", "2025-03-01T10:00:02.000Z", { type: "AGENT_STEP" });
      await repo.saveSession({
        claimId: "clm_1",
        version: 2,
        snapshot: { n: 2 },
        outbox: [{ kind: "audit", event: next }],
      });
      expect(await audit.byDfid("dfid_clm_1")).toEqual([...own, next]);
      expect(await repo.loadSession("clm_1")).toEqual({ claimId: "clm_1", version: 2, snapshot: { n: 2 }, outbox: [] });
      // Appending an event the save already recorded (a repeated outbox of a session stored before) keeps it once.
      await audit.appendAll([next]);
      expect(await audit.byDfid("dfid_clm_1")).toEqual([...own, next]);
    });

    it("saves version 1 of a new session and loads it back", async () => {
      const repo = await factory();
      expect(await repo.loadSession("clm_1")).toBeUndefined();
      const session = {
        claimId: "clm_1",
        version: 1,
        snapshot: { status: "running", steps: [1, 2, { nested: null }], note: "" },
        outbox: outboxFixture("clm_1"),
      };
      await repo.saveSession(session);
      expect(await repo.loadSession("clm_1")).toEqual(session);
      // A load told no older layout can hold the session (a stamped start) finds what this store saved, and no other.
      expect(await repo.loadSession("clm_1", { legacyLayout: false })).toEqual(session);
      expect(await repo.loadSession("clm_2", { legacyLayout: false })).toBeUndefined();
    });

    it("saves version n+1 over version n and refuses any other version with VersionConflictError", async () => {
      const repo = await factory();
      await repo.saveSession({ claimId: "clm_1", version: 1, snapshot: { n: 1 }, outbox: [] });
      const conflict = repo.saveSession({ claimId: "clm_1", version: 1, snapshot: { n: "again" }, outbox: [] });
      await expect(conflict).rejects.toBeInstanceOf(VersionConflictError);
      await expect(conflict).rejects.toMatchObject({
        code: "VERSION_CONFLICT",
        entity: "session",
        key: "clm_1",
        expectedVersion: 0,
      });
      await expect(
        repo.saveSession({ claimId: "clm_1", version: 3, snapshot: { n: 3 }, outbox: [] }),
      ).rejects.toMatchObject({ expectedVersion: 2 });
      await repo.saveSession({ claimId: "clm_1", version: 2, snapshot: { n: 2 }, outbox: [] });
      expect(await repo.loadSession("clm_1")).toEqual({ claimId: "clm_1", version: 2, snapshot: { n: 2 }, outbox: [] });
      await expect(repo.saveSession({ claimId: "clm_2", version: 2, snapshot: {}, outbox: [] })).rejects.toBeInstanceOf(
        VersionConflictError,
      );
    });

    it("lets exactly one of two racing writers of the same version win", async () => {
      const repo = await factory();
      await repo.saveSession({ claimId: "clm_1", version: 1, snapshot: { n: 1 }, outbox: [] });
      const { ok, errors } = await settle(
        ["A", "B"].map((w) => repo.saveSession({ claimId: "clm_1", version: 2, snapshot: { writer: w }, outbox: [] })),
      );
      expect(ok).toHaveLength(1);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toBeInstanceOf(VersionConflictError);
      const stored = await repo.loadSession("clm_1");
      expect(stored?.version).toBe(2);
      expect(["A", "B"]).toContain((stored?.snapshot as { writer: string }).writer);
    });

    it("clears the outbox of the version it was saved with, and not of another", async () => {
      const repo = await factory();
      await repo.saveSession({ claimId: "clm_1", version: 1, snapshot: { n: 1 }, outbox: outboxFixture("clm_1") });
      await repo.clearOutbox("clm_1", 2);
      expect((await repo.loadSession("clm_1"))?.outbox).toEqual(outboxFixture("clm_1"));
      await repo.clearOutbox("clm_1", 1);
      expect(await repo.loadSession("clm_1")).toEqual({ claimId: "clm_1", version: 1, snapshot: { n: 1 }, outbox: [] });
      await repo.clearOutbox("clm_unknown", 1);
      expect(await repo.loadSession("clm_unknown")).toBeUndefined();
    });

    it("keeps an outbox never cleared pending until the next version supersedes it, whose own outbox a late clear of the old one leaves pending", async () => {
      const repo = await factory();
      const outbox = (n: number): Effect[] => [{ kind: "timer", claimId: "clm_1", dueMs: n }];
      // Step 1's outbox is performed but not marked (its answer proves it): it loads as pending.
      await repo.saveSession({ claimId: "clm_1", version: 1, snapshot: { n: 1 }, outbox: outbox(1) });
      expect((await repo.loadSession("clm_1"))?.outbox).toEqual(outbox(1));
      // Step 2 supersedes it without any marker: only step 2's outbox is pending.
      await repo.saveSession({ claimId: "clm_1", version: 2, snapshot: { n: 2 }, outbox: outbox(2) });
      expect(await repo.loadSession("clm_1")).toEqual({
        claimId: "clm_1",
        version: 2,
        snapshot: { n: 2 },
        outbox: outbox(2),
      });
      // A late clear of step 1 (a repair that lost the race) hides nothing of step 2.
      await repo.clearOutbox("clm_1", 1);
      expect((await repo.loadSession("clm_1"))?.outbox).toEqual(outbox(2));
      // Step 3 after step 2 was marked: its own outbox is pending, the marker of step 2 does not cover it.
      await repo.clearOutbox("clm_1", 2);
      expect((await repo.loadSession("clm_1"))?.outbox).toEqual([]);
      await repo.saveSession({ claimId: "clm_1", version: 3, snapshot: { n: 3 }, outbox: outbox(3) });
      expect((await repo.loadSession("clm_1"))?.outbox).toEqual(outbox(3));
      await repo.clearOutbox("clm_1", 2);
      expect((await repo.loadSession("clm_1"))?.outbox).toEqual(outbox(3));
      await repo.clearOutbox("clm_1", 3);
      expect(await repo.loadSession("clm_1")).toEqual({ claimId: "clm_1", version: 3, snapshot: { n: 3 }, outbox: [] });
    });

    it("round-trips a snapshot over 400 KB (compressible and incompressible) and its next versions", async () => {
      const repo = await factory();
      const compressible = {
        log: Array.from({ length: 8000 }, (_, i) => ({ step: i, text: "the analyst looked at the claim again" })),
      };
      const incompressible = { blob: randomText(600_000) };
      expect(JSON.stringify(compressible).length).toBeGreaterThan(400_000);
      await repo.saveSession({
        claimId: "clm_big",
        version: 1,
        snapshot: compressible,
        outbox: outboxFixture("clm_big"),
      });
      expect(await repo.loadSession("clm_big")).toEqual({
        claimId: "clm_big",
        version: 1,
        snapshot: compressible,
        outbox: outboxFixture("clm_big"),
      });
      await repo.saveSession({ claimId: "clm_big", version: 2, snapshot: incompressible, outbox: [] });
      expect(await repo.loadSession("clm_big")).toEqual({
        claimId: "clm_big",
        version: 2,
        snapshot: incompressible,
        outbox: [],
      });
      const next = { blob: randomText(500_000) };
      await repo.saveSession({ claimId: "clm_big", version: 3, snapshot: next, outbox: outboxFixture("clm_big") });
      expect(await repo.loadSession("clm_big")).toEqual({
        claimId: "clm_big",
        version: 3,
        snapshot: next,
        outbox: outboxFixture("clm_big"),
      });
      await repo.clearOutbox("clm_big", 3);
      expect(await repo.loadSession("clm_big")).toEqual({ claimId: "clm_big", version: 3, snapshot: next, outbox: [] });
      await repo.saveSession({ claimId: "clm_big", version: 4, snapshot: { small: true }, outbox: [] });
      expect(await repo.loadSession("clm_big")).toEqual({
        claimId: "clm_big",
        version: 4,
        snapshot: { small: true },
        outbox: [],
      });
    });
  });
}

/** Text that gzip cannot shrink much: base64 of pseudo-random bytes (seeded, so runs repeat). */
export function randomText(length: number, seed = 42): string {
  let x = seed >>> 0 || 1;
  const bytes = new Uint8Array(Math.ceil((length * 3) / 4));
  for (let i = 0; i < bytes.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    bytes[i] = x & 0xff;
  }
  return Buffer.from(bytes).toString("base64").slice(0, length);
}

// ── VerdictRepository ────────────────────────────────────────────────────────────────────────

/** The VerdictRepository contract. */
export function describeVerdictRepositoryContract(name: string, factory: PortFactory<VerdictRepository>): void {
  describe(`VerdictRepository contract: ${name}`, () => {
    it("stores a verdict once per key; a later put returns the stored one", async () => {
      const repo = await factory();
      const key = key64(1);
      expect(await repo.getVerdict(key)).toBeUndefined();
      const first = verdictFixture(key);
      expect(await repo.putVerdictOnce(first)).toEqual(first);
      const other = verdictFixture(key, { layer: 2, execution: "NOT_APPLICABLE", claim_id: "clm_other" });
      expect(await repo.putVerdictOnce(other)).toEqual(first);
      expect(await repo.getVerdict(key)).toEqual(first);
    });

    it("gives two racing writers the same stored verdict", async () => {
      const repo = await factory();
      const key = key64(2);
      const a = verdictFixture(key, { layer: 1 });
      const b = verdictFixture(key, { layer: 2 });
      const [ra, rb] = await Promise.all([repo.putVerdictOnce(a), repo.putVerdictOnce(b)]);
      expect(ra).toEqual(rb);
      expect([a, b]).toContainEqual(ra);
      expect(await repo.getVerdict(key)).toEqual(ra);
    });

    it("settles a PENDING execution once: the first outcome wins", async () => {
      const repo = await factory();
      const key = key64(3);
      const stored = verdictFixture(key);
      await repo.putVerdictOnce(stored);
      const refund = busEntry("RefundExecuted", {
        execution_id: "exe_1",
        claim_id: "clm_1",
        dfid: "dfid_clm_1",
        order_id: "ord_1",
        amount_eur: 10,
        verdict_id: "vrd_1",
      });
      const executed = await repo.recordExecution(key, { execution: "EXECUTED", events: [...stored.events, refund] });
      expect(executed).toEqual({ ...stored, execution: "EXECUTED", events: [...stored.events, refund] });
      const again = await repo.recordExecution(key, { execution: "REFUSED", events: [], review: reviewFixture() });
      expect(again).toEqual(executed);
      expect(await repo.getVerdict(key)).toEqual(executed);
    });

    it("replaces the unpublished decision when the kernel decided again, with its review", async () => {
      const repo = await factory();
      const key = key64(4);
      const first = verdictFixture(key);
      await repo.putVerdictOnce(first);
      const record = {
        ...first.record,
        verdict: "ESCALATE",
        reason_code: "AMOUNT_ABOVE_LIMIT",
        reason: "decided again",
      } as ClaimVerdictDetail;
      const review = reviewFixture();
      const out = await repo.recordExecution(key, {
        execution: "NOT_APPLICABLE",
        events: [busEntry("ClaimVerdict", record)],
        review,
        record,
        layer: 11,
        checks: [{ layer: 11 }],
      });
      expect(out).toEqual({
        ...first,
        execution: "NOT_APPLICABLE",
        record,
        layer: 11,
        checks: [{ layer: 11 }],
        events: [busEntry("ClaimVerdict", record)],
        review,
      });
      expect(await repo.getVerdict(key)).toEqual(out);
    });

    it("lets exactly one of racing execution records win", async () => {
      const repo = await factory();
      const key = key64(5);
      await repo.putVerdictOnce(verdictFixture(key));
      const outcomes = await Promise.all(
        (["EXECUTED", "REFUSED", "EXECUTED", "REFUSED"] as const).map((execution, i) =>
          repo.recordExecution(key, {
            execution,
            events: [
              busEntry("ClaimNeedsReview", {
                claim_id: "clm_1",
                dfid: "dfid_clm_1",
                reason_code: "WRITER",
                reason: `writer ${i}`,
                review_id: "rev_1",
              }),
            ],
          }),
        ),
      );
      const stored = await repo.getVerdict(key);
      expect(stored?.execution).not.toBe("PENDING");
      for (const outcome of outcomes) expect(outcome).toEqual(stored);
    });

    it("refuses to record an execution for a key without a verdict", async () => {
      const repo = await factory();
      await expect(repo.recordExecution(key64(6), { execution: "EXECUTED", events: [] })).rejects.toThrow(
        /no verdict stored/,
      );
    });

    it("marks a verdict published, and ignores an unknown key", async () => {
      const repo = await factory();
      const key = key64(7);
      await repo.putVerdictOnce(verdictFixture(key, { execution: "NOT_APPLICABLE" }));
      expect(await repo.markPublished(key)).toBe(true);
      expect(await repo.getVerdict(key)).toEqual(verdictFixture(key, { execution: "NOT_APPLICABLE", published: true }));
      expect(await repo.markPublished(key64(8))).toBe(false);
      expect(await repo.getVerdict(key64(8))).toBeUndefined();
    });

    it("answers true to exactly one of the calls that mark a verdict published (a redelivery gets false)", async () => {
      const repo = await factory();
      const key = key64(9);
      await repo.putVerdictOnce(verdictFixture(key, { execution: "NOT_APPLICABLE" }));
      const racing = await Promise.all([repo.markPublished(key), repo.markPublished(key), repo.markPublished(key)]);
      expect(racing.filter(Boolean)).toHaveLength(1);
      expect(await repo.markPublished(key)).toBe(false);
      expect((await repo.getVerdict(key))?.published).toBe(true);
    });
  });
}

// ── ReviewRepository ─────────────────────────────────────────────────────────────────────────

/** The ReviewRepository contract (docs/reviews.md): one review per claim, decided once, listed oldest first. */
export function describeReviewRepositoryContract(name: string, factory: PortFactory<ReviewRepository>): void {
  describe(`ReviewRepository contract: ${name}`, () => {
    it("opens a review once per claim and returns the stored one to a second opener", async () => {
      const repo = await factory();
      expect(await repo.getReview("clm_1")).toBeUndefined();
      const first = reviewFixture();
      expect(await repo.openReview(first)).toEqual(first);
      expect(await repo.openReview(reviewFixture({ reason: "another" }))).toEqual(first);
      expect(await repo.getReview("clm_1")).toEqual(first);
    });

    it("updates on the version it read, so exactly one of racing decisions wins", async () => {
      const repo = await factory();
      await repo.openReview(reviewFixture());
      const attempts = await Promise.all(
        (["APPROVE", "DENY", "APPROVE", "DENY"] as const).map((decision) =>
          repo.updateReview({ ...reviewFixture(), intent: { decision }, version: 2 }),
        ),
      );
      expect(attempts.filter((a) => a.changed)).toHaveLength(1);
      const stored = await repo.getReview("clm_1");
      expect(stored?.version).toBe(2);
      for (const a of attempts.filter((x) => !x.changed)) expect(a.review).toEqual(stored);
      expect(await repo.updateReview({ ...reviewFixture(), status: "DENIED", version: 5 })).toEqual({
        changed: false,
        review: stored,
      });
      expect(await repo.updateReview({ ...reviewFixture({ claim_id: "clm_none" }), version: 2 })).toEqual({
        changed: false,
        review: undefined,
      });
    });

    it("lists by status, oldest request first, in pages, and moves a decided review out of PENDING", async () => {
      const repo = await factory();
      for (const [i, id] of ["c", "a", "b", "d"].entries())
        await repo.openReview(
          reviewFixture({ claim_id: `clm_${id}`, review_id: `rev_${id}`, requested_at: `2025-03-01T10:00:0${i}.000Z` }),
        );
      const first = await repo.listReviews({ status: "PENDING", limit: 3 });
      expect(first.items.map((r) => r.claim_id)).toEqual(["clm_c", "clm_a", "clm_b"]);
      expect(first.nextCursor).toBeDefined();
      const second = await repo.listReviews({ status: "PENDING", limit: 3, cursor: first.nextCursor! });
      expect(second.items.map((r) => r.claim_id)).toEqual(["clm_d"]);
      expect(second.nextCursor).toBeUndefined();
      const a = (await repo.getReview("clm_a"))!;
      await repo.updateReview({ ...a, status: "DENIED", decision: "DENY", version: a.version + 1 });
      expect((await repo.listReviews({ status: "PENDING", limit: 10 })).items.map((r) => r.claim_id)).toEqual([
        "clm_c",
        "clm_b",
        "clm_d",
      ]);
      expect((await repo.listReviews({ status: "DENIED", limit: 10 })).items.map((r) => r.claim_id)).toEqual(["clm_a"]);
    });
  });
}

// ── RefundLedger ─────────────────────────────────────────────────────────────────────────────

/** The RefundLedger contract (docs/kernel.md). */
export function describeRefundLedgerContract(name: string, factory: PortFactory<RefundLedger>): void {
  /** Automatic refunds with a limit far above every amount here, unless a test is about the limit. */
  const AUTO: ReserveMode = { kind: "automatic", limitCents: 1_000_000 };
  const APPROVED: ReserveMode = { kind: "approved" };
  const reserve = (
    ledger: RefundLedger,
    orderId: string,
    claimId: string,
    cents: number,
    orderCents: number,
    mode: ReserveMode = AUTO,
    scope?: string,
  ) => ledger.reserve({ orderId, claimId, cents, orderCents, mode, ...(scope === undefined ? {} : { scope }) });

  describe(`RefundLedger contract: ${name}`, () => {
    it("has no entry for an order nothing was refunded on", async () => {
      const ledger = await factory();
      expect(await ledger.get("ord_1")).toBeUndefined();
    });

    it("reserves for several claims up to exactly the order amount", async () => {
      const ledger = await factory();
      expect(await reserve(ledger, "ord_1", "clm_a", 600, 1000)).toEqual({
        ok: true,
        entry: { order_id: "ord_1", refunded_cents: 600, claims: { clm_a: 600 }, automatic_cents: 600 },
      });
      expect(await reserve(ledger, "ord_1", "clm_b", 400, 1000)).toEqual({
        ok: true,
        entry: { order_id: "ord_1", refunded_cents: 1000, claims: { clm_a: 600, clm_b: 400 }, automatic_cents: 1000 },
      });
      expect(await ledger.get("ord_1")).toEqual({
        order_id: "ord_1",
        refunded_cents: 1000,
        claims: { clm_a: 600, clm_b: 400 },
        automatic_cents: 1000,
      });
    });

    it.each([
      { label: "the same claim again", claim: "clm_a", cents: 100, code: "ALREADY_REFUNDED_FOR_CLAIM" },
      {
        label: "the same claim again, for an amount over the rest",
        claim: "clm_a",
        cents: 900,
        code: "ALREADY_REFUNDED_FOR_CLAIM",
      },
      { label: "another claim over the rest", claim: "clm_b", cents: 401, code: "EXCEEDS_ORDER_AMOUNT" },
      { label: "another claim over the whole order", claim: "clm_b", cents: 5000, code: "EXCEEDS_ORDER_AMOUNT" },
    ])("refuses $label with $code and the entry as it stands", async ({ claim, cents, code }) => {
      const ledger = await factory();
      await reserve(ledger, "ord_1", "clm_a", 600, 1000);
      const entry = { order_id: "ord_1", refunded_cents: 600, claims: { clm_a: 600 }, automatic_cents: 600 };
      const out = await reserve(ledger, "ord_1", claim, cents, 1000);
      expect(out).toMatchObject({ ok: false, code, entry });
      expect(out.ok ? "" : out.message).toMatch(
        code === "EXCEEDS_ORDER_AMOUNT" ? /exceeds the order amount/ : /already refunded/,
      );
      expect(await ledger.get("ord_1")).toEqual(entry);
    });

    it("refuses a first reservation over the order amount and stores nothing", async () => {
      const ledger = await factory();
      const out = await reserve(ledger, "ord_1", "clm_a", 1001, 1000);
      expect(out).toMatchObject({
        ok: false,
        code: "EXCEEDS_ORDER_AMOUNT",
        entry: { order_id: "ord_1", refunded_cents: 0, claims: {} },
      });
      expect(await ledger.get("ord_1")).toBeUndefined();
    });

    it.each([
      ["zero cents", "clm_a", 0, 1000],
      ["negative cents", "clm_a", -5, 1000],
      ["fractional cents", "clm_a", 1.5, 1000],
      ["an empty claim id", "", 100, 1000],
      ["a zero order amount", "clm_a", 100, 0],
    ])("throws for %s", async (_label, claim, cents, orderCents) => {
      const ledger = await factory();
      await expect(reserve(ledger, "ord_1", claim, cents, orderCents)).rejects.toMatchObject({
        code: "LEDGER_INVARIANT",
      });
      expect(await ledger.get("ord_1")).toBeUndefined();
    });

    it("never exceeds the order when 50 claims reserve at once", async () => {
      const ledger = await factory();
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => reserve(ledger, "ord_hot", `clm_${i}`, 300, 10_000)),
      );
      const granted = results.filter((r) => r.ok);
      expect(granted).toHaveLength(33);
      expect(results.filter((r) => !r.ok).every((r) => !r.ok && r.code === "EXCEEDS_ORDER_AMOUNT")).toBe(true);
      const entry = (await ledger.get("ord_hot"))!;
      assertLedgerEntry(entry);
      expect(entry.refunded_cents).toBe(9_900);
      expect(Object.keys(entry.claims)).toHaveLength(33);
    });

    it("reserves the same claim once when it races with itself", async () => {
      const ledger = await factory();
      const results = await Promise.all(
        Array.from({ length: 10 }, () => reserve(ledger, "ord_1", "clm_same", 250, 10_000)),
      );
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      expect(results.filter((r) => !r.ok && r.code === "ALREADY_REFUNDED_FOR_CLAIM")).toHaveLength(9);
      expect(await ledger.get("ord_1")).toEqual({
        order_id: "ord_1",
        refunded_cents: 250,
        claims: { clm_same: 250 },
        automatic_cents: 250,
      });
    });

    it("reserves an approval decided on the order's approvals only while it holds that many (APPROVALS_CHANGED otherwise)", async () => {
      const ledger = await factory();
      expect(await reserve(ledger, "ord_1", "clm_a", 100, 1000, { kind: "approved", approvedCount: 0 })).toMatchObject({
        ok: true,
      });
      // Two approvals decided on the order with one approval: the first lands, the second is decided again.
      const raced = await Promise.all([
        reserve(ledger, "ord_1", "clm_b", 100, 1000, { kind: "approved", approvedCount: 1 }),
        reserve(ledger, "ord_1", "clm_c", 100, 1000, { kind: "approved", approvedCount: 1 }),
      ]);
      expect(raced.filter((r) => r.ok)).toHaveLength(1);
      expect(raced.filter((r) => !r.ok && r.code === "APPROVALS_CHANGED")).toHaveLength(1);
      expect(await reserve(ledger, "ord_1", "clm_d", 100, 1000, { kind: "approved", approvedCount: 0 })).toMatchObject({
        ok: false,
        code: "APPROVALS_CHANGED",
      });
      expect(await reserve(ledger, "ord_1", "clm_d", 100, 1000, { kind: "approved", approvedCount: 2 })).toMatchObject({
        ok: true,
      });
      expect((await ledger.get("ord_1"))?.refunded_cents).toBe(300);
    });

    // ── orders with lines (docs/orders.md#refunds-per-line) ──
    // ord_L: TV l1 49900, shirts l2 4000, shipping 999 (refunded with the last line when the policy says so).
    const PAID = { l1: 49_900, l2: 4_000 };
    const onLine = (claimed: Record<string, number> | undefined, shipping = 0): LineReserve => ({
      paid: PAID,
      shipping,
      ...(claimed ? { claimed } : {}),
    });
    const reserveLines = (
      ledger: RefundLedger,
      claimId: string,
      cents: number,
      lines: LineReserve,
      mode: ReserveMode = AUTO,
      orderCents = 53_900 + lines.shipping,
    ) => ledger.reserve({ orderId: "ord_L", claimId, cents, orderCents, mode, lines });

    it("keeps each line of an order at most what was paid for it over all claims (EXCEEDS_LINE_AMOUNT)", async () => {
      const ledger = await factory();
      expect(await reserveLines(ledger, "clm_a", 2_000, onLine({ l2: 2_000 }))).toEqual({
        ok: true,
        entry: {
          order_id: "ord_L",
          refunded_cents: 2_000,
          claims: { clm_a: 2_000 },
          automatic_cents: 2_000,
          line_cents: { l2: 2_000 },
          claim_lines: { clm_a: { lines: { l2: 2_000 } } },
        },
      });
      // The order has 51 900 left, the shirts' line 2 000: one cent more than the line is refused, whatever the order.
      const over = await reserveLines(ledger, "clm_b", 2_001, onLine({ l2: 2_001 }));
      expect(over).toMatchObject({ ok: false, code: "EXCEEDS_LINE_AMOUNT", entry: { refunded_cents: 2_000 } });
      expect(over.ok ? "" : over.message).toMatch(
        /line l2 of order ord_L exceeds what was paid for it \(4000; already refunded 2000\)/,
      );
      // A person's approval never passes a line either.
      expect(await reserveLines(ledger, "clm_b", 2_001, onLine({ l2: 2_001 }), APPROVED)).toMatchObject({
        ok: false,
        code: "EXCEEDS_LINE_AMOUNT",
      });
      expect(await reserveLines(ledger, "clm_b", 2_000, onLine({ l2: 2_000 }))).toMatchObject({ ok: true });
      // The other line is judged against its own amount.
      expect(await reserveLines(ledger, "clm_c", 49_900, onLine({ l1: 49_900 }))).toMatchObject({
        ok: true,
        entry: { refunded_cents: 53_900, line_cents: { l1: 49_900, l2: 4_000 } },
      });
      const entry = (await ledger.get("ord_L"))!;
      assertLedgerEntry(entry);
      expect(entry.claim_lines).toEqual({
        clm_a: { lines: { l2: 2_000 } },
        clm_b: { lines: { l2: 2_000 } },
        clm_c: { lines: { l1: 49_900 } },
      });
    });

    it("refunds shipping only when the policy allows it, with the order's last line, once (SHIPPING_NOT_REFUNDABLE)", async () => {
      const ledger = await factory();
      // refund_shipping: never — nothing beyond the lines.
      const never = await reserveLines(ledger, "clm_a", 4_999, onLine({ l2: 4_000 }));
      expect(never).toMatchObject({ ok: false, code: "SHIPPING_NOT_REFUNDABLE" });
      expect(never.ok ? "" : never.message).toMatch(/the policy does not refund shipping/);
      // with_last_line: not with the first line…
      const first = await reserveLines(ledger, "clm_a", 4_999, onLine({ l2: 4_000 }, 999));
      expect(first).toMatchObject({ ok: false, code: "SHIPPING_NOT_REFUNDABLE" });
      expect(first.ok ? "" : first.message).toMatch(/only with the order's last line/);
      expect(await reserveLines(ledger, "clm_a", 4_000, onLine({ l2: 4_000 }, 999))).toMatchObject({ ok: true });
      // …with the last one, and not more than was paid for it.
      expect(await reserveLines(ledger, "clm_b", 50_900, onLine({ l1: 49_900 }, 999))).toMatchObject({
        ok: false,
        code: "EXCEEDS_ORDER_AMOUNT",
      });
      expect(await reserveLines(ledger, "clm_b", 50_899, onLine({ l1: 49_900 }, 999))).toMatchObject({
        ok: true,
        entry: { refunded_cents: 54_899, shipping_cents: 999, line_cents: { l1: 49_900, l2: 4_000 } },
      });
      expect((await ledger.get("ord_L"))?.claim_lines?.clm_b).toEqual({ lines: { l1: 49_900 }, shipping: 999 });
    });

    it("counts a reservation whose line is not known against every line, and a release gives back exactly its counts", async () => {
      const ledger = await factory();
      // A person approved 3 000 on a claim the kernel could not place: it could be on either line.
      expect(await reserveLines(ledger, "clm_amb", 3_000, onLine(undefined, 999), APPROVED)).toMatchObject({
        ok: true,
        entry: { line_cents: { l1: 3_000, l2: 3_000 }, shipping_cents: 999, refunded_cents: 3_000 },
      });
      // So the shirts' line has at most 1 000 left for anyone.
      expect(await reserveLines(ledger, "clm_b", 1_001, onLine({ l2: 1_001 }, 999))).toMatchObject({
        ok: false,
        code: "EXCEEDS_LINE_AMOUNT",
      });
      expect(await reserveLines(ledger, "clm_b", 1_000, onLine({ l2: 1_000 }, 999))).toMatchObject({ ok: true });
      await ledger.releaseRefund("ord_L", "clm_amb");
      await ledger.releaseRefund("ord_L", "clm_amb");
      expect(await ledger.get("ord_L")).toEqual({
        order_id: "ord_L",
        refunded_cents: 1_000,
        claims: { clm_b: 1_000 },
        automatic_cents: 1_000,
        line_cents: { l2: 1_000 },
        claim_lines: { clm_b: { lines: { l2: 1_000 } } },
        released: ["clm_amb"],
      });
      expect(await reserveLines(ledger, "clm_c", 3_000, onLine({ l2: 3_000 }, 999))).toMatchObject({ ok: true });
    });

    it("reserves on a line after a review marked the order (the entry exists without line counts)", async () => {
      const ledger = await factory();
      await ledger.markReviewPending("ord_L", "clm_esc");
      expect(await reserveLines(ledger, "clm_esc", 1_500, onLine({ l2: 1_500 }), APPROVED)).toMatchObject({
        ok: true,
        entry: { refunded_cents: 1_500, line_cents: { l2: 1_500 }, approved: ["clm_esc"] },
      });
      expect((await ledger.get("ord_L"))?.pending_reviews).toBeUndefined();
      // A claim whose line is not known, approved on the same entry, counts on every line; the race for it reads again.
      await ledger.markReviewPending("ord_L", "clm_amb");
      const [amb, x] = await Promise.all([
        reserveLines(ledger, "clm_amb", 3_000, onLine(undefined), APPROVED),
        reserveLines(ledger, "clm_x", 500, onLine({ l2: 500 }), APPROVED),
      ]);
      // Whichever lands first, the shirts' line ends full and never above it: x fits before amb, not after it.
      expect(amb).toMatchObject({ ok: true });
      expect(x.ok || x.code === "EXCEEDS_LINE_AMOUNT").toBe(true);
      const entry = (await ledger.get("ord_L"))!;
      assertLedgerEntry(entry);
      expect(entry).toMatchObject({
        refunded_cents: 1_500 + 3_000 + (x.ok ? 500 : 0),
        line_cents: { l1: 3_000, l2: 4_000 },
      });
    });

    it("never over-refunds a line when claims on it race: exactly what the line holds is reserved", async () => {
      const ledger = await factory();
      // 12 claims of 1 000 on the 4 000 shirts' line at once (the order has room for all of them), beside 6 of
      // 8 000 on the TV's 49 900 (all fit): the lines' writes race on one item.
      const results = await Promise.all([
        ...Array.from({ length: 12 }, (_, i) => reserveLines(ledger, `clm_s${i}`, 1_000, onLine({ l2: 1_000 }))),
        ...Array.from({ length: 6 }, (_, i) => reserveLines(ledger, `clm_t${i}`, 8_000, onLine({ l1: 8_000 }))),
      ]);
      const shirts = results.slice(0, 12);
      expect(shirts.filter((r) => r.ok)).toHaveLength(4);
      expect(shirts.filter((r) => !r.ok).every((r) => !r.ok && r.code === "EXCEEDS_LINE_AMOUNT")).toBe(true);
      expect(results.slice(12).every((r) => r.ok)).toBe(true);
      const entry = (await ledger.get("ord_L"))!;
      assertLedgerEntry(entry);
      expect(entry).toMatchObject({ refunded_cents: 52_000, line_cents: { l1: 48_000, l2: 4_000 } });
    });

    it("keeps orders and ledger scopes apart and accepts claim ids with dots, slashes and spaces", async () => {
      const ledger = await factory();
      await reserve(ledger, "ord_1", "clm.a/b c", 100, 1000);
      await reserve(ledger, "ord_2", "clm.a/b c", 200, 1000);
      await reserve(ledger, "ord_1", "clm.a/b c", 300, 1000, AUTO, "sim_1");
      expect(await ledger.get("ord_1")).toEqual({
        order_id: "ord_1",
        refunded_cents: 100,
        claims: { "clm.a/b c": 100 },
        automatic_cents: 100,
      });
      expect(await ledger.get("ord_2")).toEqual({
        order_id: "ord_2",
        refunded_cents: 200,
        claims: { "clm.a/b c": 200 },
        automatic_cents: 200,
      });
      expect(await ledger.get("ord_1", "sim_1")).toEqual({
        order_id: "ord_1",
        refunded_cents: 300,
        claims: { "clm.a/b c": 300 },
        automatic_cents: 300,
      });
      expect(await ledger.get("ord_2", "sim_1")).toBeUndefined();
    });

    it("keeps automatic refunds on an order within the limit in total: a split claim reaches a human", async () => {
      const ledger = await factory();
      const limited: ReserveMode = { kind: "automatic", limitCents: 50_000 };
      expect(await reserve(ledger, "ord_1", "clm_a", 50_000, 120_000, limited)).toMatchObject({ ok: true });
      expect(await reserve(ledger, "ord_1", "clm_b", 1, 120_000, limited)).toMatchObject({
        ok: false,
        code: "EXCEEDS_AUTOMATIC_LIMIT",
      });
      // A reviewer's approval is not automatic: it lifts the limit, never the order amount.
      expect(await reserve(ledger, "ord_1", "clm_c", 70_000, 120_000, APPROVED)).toMatchObject({
        ok: true,
        entry: { refunded_cents: 120_000, automatic_cents: 50_000, approved: ["clm_c"] },
      });
      expect(await reserve(ledger, "ord_1", "clm_d", 1, 120_000, APPROVED)).toMatchObject({
        ok: false,
        code: "EXCEEDS_ORDER_AMOUNT",
      });
    });

    it("lets exactly limit / amount automatic refunds through when 30 race on one order", async () => {
      const ledger = await factory();
      const limited: ReserveMode = { kind: "automatic", limitCents: 500 };
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) => reserve(ledger, "ord_hot", `clm_${i}`, 100, 100_000, limited)),
      );
      expect(results.filter((r) => r.ok)).toHaveLength(5);
      expect(results.filter((r) => !r.ok).every((r) => !r.ok && r.code === "EXCEEDS_AUTOMATIC_LIMIT")).toBe(true);
      expect(await ledger.get("ord_hot")).toMatchObject({ refunded_cents: 500, automatic_cents: 500 });
    });

    it("refuses automatic refunds while another claim on the order awaits a review, and an approval closes that review", async () => {
      const ledger = await factory();
      await ledger.markReviewPending("ord_1", "clm_escalated");
      await ledger.markReviewPending("ord_1", "clm_escalated");
      expect(await ledger.get("ord_1")).toEqual({
        order_id: "ord_1",
        refunded_cents: 0,
        claims: {},
        pending_reviews: ["clm_escalated"],
      });
      expect(await reserve(ledger, "ord_1", "clm_next", 100, 1000)).toMatchObject({
        ok: false,
        code: "REVIEW_PENDING_ON_ORDER",
      });
      expect(await reserve(ledger, "ord_1", "clm_escalated", 700, 1000, APPROVED)).toEqual({
        ok: true,
        entry: { order_id: "ord_1", refunded_cents: 700, claims: { clm_escalated: 700 }, approved: ["clm_escalated"] },
      });
      expect(await reserve(ledger, "ord_1", "clm_next", 100, 1000)).toMatchObject({
        ok: true,
        entry: { refunded_cents: 800, automatic_cents: 100 },
      });
      // A claim that holds a refund never goes back to awaiting a review.
      await ledger.markReviewPending("ord_1", "clm_next");
      expect((await ledger.get("ord_1"))?.pending_reviews).toBeUndefined();
    });

    it("releases a claim's reservation (a failed refund closed unpaid) idempotently, binding nothing", async () => {
      const ledger = await factory();
      await reserve(ledger, "ord_1", "clm_auto", 300, 1000);
      await reserve(ledger, "ord_1", "clm_appr", 500, 1000, { kind: "approved" });
      await reserve(ledger, "ord_1", "clm_keep", 100, 1000);
      await ledger.releaseRefund("ord_1", "clm_auto");
      await ledger.releaseRefund("ord_1", "clm_auto");
      await ledger.releaseRefund("ord_1", "clm_appr");
      expect(await ledger.get("ord_1")).toEqual({
        order_id: "ord_1",
        refunded_cents: 100,
        claims: { clm_keep: 100 },
        automatic_cents: 100,
        released: ["clm_appr", "clm_auto"],
      });
      // The released money is refundable again, automatically too: nothing binds the order.
      expect(await reserve(ledger, "ord_1", "clm_next", 900, 1000)).toMatchObject({ ok: true });
    });

    it("never reserves a released claim again, in either mode: a repaired approval cannot bring back a CLOSEd refund's reservation (issue 39)", async () => {
      const ledger = await factory();
      await reserve(ledger, "ord_1", "clm_appr", 500, 1000, { kind: "approved" });
      await ledger.releaseRefund("ord_1", "clm_appr");
      for (const mode of [{ kind: "approved" } as const, undefined])
        expect(await reserve(ledger, "ord_1", "clm_appr", 500, 1000, mode)).toMatchObject({
          ok: false,
          code: "ALREADY_REFUNDED_FOR_CLAIM",
          entry: { refunded_cents: 0, released: ["clm_appr"] },
        });
      // A release of a claim that holds nothing (on an order with no entry yet) records it all the same.
      await ledger.releaseRefund("ord_2", "clm_x");
      expect(await ledger.get("ord_2")).toEqual({
        order_id: "ord_2",
        refunded_cents: 0,
        claims: {},
        released: ["clm_x"],
      });
      expect(await reserve(ledger, "ord_2", "clm_x", 100, 1000, { kind: "approved" })).toMatchObject({
        ok: false,
        code: "ALREADY_REFUNDED_FOR_CLAIM",
      });
      expect(await reserve(ledger, "ord_2", "clm_y", 100, 1000)).toMatchObject({ ok: true });
      expect(await ledger.get("ord_2")).toMatchObject({ claims: { clm_y: 100 }, released: ["clm_x"] });
    });

    it("clears a pending review idempotently, also on an order with no entry", async () => {
      const ledger = await factory();
      await ledger.clearReviewPending("ord_none", "clm_x");
      expect(await ledger.get("ord_none")).toBeUndefined();
      await ledger.markReviewPending("ord_1", "clm_a");
      await ledger.markReviewPending("ord_1", "clm_b");
      await ledger.clearReviewPending("ord_1", "clm_a");
      await ledger.clearReviewPending("ord_1", "clm_a");
      expect((await ledger.get("ord_1"))?.pending_reviews).toEqual(["clm_b"]);
      await ledger.clearReviewPending("ord_1", "clm_b");
      expect(await ledger.get("ord_1")).toBeUndefined();
      expect(await reserve(ledger, "ord_1", "clm_c", 100, 1000)).toMatchObject({ ok: true });
    });

    it("records a person's decision with the review's mark cleared in one change, idempotently, and no automatic refund after it", async () => {
      const ledger = await factory();
      await ledger.markReviewPending("ord_1", "clm_denied");
      const deny = { claim_id: "clm_denied", decision: "DENY" as const };
      await ledger.clearReviewPending("ord_1", "clm_denied", undefined, deny);
      await ledger.clearReviewPending("ord_1", "clm_denied", undefined, deny);
      const entry = await ledger.get("ord_1");
      expect(entry).toEqual({ order_id: "ord_1", refunded_cents: 0, claims: {}, decisions: [deny] });
      assertLedgerEntry(entry!);
      expect(await reserve(ledger, "ord_1", "clm_next", 100, 1000)).toMatchObject({
        ok: false,
        code: "PRIOR_DECISION_ON_ORDER",
      });
      // A person may still approve on it; a reduced approval on another order binds that order too, on an order with no entry yet.
      expect(await reserve(ledger, "ord_1", "clm_next", 100, 1000, APPROVED)).toMatchObject({ ok: true });
      const partial = {
        claim_id: "clm a/b.c",
        decision: "APPROVE" as const,
        approved_cents: 900,
        proposed_cents: 1200,
      };
      await ledger.clearReviewPending("ord_2", "clm a/b.c", "sim_1", partial);
      expect(await ledger.get("ord_2", "sim_1")).toEqual({
        order_id: "ord_2",
        refunded_cents: 0,
        claims: {},
        decisions: [partial],
      });
      expect(await ledger.get("ord_2")).toBeUndefined();
      expect(await reserve(ledger, "ord_2", "clm_other", 100, 100_000, AUTO, "sim_1")).toMatchObject({
        ok: false,
        code: "PRIOR_DECISION_ON_ORDER",
      });
    });

    const LIMITS = { window_days: 30, max_automatic_refunds: 3, max_automatic_eur: 500 };
    const AT = "2026-03-16T10:00:00.000Z";
    const onWindow = (l: RefundLedger, claim: string, cents: number, at = AT, scope?: string) =>
      l.reserveCustomer({
        customerId: "cus_1",
        reservation: { claim_id: claim, order_id: `ord_${claim}`, cents, at },
        limits: LIMITS,
        ...(scope === undefined ? {} : { scope }),
      });

    it("reserves on a customer's window up to exactly the limits, repeats idempotently, releases idempotently", async () => {
      const ledger = await factory();
      expect(await ledger.getCustomerWindow("cus_1")).toBeUndefined();
      expect(await onWindow(ledger, "c1", 20_000)).toMatchObject({ ok: true, repeat: false });
      expect(await onWindow(ledger, "c1", 20_000)).toMatchObject({ ok: true, repeat: true });
      expect(await onWindow(ledger, "c2", 30_001)).toMatchObject({ ok: false, code: "CUSTOMER_LIMIT_EXCEEDED" });
      expect(await onWindow(ledger, "c2", 20_000)).toMatchObject({ ok: true });
      expect(await onWindow(ledger, "c3", 10_000)).toMatchObject({ ok: true });
      expect(await onWindow(ledger, "c4", 1)).toMatchObject({ ok: false, code: "CUSTOMER_LIMIT_EXCEEDED" });
      const window = await ledger.getCustomerWindow("cus_1");
      expect(window?.reservations.map((r) => [r.claim_id, r.cents])).toEqual([
        ["c1", 20_000],
        ["c2", 20_000],
        ["c3", 10_000],
      ]);
      await ledger.releaseCustomer("cus_1", "c3");
      await ledger.releaseCustomer("cus_1", "c3");
      await ledger.releaseCustomer("cus_none", "c3");
      expect((await ledger.getCustomerWindow("cus_1"))?.reservations.map((r) => r.claim_id)).toEqual(["c1", "c2"]);
      expect(await onWindow(ledger, "c4", 10_000)).toMatchObject({ ok: true });
      // Another scope is another window.
      expect(await onWindow(ledger, "c9", 50_000, AT, "sim_1")).toMatchObject({ ok: true });
      expect((await ledger.getCustomerWindow("cus_1"))?.reservations).toHaveLength(3);
    });

    it("lets exactly max_automatic_refunds through when 12 claims of one customer race, and counts the lost races", async () => {
      const ledger = await factory();
      const results = await Promise.all(Array.from({ length: 12 }, (_, i) => onWindow(ledger, `c${i}`, 100)));
      expect(results.filter((r) => r.ok)).toHaveLength(3);
      expect(results.filter((r) => !r.ok).every((r) => !r.ok && r.code === "CUSTOMER_LIMIT_EXCEEDED")).toBe(true);
      expect((await ledger.getCustomerWindow("cus_1"))?.reservations).toHaveLength(3);
      expect(results.every((r) => r.conflicts >= 0)).toBe(true);
    });

    const approvedOnWindow = (l: RefundLedger, claim: string, cents: number, by: string[], approvals?: number) =>
      l.reserveCustomer({
        customerId: "cus_1",
        reservation: { claim_id: claim, order_id: `ord_${claim}`, cents, at: AT, approved_by: by },
        limits: LIMITS,
        ...(approvals === undefined ? {} : { approvals }),
      });

    it("records approved refunds on the window beside the automatic ones, never against the automatic limits", async () => {
      const ledger = await factory();
      // 900 EUR approved (alone, then by two): far above max_automatic_eur 500, and not limited by it.
      expect(await approvedOnWindow(ledger, "a1", 60_000, ["alice"], 0)).toMatchObject({ ok: true, repeat: false });
      expect(await approvedOnWindow(ledger, "a2", 30_000, ["alice", "bob"], 1)).toMatchObject({ ok: true });
      expect(await approvedOnWindow(ledger, "a2", 30_000, ["alice", "bob"], 1)).toMatchObject({
        ok: true,
        repeat: true,
      });
      // The automatic limits still see no refund: 3 automatic refunds of 500 EUR in all pass, a fourth does not.
      expect(await onWindow(ledger, "c1", 20_000)).toMatchObject({ ok: true });
      expect(await onWindow(ledger, "c2", 20_000)).toMatchObject({ ok: true });
      expect(await onWindow(ledger, "c3", 10_000)).toMatchObject({ ok: true });
      expect(await onWindow(ledger, "c4", 1)).toMatchObject({ ok: false, code: "CUSTOMER_LIMIT_EXCEEDED" });
      const window = await ledger.getCustomerWindow("cus_1");
      expect(window?.approvals).toBe(2);
      expect(window?.reservations.filter((r) => r.approved_by).map((r) => [r.claim_id, r.approved_by])).toEqual([
        ["a1", ["alice"]],
        ["a2", ["alice", "bob"]],
      ]);
      // A release takes the approved refund out; the count of approvals recorded never goes down.
      await ledger.releaseCustomer("cus_1", "a1");
      expect(await ledger.getCustomerWindow("cus_1")).toMatchObject({ approvals: 2 });
      expect((await ledger.getCustomerWindow("cus_1"))?.reservations.map((r) => r.claim_id)).toEqual([
        "a2",
        "c1",
        "c2",
        "c3",
      ]);
    });

    it("reserves an approval decided on the window's approvals only while it holds that many (APPROVALS_CHANGED otherwise)", async () => {
      const ledger = await factory();
      expect(await approvedOnWindow(ledger, "a1", 100, ["alice"], 0)).toMatchObject({ ok: true });
      // Two approvals decided on a window with one approval: the first lands, the second is decided again.
      const raced = await Promise.all([
        approvedOnWindow(ledger, "a2", 100, ["alice"], 1),
        approvedOnWindow(ledger, "a3", 100, ["alice"], 1),
      ]);
      expect(raced.filter((r) => r.ok)).toHaveLength(1);
      expect(raced.filter((r) => !r.ok && r.code === "APPROVALS_CHANGED")).toHaveLength(1);
      expect(await approvedOnWindow(ledger, "a4", 100, ["alice"], 1)).toMatchObject({
        ok: false,
        code: "APPROVALS_CHANGED",
      });
      // An automatic refund in between changes nothing an approval was decided on.
      expect(await onWindow(ledger, "c1", 100)).toMatchObject({ ok: true });
      expect(await approvedOnWindow(ledger, "a4", 100, ["alice"], 2)).toMatchObject({ ok: true });
      expect((await ledger.getCustomerWindow("cus_1"))?.approvals).toBe(3);
    });
  });
}

// ── AuditLog ─────────────────────────────────────────────────────────────────────────────────

/** The AuditLog contract. */
export function describeAuditLogContract(name: string, factory: PortFactory<AuditLog>): void {
  describe(`AuditLog contract: ${name}`, () => {
    it("returns a flow's events in append order, including events whose root is the flow", async () => {
      const log = await factory();
      const t = "2025-03-01T10:00:00.000Z";
      const e1 = auditFixture("dfid_sim", t, { type: "SIMULATION_START", simulationId: "sim_1" });
      const e2 = auditFixture("dfid_clm_1", "2025-03-01T10:00:01.000Z", {
        type: "CLAIM_RECEIVED",
        rootDfid: "dfid_sim",
        simulationId: "sim_1",
      });
      const e3 = auditFixture("dfid_clm_1", "2025-03-01T10:00:02.000Z", {
        type: "CREW_STARTED",
        rootDfid: "dfid_sim",
        simulationId: "sim_1",
        details: { nested: { a: [1, "x", null] } },
      });
      const e4 = auditFixture("dfid_clm_2", "2025-03-01T10:00:01.500Z", { type: "CLAIM_RECEIVED" });
      for (const e of [e1, e2, e4, e3]) await log.append(e);
      expect(await log.byDfid("dfid_clm_1")).toEqual([e2, e3]);
      expect(await log.byDfid("dfid_sim")).toEqual([e1, e2, e3]);
      expect(await log.byDfid("dfid_clm_2")).toEqual([e4]);
      expect(await log.byDfid("dfid_none")).toEqual([]);
    });

    it("keeps append order among events with the same timestamp", async () => {
      const log = await factory();
      const t = "2025-03-01T10:00:00.000Z";
      const types = [
        "PROPOSAL_SUBMITTED",
        "KERNEL_VERDICT",
        "CLAIM_REFUND_EXECUTED",
        "AGENT_DECISION",
        "CLAIM_NEEDS_REVIEW",
      ] as const;
      const events = types.map((type) => auditFixture("dfid_clm_1", t, { type }));
      for (const e of events) await log.append(e);
      expect((await log.byDfid("dfid_clm_1")).map((e) => e.event_type)).toEqual([...types]);
    });

    it("answers a simulation's events across flows in append order", async () => {
      const log = await factory();
      const events = Array.from({ length: 6 }, (_, i) =>
        auditFixture(`dfid_clm_${i % 3}`, `2025-03-01T10:00:0${i}.000Z`, {
          rootDfid: "dfid_sim",
          simulationId: i < 5 ? "sim_1" : "sim_2",
          details: { i },
        }),
      );
      for (const e of events) await log.append(e);
      expect(await log.bySimulation("sim_1")).toEqual(events.slice(0, 5));
      expect(await log.bySimulation("sim_2")).toEqual(events.slice(5));
      expect(await log.bySimulation("sim_none")).toEqual([]);
    });

    it("refuses an invalid event and stores nothing", async () => {
      const log = await factory();
      const bad = {
        ...auditFixture("dfid_clm_1", "2025-03-01T10:00:00.000Z"),
        event_type: "NOT_A_TYPE",
      } as unknown as AuditEvent;
      await expect(log.append(bad)).rejects.toMatchObject({ code: "INVALID_AUDIT_EVENT" });
      expect(await log.byDfid("dfid_clm_1")).toEqual([]);
    });

    it("appends a step's events together: every query sees each one, in order, and a redelivered step once", async () => {
      const log = await factory();
      const t = "2025-03-01T10:00:00.000Z";
      const before = auditFixture("dfid_clm_1", "2025-03-01T09:59:59.000Z", {
        type: "AGENT_DECISION",
        rootDfid: "dfid_sim",
        simulationId: "sim_1",
      });
      const step = (["PROPOSAL_SUBMITTED", "KERNEL_VERDICT", "CLAIM_REFUND_EXECUTED"] as const).map((type) =>
        auditFixture("dfid_clm_1", t, { type, rootDfid: "dfid_sim", simulationId: "sim_1" }),
      );
      const other = auditFixture("dfid_clm_2", t, {
        type: "CLAIM_RECEIVED",
        rootDfid: "dfid_sim",
        simulationId: "sim_1",
      });
      await log.append(before);
      await log.appendAll([...step, other]);
      await log.appendAll(step);
      await log.append(step[1]!);
      expect(await log.byDfid("dfid_clm_1")).toEqual([before, ...step]);
      expect(await log.byDfid("dfid_clm_2")).toEqual([other]);
      expect((await log.byDfid("dfid_sim")).map((e) => e.event_type)).toEqual([
        "AGENT_DECISION",
        "PROPOSAL_SUBMITTED",
        "KERNEL_VERDICT",
        "CLAIM_REFUND_EXECUTED",
        "CLAIM_RECEIVED",
      ]);
      expect(await log.bySimulation("sim_1")).toHaveLength(5);
      await log.appendAll([]);
      expect(await log.bySimulation("sim_1")).toHaveLength(5);
    });

    it("refuses a step's events when one is invalid, and stores none of them", async () => {
      const log = await factory();
      const good = auditFixture("dfid_clm_1", "2025-03-01T10:00:00.000Z");
      const bad = {
        ...auditFixture("dfid_clm_1", "2025-03-01T10:00:00.000Z"),
        event_type: "NOT_A_TYPE",
      } as unknown as AuditEvent;
      await expect(log.appendAll([good, bad])).rejects.toMatchObject({ code: "INVALID_AUDIT_EVENT" });
      expect(await log.byDfid("dfid_clm_1")).toEqual([]);
    });
  });
}

// ── ContextStore ─────────────────────────────────────────────────────────────────────────────

/** The ContextStore contract; `factory` receives the orders the store must hold. */
/**
 * The served view (GET /reports) over a claim repository and an audit log of one backend: the most recent claims
 * sent without a simulation_id, found through the claims' listing, with their flows.
 */
export function describeServedViewContract(
  name: string,
  factory: () => Promise<{ claims: ClaimRepository; audit: AuditLog }>,
): void {
  describe(`served view contract: ${name}`, () => {
    it("answers the events of the most recent claims sent without a simulation_id, oldest receipt first", async () => {
      const { claims, audit } = await factory();
      const at = (s: number) => `2025-03-01T10:00:${String(s).padStart(2, "0")}.000Z`;
      // Four served claims (received at 1, 2, 3, 4 s) and a simulation claim received between them.
      const served = [1, 2, 3, 4].map((n) => claimFixture(`clm_srv_${n}`, { received_at: at(n), updated_at: at(n) }));
      const sim = claimFixture("clm_sim", { received_at: at(3), updated_at: at(3), simulation_id: "sim_1" });
      for (const c of [...served, sim]) await claims.createClaim(c);
      for (const c of [...served, sim]) {
        const simulationId = c.simulation_id ? { simulationId: c.simulation_id } : {};
        await audit.append(auditFixture(c.dfid, c.received_at, { type: "CLAIM_RECEIVED", ...simulationId }));
        await audit.append(auditFixture(c.dfid, c.received_at, { type: "CREW_STARTED", ...simulationId }));
      }
      // Claim 1's review is decided last; a resubmitted claim's event is also copied under its root flow (claim 2's).
      const late = auditFixture(served[0]!.dfid, at(9), { type: "REVIEW_DECIDED" });
      const child = auditFixture("dfid_clm_child", at(8), { type: "CLAIM_RECEIVED", rootDfid: served[1]!.dfid });
      await audit.append(late);
      await audit.append(child);
      const flows = async (limit: number) => [
        ...new Set((await recentServedEvents({ claims, audit }, limit)).map((e) => e.dfid)),
      ];
      expect(await flows(2)).toEqual([served[2]!.dfid, served[3]!.dfid]);
      expect(await flows(1)).toEqual([served[3]!.dfid]);
      expect(await flows(10)).toEqual(served.map((c) => c.dfid));
      const all = await recentServedEvents({ claims, audit }, 10);
      expect(all.filter((e) => e.event_type === "CREW_STARTED")).toHaveLength(4);
      expect(all.some((e) => e.details.simulation_id !== undefined || e.dfid === "dfid_clm_child")).toBe(false);
      expect(all.filter((e) => e.dfid === served[0]!.dfid).at(-1)).toEqual(late);
      expect(await recentServedEvents({ claims, audit }, 0)).toEqual([]);
    });

    it("pages through the claims listing past simulation claims", async () => {
      const { claims, audit } = await factory();
      const at = (ms: number) => new Date(Date.UTC(2025, 2, 1, 10) + ms).toISOString();
      const old = claimFixture("clm_old", { received_at: at(0), updated_at: at(0) });
      await claims.createClaim(old);
      await audit.append(auditFixture(old.dfid, old.received_at, { type: "CLAIM_RECEIVED" }));
      for (let i = 1; i <= 230; i++)
        await claims.createClaim(
          claimFixture(`clm_sim_${i}`, { received_at: at(i), updated_at: at(i), simulation_id: "sim_many" }),
        );
      expect((await recentServedEvents({ claims, audit }, 5)).map((e) => e.dfid)).toEqual([old.dfid]);
    });
  });
}

export function describeContextStoreContract(
  name: string,
  factory: (orders: readonly unknown[]) => Promise<ContextStore>,
): void {
  describe(`ContextStore contract: ${name}`, () => {
    it("reads an order by id (currency defaulted to EUR) and nothing for an unknown id", async () => {
      const store = await factory(ORDER_FIXTURES);
      expect(await store.getOrder("ord_a")).toEqual({ ...ORDER_FIXTURES[1], currency: "EUR" });
      expect(await store.getOrder("ord_b")).toEqual(ORDER_FIXTURES[0]);
      expect(await store.getOrder("ord_none")).toBeUndefined();
    });

    it("lists every order sorted by id", async () => {
      const store = await factory(ORDER_FIXTURES);
      const snapshot = await store.snapshot();
      expect(Object.keys(snapshot.orders)).toEqual(["ord_a", "ord_b", "ord_c"]);
      expect(snapshot.orders.ord_c).toEqual(ORDER_FIXTURES[2]);
    });

    it.each([
      ["a duplicate order id", [ORDER_FIXTURES[0], ORDER_FIXTURES[0]]],
      ["a relative purchase date", [{ ...ORDER_FIXTURES[0], purchase_date: "-3d" }]],
      ["an amount with fractions of a cent", [{ ...ORDER_FIXTURES[0], amount: 10.001 }]],
      ["a missing category", [{ order_id: "ord_x", purchase_date: "2025-01-01", amount: 5 }]],
    ])("refuses %s", async (_label, orders) => {
      await expect(factory(orders)).rejects.toThrow(/order/);
    });
  });
}

// ── SettlementRepository ────────────────────────────────────────────────────────────────────

/** A claim's settlement, PENDING at the provider, requested at second `i`; `overrides` replace fields. */
function settlementFixture(claimId: string, i: number, overrides: Partial<SettlementRecord> = {}): SettlementRecord {
  const at = `2026-11-27T10:00:${String(i).padStart(2, "0")}.000Z`;
  return {
    claim_id: claimId,
    dfid: `dfid_${claimId}`,
    order_id: `ord_${claimId}`,
    amount_eur: 50 + i,
    verdict_id: `vrd_${claimId}`,
    provider: "stripe",
    execution_id: `exe_${claimId}`,
    status: "PENDING",
    requested_at: at,
    updated_at: at,
    attempts: [],
    version: 1,
    ...overrides,
  };
}

/** The settlement refused by the provider, its review opened at second `reviewAt`, written as the next version. */
function failedWithReview(s: SettlementRecord, reviewAt: number): SettlementRecord {
  const at = `2026-11-27T11:00:${String(reviewAt).padStart(2, "0")}.000Z`;
  return {
    ...s,
    status: "FAILED",
    provider_ref: `re_${s.claim_id}`,
    failure_reason: "expired_card",
    updated_at: at,
    review: {
      review_id: `rev_${s.claim_id}`,
      origin: "REFUND_FAILED",
      execution_id: s.execution_id,
      status: "PENDING",
      reason_code: "REFUND_FAILED",
      reason: "The payment provider refused the refund: expired_card",
      requested_at: at,
    },
    version: s.version + 1,
  };
}

/**
 * The SettlementRepository contract (docs/payments.md): one settlement per claim, changed on the version it read;
 * every settlement listed for reconciliation, and the failed refunds' pending reviews listed by themselves, oldest
 * review first, in pages, leaving the listing in the write that decides them.
 */
export function describeSettlementRepositoryContract(name: string, factory: PortFactory<SettlementRepository>): void {
  describe(`SettlementRepository contract: ${name}`, () => {
    it("creates a settlement once per claim and changes it only on the version it read", async () => {
      const repo = await factory();
      const first = settlementFixture("clm_1", 1);
      expect(await repo.create(first)).toEqual(first);
      expect(await repo.create(settlementFixture("clm_1", 2, { amount_eur: 999 }))).toEqual(first);
      const failed = failedWithReview(first, 1);
      await repo.update(failed);
      expect(await repo.get("clm_1")).toEqual(failed);
      await expect(repo.update({ ...failed, status: "SETTLED" })).rejects.toThrow(VersionConflictError);
      expect(await repo.get("clm_1")).toEqual(failed);
      expect(await repo.get("clm_none")).toBeUndefined();
    });

    it("lists only the pending refund reviews, oldest review first, in pages, and drops a decided one", async () => {
      const repo = await factory();
      // Settlements requested in one order, failing (and opening their reviews) in another; two never fail.
      const ids = ["clm_a", "clm_b", "clm_c", "clm_d", "clm_e", "clm_f"];
      for (const [i, id] of ids.entries()) await repo.create(settlementFixture(id, i));
      const reviewAt: Record<string, number> = { clm_d: 1, clm_a: 2, clm_f: 3, clm_b: 4 };
      for (const [id, at] of Object.entries(reviewAt)) await repo.update(failedWithReview((await repo.get(id))!, at));
      const settledE = (await repo.get("clm_e"))!;
      await repo.update({ ...settledE, status: "SETTLED", version: settledE.version + 1 });

      const first = await repo.listPendingReviews({ limit: 3 });
      expect(first.items.map((s) => s.claim_id)).toEqual(["clm_d", "clm_a", "clm_f"]);
      expect(first.items[0]).toEqual(await repo.get("clm_d"));
      expect(first.nextCursor).toBe(pendingReviewKey(first.items[2]!));
      const second = await repo.listPendingReviews({ limit: 3, cursor: first.nextCursor! });
      expect(second.items.map((s) => s.claim_id)).toEqual(["clm_b"]);
      expect(second.nextCursor).toBeUndefined();
      const exact = await repo.listPendingReviews({ limit: 4 });
      expect(exact.items).toHaveLength(4);
      expect(exact.nextCursor).toBeUndefined();

      // Deciding a review (CLOSE here) takes it out of the listing; a retried refund that fails again comes back.
      const a = (await repo.get("clm_a"))!;
      await repo.update({
        ...a,
        review: { ...a.review!, status: "CLOSED", decision: "CLOSE" },
        version: a.version + 1,
      });
      const f = (await repo.get("clm_f"))!;
      const retried: SettlementRecord = {
        ...f,
        execution_id: "exe_clm_f_retry",
        status: "PENDING",
        review: { ...f.review!, status: "RETRIED", decision: "RETRY", retry_execution_id: "exe_clm_f_retry" },
        version: f.version + 1,
      };
      await repo.update(retried);
      expect((await repo.listPendingReviews({ limit: 10 })).items.map((s) => s.claim_id)).toEqual(["clm_d", "clm_b"]);
      // Both decisions are not yet marked performed: the sweep finds them, and nothing else, until they are.
      expect((await repo.listUnperformedReviews()).map((s) => s.claim_id)).toEqual(["clm_a", "clm_f"]);
      const closed = (await repo.get("clm_a"))!;
      await repo.update({ ...closed, review: { ...closed.review!, performed: true }, version: closed.version + 1 });
      expect((await repo.listUnperformedReviews()).map((s) => s.claim_id)).toEqual(["clm_f"]);
      await repo.update(failedWithReview(retried, 9));
      expect(await repo.listUnperformedReviews()).toEqual([]);
      expect((await repo.listPendingReviews({ limit: 10 })).items.map((s) => s.claim_id)).toEqual([
        "clm_d",
        "clm_b",
        "clm_f",
      ]);

      // Reconciliation still lists every settlement, oldest request first, whatever its review.
      expect((await repo.list()).map((s) => s.claim_id)).toEqual(ids);
    });

    it("lists only the unsettled refunds (pending, failed, retried), never a settled or closed one, oldest request first", async () => {
      const repo = await factory();
      const ids = ["clm_a", "clm_b", "clm_c", "clm_d", "clm_e"];
      for (const [i, id] of ids.entries()) await repo.create(settlementFixture(id, i));
      const settle = async (id: string) => {
        const s = (await repo.get(id))!;
        await repo.update({ ...s, status: "SETTLED", version: s.version + 1 });
      };
      await settle("clm_b");
      await repo.update(failedWithReview((await repo.get("clm_c"))!, 1));
      await repo.update(failedWithReview((await repo.get("clm_d"))!, 2));
      const d = (await repo.get("clm_d"))!;
      await repo.update({
        ...d,
        review: { ...d.review!, status: "CLOSED", decision: "CLOSE", paid_out_of_band: true, performed: true },
        version: d.version + 1,
      });
      expect((await repo.listUnsettled()).map((s) => s.claim_id)).toEqual(["clm_a", "clm_c", "clm_e"]);
      // A pending refund that settles leaves the listing; reconciliation still lists every one.
      await settle("clm_a");
      expect((await repo.listUnsettled()).map((s) => s.claim_id)).toEqual(["clm_c", "clm_e"]);
      expect((await repo.list()).map((s) => s.claim_id)).toEqual(ids);
    });
  });
}
