// In-memory implementations of the pipeline's ports: for the in-process runner, tests and benchmarks.
import {
  customerLimitsCents,
  assertLedgerEntry,
  clearReviewPending,
  emptyCustomerWindow,
  releaseFromWindow,
  reserveOnWindow,
  emptyLedgerEntry,
  markReviewPending,
  releaseRefund,
  reserveRefund,
  validateOrder,
  type CustomerWindow,
  type LedgerEntry,
} from "../core/kernel/index.ts";
import type { ClaimRecord, ClaimStatus } from "../core/kernel/claim-record.ts";
import type { ReviewRecord } from "../core/kernel/review.ts";
import { canonicalize } from "../core/crew/index.ts";
import { LedgerInvariantError, OrderDataError, parseAuditEvent } from "../core/integrity/index.ts";
import type { AuditEvent, ContextSnapshot, Order } from "../core/integrity/index.ts";
import type {
  AuditLog,
  ContextStore,
  RefundLedger,
  ReviewRepository,
  ClaimRepository,
  CreateClaimResult,
  EventPublisher,
  SessionRepository,
  SettlementRepository,
  StoredSession,
  StoredVerdict,
  VerdictRepository,
  WorkQueues,
} from "./ports.ts";
import {
  byRequest,
  checkClaimQuery,
  claimListKey,
  hasUnperformedReview,
  isUnsettled,
  matchesClaimQuery,
  pendingReviewKey,
  reviewListKey,
  splitSessionOutbox,
} from "./ports.ts";
import { VersionConflictError } from "../core/errors.ts";
import type { BusEntry } from "../core/kernel/events.ts";
import type { SettlementRecord } from "../core/kernel/settlement.ts";
import type { AgentStepMessage, CrewQueueMessage, ProposalMessage } from "./messages.ts";

const FINAL: readonly ClaimStatus[] = ["DECIDED", "NEEDS_REVIEW", "AWAITING_RETURN"];
const clone = <T>(v: T): T => structuredClone(v);

/** Claims in a Map, with idempotency keys. */
export function createInMemoryClaimRepository(): ClaimRepository & { all(): ClaimRecord[] } {
  const claims = new Map<string, ClaimRecord>();
  const keys = new Map<string, { claimId: string; requestHash: string }>();
  return {
    async createClaim(record, idempotency): Promise<CreateClaimResult> {
      if (idempotency) {
        const seen = keys.get(idempotency.key);
        if (seen)
          return {
            created: false,
            record: clone(claims.get(seen.claimId)!),
            sameRequest: seen.requestHash === idempotency.requestHash,
          };
      }
      if (claims.has(record.claim_id))
        return { created: false, record: clone(claims.get(record.claim_id)!), sameRequest: false };
      claims.set(record.claim_id, clone(record));
      if (idempotency) keys.set(idempotency.key, { claimId: record.claim_id, requestHash: idempotency.requestHash });
      return { created: true, record: clone(record) };
    },
    async getClaim(id) {
      const r = claims.get(id);
      return r ? clone(r) : undefined;
    },
    async updateClaim(id, patch, onlyFrom) {
      const r = claims.get(id);
      if (!r) return { record: undefined, changed: false };
      const allowed = onlyFrom ? onlyFrom.includes(r.status) : !FINAL.includes(r.status);
      if (!allowed) return { record: clone(r), changed: false };
      const next = { ...r, ...clone(patch) };
      claims.set(id, next);
      return { record: clone(next), changed: true };
    },
    async listClaims(query) {
      checkClaimQuery(query);
      const matching = [...claims.values()]
        .filter((c) => matchesClaimQuery(c, query))
        .sort((a, b) => (claimListKey(a) < claimListKey(b) ? 1 : -1));
      const items = matching.slice(0, query.limit).map(clone);
      return { items, ...(matching.length > query.limit ? { nextCursor: claimListKey(items.at(-1)!) } : {}) };
    },
    all: () => [...claims.values()].map(clone),
  };
}

/**
 * Sessions in a Map, with the version condition of the DynamoDB adapter; a save appends its outbox's own
 * audit events to `audit` (validated first); a failed append takes the save back. The outbox rule is the
 * adapter's: only the latest version's outbox loads, pending until `clearOutbox` of that version (the marker) —
 * a version never cleared is superseded by the next save, and a clear of an older version changes nothing. The
 * orchestrator clears only where nothing that comes later proves the outbox performed (pipeline/decide/outbox.ts).
 */
export function createInMemorySessionRepository(audit: AuditLog): SessionRepository {
  const sessions = new Map<string, StoredSession>();
  return {
    async loadSession(id) {
      const s = sessions.get(id);
      return s ? clone(s) : undefined;
    },
    async saveSession(session) {
      const current = sessions.get(session.claimId)?.version ?? 0;
      if (current !== session.version - 1)
        throw new VersionConflictError("session", session.claimId, session.version - 1);
      const { audit: events, rest } = splitSessionOutbox(session.claimId, session.outbox);
      const parsed = events.map((e) => parseAuditEvent(e));
      // Checked and stored at once (no await between: racing saves see each other); taken back if the append fails.
      const previous = sessions.get(session.claimId);
      const stored = clone({ ...session, outbox: rest });
      sessions.set(session.claimId, stored);
      try {
        if (parsed.length > 0) await audit.appendAll(parsed);
      } catch (error) {
        if (sessions.get(session.claimId) === stored) {
          if (previous) sessions.set(session.claimId, previous);
          else sessions.delete(session.claimId);
        }
        throw error;
      }
    },
    async clearOutbox(id, version) {
      const s = sessions.get(id);
      if (s && s.version === version) s.outbox = [];
    },
  };
}

/** Verdicts in a Map keyed by proposal idempotency key. */
export function createInMemoryVerdictRepository(): VerdictRepository & { all(): StoredVerdict[] } {
  const verdicts = new Map<string, StoredVerdict>();
  return {
    async getVerdict(key) {
      const v = verdicts.get(key);
      return v ? clone(v) : undefined;
    },
    async putVerdictOnce(verdict) {
      if (!verdicts.has(verdict.idempotency_key)) verdicts.set(verdict.idempotency_key, clone(verdict));
      return clone(verdicts.get(verdict.idempotency_key)!);
    },
    async recordExecution(key, outcome) {
      const v = verdicts.get(key);
      if (!v) throw new Error(`no verdict stored for ${key}`);
      if (v.execution === "PENDING") Object.assign(v, clone(outcome));
      return clone(v);
    },
    async markPublished(key) {
      const v = verdicts.get(key);
      if (!v || v.published) return false;
      v.published = true;
      return true;
    },
    all: () => [...verdicts.values()].map(clone),
  };
}

/** Reviews in a Map keyed by claim id; updates are conditional on the version, as on DynamoDB. */
export function createInMemoryReviewRepository(): ReviewRepository & { all(): ReviewRecord[] } {
  const reviews = new Map<string, ReviewRecord>();
  return {
    async openReview(review) {
      if (!reviews.has(review.claim_id)) reviews.set(review.claim_id, clone(review));
      return clone(reviews.get(review.claim_id)!);
    },
    async getReview(claimId) {
      const r = reviews.get(claimId);
      return r ? clone(r) : undefined;
    },
    async updateReview(next) {
      const stored = reviews.get(next.claim_id);
      if (!stored || stored.version !== next.version - 1)
        return { changed: false, review: stored ? clone(stored) : undefined };
      reviews.set(next.claim_id, clone(next));
      return { changed: true, review: clone(next) };
    },
    async listReviews({ status, limit, cursor }) {
      const sorted = [...reviews.values()]
        .filter((r) => r.status === status)
        .map((r) => ({ r, key: reviewListKey(r.requested_at, r.claim_id) }))
        .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
        .filter((x) => cursor === undefined || x.key > cursor);
      const page = sorted.slice(0, limit);
      return { items: page.map((x) => clone(x.r)), ...(sorted.length > limit ? { nextCursor: page.at(-1)!.key } : {}) };
    },
    all: () => [...reviews.values()].map(clone),
  };
}

/** Settlements in a Map keyed by claim id; updates are conditional on the version, as on DynamoDB. */
export function createInMemorySettlementRepository(): SettlementRepository {
  const records = new Map<string, SettlementRecord>();
  return {
    async get(claimId) {
      const r = records.get(claimId);
      return r ? clone(r) : undefined;
    },
    async create(record) {
      if (!records.has(record.claim_id)) records.set(record.claim_id, clone(record));
      return clone(records.get(record.claim_id)!);
    },
    async update(next) {
      const stored = records.get(next.claim_id);
      if (!stored || stored.version !== next.version - 1)
        throw new VersionConflictError("settlement", next.claim_id, next.version - 1, {
          ...(stored ? { actualVersion: stored.version } : {}),
        });
      records.set(next.claim_id, clone(next));
    },
    async list() {
      return [...records.values()].sort(byRequest).map(clone);
    },
    async listUnperformedReviews() {
      return [...records.values()].filter(hasUnperformedReview).sort(byRequest).map(clone);
    },
    async listUnsettled() {
      return [...records.values()].filter(isUnsettled).sort(byRequest).map(clone);
    },
    async listPendingReviews({ limit, cursor }) {
      const sorted = [...records.values()]
        .map((r) => ({ r, key: pendingReviewKey(r) }))
        .filter((x): x is { r: SettlementRecord; key: string } => x.key !== undefined)
        .filter((x) => cursor === undefined || x.key > cursor)
        .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
      const page = sorted.slice(0, limit);
      return { items: page.map((x) => clone(x.r)), ...(sorted.length > limit ? { nextCursor: page.at(-1)!.key } : {}) };
    },
  };
}

/** A publisher that keeps what it published, in order. */
export function createRecordingPublisher(): EventPublisher & { published: BusEntry[] } {
  const published: BusEntry[] = [];
  return {
    published,
    async publish(entries) {
      published.push(...clone([...entries]));
    },
  };
}

/** One queued unit of work for the in-process runner. */
export type InMemoryWork =
  | { queue: "agent-steps"; message: AgentStepMessage }
  | { queue: "proposals"; message: ProposalMessage }
  | { queue: "crew-events"; claimId: string; message: CrewQueueMessage }
  | { queue: "extraction"; claimId: string }
  | { queue: "timers"; claimId: string; dueMs: number };

/** Work queues as one in-memory FIFO list (round-trips every message through JSON like a real queue). */
export function createInMemoryWorkQueues(): WorkQueues & {
  take(): InMemoryWork | undefined;
  takeAt(index: number): InMemoryWork | undefined;
  size(): number;
  timers: InMemoryWork[];
} {
  const items: InMemoryWork[] = [];
  const timers: InMemoryWork[] = [];
  const push = (w: InMemoryWork) => items.push(JSON.parse(JSON.stringify(w)) as InMemoryWork);
  return {
    timers,
    // A delay is not kept: the in-process runner has no time to wait in (it never holds a claim for the model).
    async sendAgentSteps(messages) {
      for (const message of messages) push({ queue: "agent-steps", message });
    },
    async sendProposal(message) {
      push({ queue: "proposals", message });
    },
    async sendCrewEvents(claimId, messages) {
      for (const message of messages) push({ queue: "crew-events", claimId, message });
    },
    async scheduleTimer(claimId, dueMs) {
      timers.push({ queue: "timers", claimId, dueMs });
    },
    async requestExtraction(claimId) {
      push({ queue: "extraction", claimId });
    },
    take: () => items.shift(),
    /** Takes the item at `index` (modulo the queue's length): a scheduler that delivers out of order. */
    takeAt: (index: number) =>
      items.length === 0 ? undefined : items.splice(((index % items.length) + items.length) % items.length, 1)[0],
    size: () => items.length,
  };
}

/** An in-memory `AuditLog`: validates on append and answers queries in append order with copies. */
export function createInMemoryAuditLog(): AuditLog & { all(): AuditEvent[] } {
  const events: AuditEvent[] = [];
  const seen = new Set<string>();
  const add = (parsed: AuditEvent) => {
    const key = canonicalize(parsed);
    if (seen.has(key)) return;
    seen.add(key);
    events.push(structuredClone(parsed));
  };
  return {
    /** Appends the event; an identical event (a redelivery) is dropped, like the DynamoDB log does. */
    async append(event) {
      add(parseAuditEvent(event));
    },
    async appendAll(batch) {
      for (const parsed of batch.map((e) => parseAuditEvent(e))) add(parsed);
    },
    async byDfid(dfid) {
      return events.filter((e) => e.dfid === dfid || e.root_dfid === dfid).map((e) => structuredClone(e));
    },
    async bySimulation(simulationId) {
      return events.filter((e) => e.details.simulation_id === simulationId).map((e) => structuredClone(e));
    },
    all() {
      return events.map((e) => structuredClone(e));
    },
  };
}

/** An in-memory `RefundLedger` (single process; each operation is atomic because it is synchronous inside). */
export function createInMemoryRefundLedger(initial: readonly LedgerEntry[] = []): RefundLedger {
  const entries = new Map<string, LedgerEntry>();
  const keyOf = (orderId: string, scope: string | undefined) => `${scope ?? ""}\u0000${orderId}`;
  for (const entry of initial) {
    assertLedgerEntry(entry);
    if (entries.has(keyOf(entry.order_id, undefined)))
      throw new LedgerInvariantError(`duplicate ledger entry for order ${entry.order_id}`);
    entries.set(keyOf(entry.order_id, undefined), structuredClone(entry));
  }
  const current = (orderId: string, scope: string | undefined) =>
    entries.get(keyOf(orderId, scope)) ?? emptyLedgerEntry(orderId);
  // Customers' windows, beside the orders' entries (customer ids and order ids never share a key: another map).
  const windows = new Map<string, CustomerWindow>();
  return {
    async get(orderId, scope) {
      const entry = entries.get(keyOf(orderId, scope));
      // An entry that holds nothing (its last pending review closed) is the same as no entry.
      return entry &&
        (Object.keys(entry.claims).length > 0 ||
          (entry.pending_reviews ?? []).length > 0 ||
          (entry.decisions ?? []).length > 0 ||
          (entry.released ?? []).length > 0)
        ? structuredClone(entry)
        : undefined;
    },
    async reserve({ orderId, claimId, cents, orderCents, mode, scope, lines }) {
      const result = reserveRefund(current(orderId, scope), claimId, cents, orderCents, mode, lines);
      if (result.ok) entries.set(keyOf(orderId, scope), result.entry);
      return structuredClone(result);
    },
    async markReviewPending(orderId, claimId, scope) {
      entries.set(keyOf(orderId, scope), markReviewPending(current(orderId, scope), claimId));
    },
    async clearReviewPending(orderId, claimId, scope, decision) {
      if (entries.has(keyOf(orderId, scope)) || decision)
        entries.set(keyOf(orderId, scope), clearReviewPending(current(orderId, scope), claimId, decision));
    },
    async releaseRefund(orderId, claimId, scope) {
      entries.set(keyOf(orderId, scope), releaseRefund(current(orderId, scope), claimId));
    },
    async getCustomerWindow(customerId, scope) {
      const window = windows.get(keyOf(customerId, scope));
      return window ? structuredClone(window) : undefined;
    },
    async reserveCustomer({ customerId, reservation, limits, scope, approvals }) {
      const window = windows.get(keyOf(customerId, scope)) ?? emptyCustomerWindow(customerId);
      const result = reserveOnWindow(window, reservation, customerLimitsCents(limits, reservation.currency), approvals);
      if (result.ok && !result.repeat) windows.set(keyOf(customerId, scope), result.window);
      return { ...structuredClone(result), conflicts: 0 };
    },
    async releaseCustomer(customerId, claimId, scope) {
      const window = windows.get(keyOf(customerId, scope));
      const released = window ? releaseFromWindow(window, claimId) : undefined;
      if (released) windows.set(keyOf(customerId, scope), released);
    },
  };
}

/** An in-memory `ContextStore` over the given orders; throws `OrderDataError` for an invalid or duplicate order. */
export function createInMemoryContextStore(orders: readonly unknown[]): ContextStore {
  const byId = new Map<string, Order>();
  for (const input of orders) {
    const order = validateOrder(input);
    if (byId.has(order.order_id)) throw new OrderDataError(`duplicate order ${order.order_id} in the context store`);
    byId.set(order.order_id, order);
  }
  return {
    async getOrder(orderId) {
      const order = byId.get(orderId);
      return order ? structuredClone(order) : undefined;
    },
    async snapshot(): Promise<ContextSnapshot> {
      const out: Record<string, Order> = {};
      for (const [id, order] of [...byId.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
        Object.defineProperty(out, id, {
          value: structuredClone(order),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return { orders: out };
    },
  };
}
