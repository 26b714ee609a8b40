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

/**
 * A deep copy of `v`, frozen: what a store keeps of what it is given, and hands as it is to every reader — no reader
 * can change it (a write throws), so none needs a copy of its own (a copy on every read was most of these stores'
 * time in the chaos runs). The stored items are plain data, as DynamoDB's are: trees of objects, arrays and
 * primitives, copied here (an item that contains itself is none: its copy overflows the stack, as DynamoDB refuses
 * it); anything else (a Date, a Map) is copied by structuredClone and frozen at its top.
 */
export function frozenCopy<T>(v: T): T {
  return copy(v, true) as T;
}

/** A deep copy of `v` its reader may change, as structuredClone makes (faster, for plain data). */
export function plainCopy<T>(v: T): T {
  return copy(v, false) as T;
}

function copy(v: unknown, frozen: boolean): unknown {
  if (v === null || typeof v !== "object") return v;
  if (Array.isArray(v)) {
    const out: unknown[] = new Array(v.length);
    for (let i = 0; i < v.length; i++) if (i in v) out[i] = copy(v[i], frozen);
    return frozen ? Object.freeze(out) : out;
  }
  const proto: unknown = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) {
    const cloned: unknown = structuredClone(v);
    return frozen ? Object.freeze(cloned) : cloned;
  }
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) {
    const value = copy((v as Record<string, unknown>)[k], frozen);
    // (defineProperty, not assignment: a key named __proto__ stays a key, as structuredClone keeps it)
    if (k === "__proto__")
      Object.defineProperty(out, k, { value, enumerable: true, writable: true, configurable: true });
    else out[k] = value;
  }
  return frozen ? Object.freeze(out) : out;
}

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
            record: claims.get(seen.claimId)!,
            sameRequest: seen.requestHash === idempotency.requestHash,
          };
      }
      if (claims.has(record.claim_id))
        return { created: false, record: claims.get(record.claim_id)!, sameRequest: false };
      const stored = frozenCopy(record);
      claims.set(record.claim_id, stored);
      if (idempotency) keys.set(idempotency.key, { claimId: record.claim_id, requestHash: idempotency.requestHash });
      return { created: true, record: stored };
    },
    async getClaim(id) {
      return claims.get(id);
    },
    async updateClaim(id, patch, onlyFrom) {
      const r = claims.get(id);
      if (!r) return { record: undefined, changed: false };
      const allowed = onlyFrom ? onlyFrom.includes(r.status) : !FINAL.includes(r.status);
      if (!allowed) return { record: r, changed: false };
      const next = Object.freeze({ ...r, ...frozenCopy(patch) });
      claims.set(id, next);
      return { record: next, changed: true };
    },
    async listClaims(query) {
      checkClaimQuery(query);
      const matching = [...claims.values()]
        .filter((c) => matchesClaimQuery(c, query))
        .sort((a, b) => (claimListKey(a) < claimListKey(b) ? 1 : -1));
      const items = matching.slice(0, query.limit);
      return { items, ...(matching.length > query.limit ? { nextCursor: claimListKey(items.at(-1)!) } : {}) };
    },
    all: () => [...claims.values()],
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
  // Each claim's session in a box of its own: a clear replaces the box's frozen session; a save puts a new box.
  const sessions = new Map<string, { session: StoredSession }>();
  return {
    async loadSession(id) {
      return sessions.get(id)?.session;
    },
    async saveSession(session) {
      const current = sessions.get(session.claimId)?.session.version ?? 0;
      if (current !== session.version - 1)
        throw new VersionConflictError("session", session.claimId, session.version - 1);
      const { audit: events, rest } = splitSessionOutbox(session.claimId, session.outbox);
      const parsed = events.map((e) => parseAuditEvent(e));
      // Checked and stored at once (no await between: racing saves see each other); taken back if the append fails.
      const previous = sessions.get(session.claimId);
      const stored = { session: frozenCopy({ ...session, outbox: rest }) };
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
      const box = sessions.get(id);
      if (box && box.session.version === version)
        box.session = Object.freeze({ ...box.session, outbox: frozenCopy([]) });
    },
  };
}

/** Verdicts in a Map keyed by proposal idempotency key. */
export function createInMemoryVerdictRepository(): VerdictRepository & { all(): StoredVerdict[] } {
  const verdicts = new Map<string, StoredVerdict>();
  return {
    async getVerdict(key) {
      return verdicts.get(key);
    },
    async putVerdictOnce(verdict) {
      if (!verdicts.has(verdict.idempotency_key)) verdicts.set(verdict.idempotency_key, frozenCopy(verdict));
      return verdicts.get(verdict.idempotency_key)!;
    },
    async recordExecution(key, outcome) {
      const v = verdicts.get(key);
      if (!v) throw new Error(`no verdict stored for ${key}`);
      if (v.execution !== "PENDING") return v;
      const next = Object.freeze({ ...v, ...frozenCopy(outcome) });
      verdicts.set(key, next);
      return next;
    },
    async markPublished(key) {
      const v = verdicts.get(key);
      if (!v || v.published) return false;
      verdicts.set(key, Object.freeze({ ...v, published: true }));
      return true;
    },
    all: () => [...verdicts.values()],
  };
}

/** Reviews in a Map keyed by claim id; updates are conditional on the version, as on DynamoDB. */
export function createInMemoryReviewRepository(): ReviewRepository & { all(): ReviewRecord[] } {
  const reviews = new Map<string, ReviewRecord>();
  return {
    async openReview(review) {
      if (!reviews.has(review.claim_id)) reviews.set(review.claim_id, frozenCopy(review));
      return reviews.get(review.claim_id)!;
    },
    async getReview(claimId) {
      return reviews.get(claimId);
    },
    async updateReview(next) {
      const stored = reviews.get(next.claim_id);
      if (!stored || stored.version !== next.version - 1) return { changed: false, review: stored };
      const review = frozenCopy(next);
      reviews.set(next.claim_id, review);
      return { changed: true, review };
    },
    async listReviews({ status, limit, cursor }) {
      const sorted = [...reviews.values()]
        .filter((r) => r.status === status)
        .map((r) => ({ r, key: reviewListKey(r.requested_at, r.claim_id) }))
        .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
        .filter((x) => cursor === undefined || x.key > cursor);
      const page = sorted.slice(0, limit);
      return { items: page.map((x) => x.r), ...(sorted.length > limit ? { nextCursor: page.at(-1)!.key } : {}) };
    },
    all: () => [...reviews.values()],
  };
}

/** Settlements in a Map keyed by claim id; updates are conditional on the version, as on DynamoDB. */
export function createInMemorySettlementRepository(): SettlementRepository {
  const records = new Map<string, SettlementRecord>();
  return {
    async get(claimId) {
      return records.get(claimId);
    },
    async create(record) {
      if (!records.has(record.claim_id)) records.set(record.claim_id, frozenCopy(record));
      return records.get(record.claim_id)!;
    },
    async update(next) {
      const stored = records.get(next.claim_id);
      if (!stored || stored.version !== next.version - 1)
        throw new VersionConflictError("settlement", next.claim_id, next.version - 1, {
          ...(stored ? { actualVersion: stored.version } : {}),
        });
      records.set(next.claim_id, frozenCopy(next));
    },
    async list() {
      return [...records.values()].sort(byRequest);
    },
    async listUnperformedReviews() {
      return [...records.values()].filter(hasUnperformedReview).sort(byRequest);
    },
    async listUnsettled() {
      return [...records.values()].filter(isUnsettled).sort(byRequest);
    },
    async listPendingReviews({ limit, cursor }) {
      const sorted = [...records.values()]
        .map((r) => ({ r, key: pendingReviewKey(r) }))
        .filter((x): x is { r: SettlementRecord; key: string } => x.key !== undefined)
        .filter((x) => cursor === undefined || x.key > cursor)
        .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
      const page = sorted.slice(0, limit);
      return { items: page.map((x) => x.r), ...(sorted.length > limit ? { nextCursor: page.at(-1)!.key } : {}) };
    },
  };
}

/** A publisher that keeps what it published, in order. */
export function createRecordingPublisher(): EventPublisher & { published: BusEntry[] } {
  const published: BusEntry[] = [];
  return {
    published,
    async publish(entries) {
      published.push(...entries.map(frozenCopy));
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
    events.push(frozenCopy(parsed));
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
      return events.filter((e) => e.dfid === dfid || e.root_dfid === dfid).map(plainCopy);
    },
    async bySimulation(simulationId) {
      return events.filter((e) => e.details.simulation_id === simulationId).map(plainCopy);
    },
    all() {
      return events.map(plainCopy);
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
    byId.set(order.order_id, frozenCopy(order));
  }
  return {
    async getOrder(orderId) {
      return byId.get(orderId);
    },
    async snapshot(): Promise<ContextSnapshot> {
      const out: Record<string, Order> = {};
      for (const [id, order] of [...byId.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
        Object.defineProperty(out, id, {
          value: order,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return { orders: out };
    },
  };
}
