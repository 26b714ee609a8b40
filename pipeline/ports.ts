// Ports of the pipeline: narrow, named in domain words; in-memory implementations in
// pipeline/in-memory.ts, AWS ones in adapters/aws. Beside them, what every implementation must give alike: the order
// of a listing and its cursors (claimListKey, reviewListKey, pendingReviewKey, byRequest), the queries' rules, which
// of a session's outbox its save records. How an adapter stores them (its keys) is the adapter's (adapters/aws/table.ts).
import {
  type LedgerEntry,
  type PersonDecision,
  type CustomerWindow,
  type CustomerReservation,
  type CustomerReserveResult,
  type ReserveMode,
  type LineReserve,
  type ReserveResult,
} from "../core/kernel/index.ts";
import { dfidOf } from "../core/kernel/claim-record.ts";
import type { ClaimRecord, ClaimStatus } from "../core/kernel/claim-record.ts";
import { ClaimQueryError } from "./errors.ts";
import type { ReviewRecord, ReviewStatus } from "../core/kernel/review.ts";
import type { SettlementRecord } from "../core/kernel/settlement.ts";
import type { AuditEvent, ContextSnapshot, CustomerLimits, Order } from "../core/integrity/index.ts";
import type { ClaimVerdictDetail } from "../core/kernel/events.ts";
import type { Effect } from "./effects.ts";
import type { BusEntry } from "../core/kernel/events.ts";
import type { AgentStepMessage, CrewQueueMessage, ProposalMessage } from "./messages.ts";

/** The result of creating a claim under an optional idempotency key. */
export type CreateClaimResult =
  | { created: true; record: ClaimRecord }
  | { created: false; record: ClaimRecord; sameRequest: boolean };

/** Which claims to list, newest receipt first: every filter is optional; `cursor` continues a previous page. */
export type ClaimQuery = {
  readonly statuses?: readonly ClaimStatus[];
  readonly verdict?: NonNullable<ClaimRecord["verdict"]>;
  /** Received at or after this instant (ISO, as `received_at` is written). */
  readonly since?: string;
  /** Received before this instant (ISO, exclusive). */
  readonly before?: string;
  readonly limit: number;
  readonly cursor?: string;
};

/** A page of claims and the cursor of the next one, if there is one. */
export type ClaimPage = { items: ClaimRecord[]; nextCursor?: string };

/** The position of a claim in the listing: `<received_at>#<claim_id>` (newest first = descending); a page's cursor is its last item's. */
export function claimListKey(record: Pick<ClaimRecord, "received_at" | "claim_id">): string {
  return `${record.received_at}#${record.claim_id}`;
}

/** Throws ClaimQueryError for a limit that is not an integer from 1 to 1000. */
export function checkClaimQuery(query: ClaimQuery): void {
  if (!Number.isInteger(query.limit) || query.limit < 1 || query.limit > 1000)
    throw new ClaimQueryError(`listClaims: limit must be an integer from 1 to 1000, got ${String(query.limit)}`);
  if (query.statuses !== undefined && query.statuses.length === 0)
    throw new ClaimQueryError("listClaims: statuses, when given, names at least one status");
}

/** Whether a stored claim answers the query (each repository applies it to what it read). */
export function matchesClaimQuery(record: ClaimRecord, query: ClaimQuery): boolean {
  const key = claimListKey(record);
  return (
    (query.statuses === undefined || query.statuses.includes(record.status)) &&
    (query.verdict === undefined || record.verdict === query.verdict) &&
    (query.since === undefined || record.received_at >= query.since) &&
    (query.before === undefined || record.received_at < query.before) &&
    (query.cursor === undefined || key < query.cursor)
  );
}

/** Where claims live. */
export interface ClaimRepository {
  /** Stores a new claim; with an idempotency key a repeated request returns the first claim (`sameRequest`: same body hash). */
  createClaim(record: ClaimRecord, idempotency?: { key: string; requestHash: string }): Promise<CreateClaimResult>;
  /** The claim, or undefined. */
  getClaim(claimId: string): Promise<ClaimRecord | undefined>;
  /** Applies `patch` unless the claim is final (DECIDED / NEEDS_REVIEW) or its status is not in `onlyFrom`. */
  updateClaim(
    claimId: string,
    patch: Partial<ClaimRecord>,
    onlyFrom?: readonly ClaimStatus[],
  ): Promise<{ record: ClaimRecord | undefined; changed: boolean }>;
  /** Claims that answer `query`, newest receipt first, `limit` at a time (the sweep pages through open ones, the API lists them). */
  listClaims(query: ClaimQuery): Promise<ClaimPage>;
}

/** A crew session as stored: snapshot, version and the effects not yet confirmed performed (outbox). */
export interface StoredSession {
  claimId: string;
  version: number;
  snapshot: unknown;
  outbox: Effect[];
}

/** How a session is looked for. */
export type SessionLoadOptions = {
  /**
   * `false`: the claim's session can only have been written in the store's current layout (its start says so: a
   * claim started by this release, `sessionLayout` on `claim.start`), so a store that still reads an older layout
   * skips that read. Default `true`: every layout written so far is looked in.
   */
  legacyLayout?: boolean;
};

/**
 * Where crew sessions live; a snapshot and its outbox are saved together, conditionally on the version.
 * The save also records the outbox's own audit events (`splitSessionOutbox(...).audit`) in the audit log,
 * in the same write: an orchestrator step is one stored item. Those events are then not in the loaded
 * outbox (a session stored before keeps them there, to be performed like the rest).
 */
export interface SessionRepository {
  /**
   * The stored session, or undefined when the crew has not started. Its outbox is the latest version's, pending
   * until `clearOutbox` of that version; a version never cleared is superseded by the next save.
   */
  loadSession(claimId: string, options?: SessionLoadOptions): Promise<StoredSession | undefined>;
  /**
   * Saves if the stored version is `session.version - 1` (0 = absent); otherwise throws `VersionConflictError`.
   * The outbox's `splitSessionOutbox` audit events are appended to the audit log by the same write.
   */
  saveSession(session: StoredSession): Promise<void>;
  /**
   * Marks the outbox performed (it then loads empty), if the version is still the latest (a lost race is harmless).
   * The orchestrator marks only where nothing that comes later proves it performed (pipeline/decide/outbox.ts).
   */
  clearOutbox(claimId: string, version: number): Promise<void>;
}

/**
 * An orchestrator outbox split for the session store: `audit` are the events a session save records with
 * the session in one write (the claim's own flow, served claims only: no simulation, no copy under another
 * root), `rest` is everything else, in order, which the shell performs after the save.
 */
export function splitSessionOutbox(
  claimId: string,
  outbox: readonly Effect[],
): { audit: AuditEvent[]; rest: Effect[] } {
  const dfid = dfidOf(claimId);
  const audit: AuditEvent[] = [];
  const rest: Effect[] = [];
  for (const effect of outbox) {
    const e = effect.kind === "audit" ? effect.event : undefined;
    if (e !== undefined && e.dfid === dfid && e.root_dfid === dfid && e.details.simulation_id === undefined)
      audit.push(e);
    else rest.push(effect);
  }
  return { audit, rest };
}

/** Where the execution of a verdict stands: PENDING until an ACCEPT's refund was reserved or refused. */
export type ExecutionState = "PENDING" | "EXECUTED" | "REFUSED" | "NOT_APPLICABLE";

/** A verdict as stored once per proposal idempotency key, with its execution and what still has to be published. */
export interface StoredVerdict {
  idempotency_key: string;
  claim_id: string;
  record: ClaimVerdictDetail;
  /** Kernel layer that decided and the checks run (for the audit and the report). */
  layer: number;
  checks: unknown[];
  execution: ExecutionState;
  /** The review an ESCALATE verdict opens (decided with the verdict, opened before it is published). */
  review?: ReviewRecord;
  /** Bus events to publish once execution is settled. */
  events: BusEntry[];
  /** Audit events of the kernel's steps (proposal, verdict, execution), appended before publishing; a redelivery appends them again (identical, so dropped). */
  audit?: AuditEvent[];
  published: boolean;
}

/** How a PENDING verdict is settled: its execution, the events to publish and audit, and a replacing decision if the kernel decided again. */
export type VerdictOutcome = {
  execution: ExecutionState;
  events: BusEntry[];
  review?: ReviewRecord;
  audit?: AuditEvent[];
  record?: ClaimVerdictDetail;
  layer?: number;
  checks?: unknown[];
};

/** Where verdicts live. */
export interface VerdictRepository {
  /** The stored verdict for a proposal idempotency key. */
  getVerdict(idempotencyKey: string): Promise<StoredVerdict | undefined>;
  /** Stores the verdict unless one exists for the key; returns the one that is stored now. */
  putVerdictOnce(verdict: StoredVerdict): Promise<StoredVerdict>;
  /**
   * Settles a PENDING execution (first writer wins) and returns the stored verdict after the call. When the
   * reservation lost a race, the kernel decides again and the outcome carries the new decision (`record`,
   * `layer`, `checks`), which replaces the unpublished one.
   */
  recordExecution(idempotencyKey: string, outcome: VerdictOutcome): Promise<StoredVerdict>;
  /**
   * Records that the verdict's events were published; true only for the one call that marked it (a redelivery, or
   * a racing delivery that finds it marked already, gets false, as does an unknown key).
   */
  markPublished(idempotencyKey: string): Promise<boolean>;
}

/** Sends work between the pipeline's stages (SQS on AWS; fauxqs or memory locally). */
export interface WorkQueues {
  /** `delayMs`: delivered no earlier than that (a step waiting for the model, docs/llm.md; at most 15 minutes on SQS). */
  sendAgentSteps(messages: readonly AgentStepMessage[], opts?: QueueDelay): Promise<void>;
  sendProposal(message: ProposalMessage): Promise<void>;
  /** Sends to the claim's FIFO group on the crew-events queue. */
  sendCrewEvents(claimId: string, messages: readonly CrewQueueMessage[]): Promise<void>;
  /** Arranges a `crew.tick` for the claim at `dueMs`. */
  scheduleTimer(claimId: string, dueMs: number): Promise<void>;
  requestExtraction(claimId: string, opts?: QueueDelay): Promise<void>;
}

/** How long a message waits in its queue before it can be delivered. */
export interface QueueDelay {
  readonly delayMs?: number | undefined;
}

/** Publishes bus events (EventBridge `claims` bus); throws when an entry could not be published after retries. */
export interface EventPublisher {
  publish(entries: readonly BusEntry[]): Promise<void>;
}

/** Wall-clock time, injected: the crew engine's clock port, used by the pipeline too. */
export type { Clock } from "../core/crew/index.ts";

/** Fresh unique ids, injected. */
export interface IdSource {
  next(prefix: string): string;
}

/** A reservation request: `mode` says who decided the refund; `scope` keeps a simulation's refunds apart. */
export type ReserveRequest = {
  orderId: string;
  claimId: string;
  cents: number;
  orderCents: number;
  mode: ReserveMode;
  /** The ISO 4217 currency `cents` and `orderCents` count (the order's): what the metrics tell it by; absent: EUR. */
  currency?: string | undefined;
  /** On an order with lines: its lines, its refundable shipping and what the claim takes from each (core/kernel/ledger.ts). */
  lines?: LineReserve | undefined;
  /** The ledger the refund goes to: undefined for real refunds, the simulation id for a simulation's claims (docs/events.md). */
  scope?: string | undefined;
};

/**
 * The refund ledger: one entry per order (and ledger scope). `reserve` is ONE atomic conditional update
 * (the rule of `reserveRefund`); no transactions are needed. Pending-review markers let an automatic
 * refund see, in the same condition, that another claim on the order awaits a human.
 */
export type RefundLedger = {
  /** The order's entry, or `undefined` when nothing was ever reserved or marked on it. */
  get(orderId: string, scope?: string): Promise<LedgerEntry | undefined>;
  /** Reserves the refund, or says why not. */
  reserve(request: ReserveRequest): Promise<ReserveResult>;
  /** Marks `claimId` as awaiting a review on the order (idempotent). */
  markReviewPending(orderId: string, claimId: string, scope?: string): Promise<void>;
  /**
   * Removes the mark (idempotent) and, with `decision`, records the person's decision that binds the order in the
   * same single-item write (idempotent too): the order is never between "awaiting a person" and "bound by one".
   */
  clearReviewPending(orderId: string, claimId: string, scope?: string, decision?: PersonDecision): Promise<void>;
  /** Releases the claim's reservation on the order (idempotent): its refund was closed unpaid (docs/payments.md). */
  releaseRefund(orderId: string, claimId: string, scope?: string): Promise<void>;
  /** The customer's window of automatic refunds, or `undefined` when nothing was ever reserved for them. */
  getCustomerWindow(customerId: string, scope?: string): Promise<CustomerWindow | undefined>;
  /**
   * Reserves a refund on the customer's window (before the order's ledger): read, decide with `reserveOnWindow`,
   * write only if the version is still the one read, and on a lost race read again. An automatic refund is checked
   * against the limits; an approved one (`approved_by`) is not, but is refused APPROVALS_CHANGED when `approvals` is
   * given and the window holds another count. `conflicts` counts the lost races (for the concurrency figures).
   */
  reserveCustomer(request: CustomerReserveRequest): Promise<CustomerReserveResult & { conflicts: number }>;
  /** Releases the claim's reservation on the customer's window (idempotent): its refund was not made. */
  releaseCustomer(customerId: string, claimId: string, scope?: string): Promise<void>;
};

/** A reservation on a customer's window: whose, what, under which limits, in which ledger scope. */
export type CustomerReserveRequest = {
  customerId: string;
  reservation: CustomerReservation;
  limits: CustomerLimits;
  scope?: string | undefined;
  /** For an approved refund: the window's approved count its four-eyes check read (absent: not checked). */
  approvals?: number | undefined;
};

/**
 * The shop's orders: the authoritative facts the kernel, triage and review read, never shown to the crew. Two
 * adapters (docs/orders.md): the DynamoDB table (`ORDER_SOURCE=table`) and the shop's order API (`http`).
 */
export type OrderSource = {
  /**
   * The order, or `undefined` when the shop does not know it (the kernel's `ORDER_NOT_FOUND`). Throws
   * `OrderSourceUnavailableError` when the source cannot answer now (retry later) and `OrderDataError` when it
   * holds an order that cannot be used.
   */
  getOrder(orderId: string): Promise<Order | undefined>;
  /** `shop_api` when the orders are the shop's order API (a verdict says who had no such order); absent for the context store. */
  readonly origin?: "shop_api";
};

/**
 * What an order source's adapter is built from: its declared settings' values (validated: app/order-source.ts),
 * its declared secrets by role (read on use), and the app's own table of orders (injected: the `table` source is it).
 */
export type OrderSourceInputs<Secret extends string, Values> = {
  readonly settings: Values;
  readonly secret: (role: Secret) => string;
  readonly table: () => OrderSource;
};

/** An order source's adapter, as the composition root builds it from its inputs (functions/composition/order-sources.ts). */
export type OrderSourceAdapter<Secret extends string = string, Values = Readonly<Record<string, string | number>>> = {
  readonly name: string;
  readonly createSource: (inputs: OrderSourceInputs<Secret, Values>) => OrderSource;
};

/** The table's orders: an `OrderSource` that can also list them all (the table adapter and the in-memory one). */
export type ContextStore = OrderSource & {
  /** All orders as plain data. */
  snapshot(): Promise<ContextSnapshot>;
};

/** The append-only audit log. */
export type AuditLog = {
  /** Appends one event (validated against the audit schema). */
  append(event: AuditEvent): Promise<void>;
  /**
   * Appends the events of one handler step together, in order (all validated first; none stored if one
   * is invalid). On DynamoDB they are one item: a step's audit is one write, not one per event.
   */
  appendAll(events: readonly AuditEvent[]): Promise<void>;
  /** Events of a decision flow in append order: those whose `dfid` or `root_dfid` is `dfid`. */
  byDfid(dfid: string): Promise<AuditEvent[]>;
  /** Events whose `details.simulation_id` is `simulationId`, in append order. */
  bySimulation(simulationId: string): Promise<AuditEvent[]>;
};

/** The result of a conditional review update: the review as stored after the call, and whether this call changed it. */
type ReviewUpdate = { changed: true; review: ReviewRecord } | { changed: false; review: ReviewRecord | undefined };

/**
 * The position of a review in the reviews' listing, oldest first: `<requested_at>#<claim_id>`; a page's cursor is
 * its last item's. Claims' reviews and failed refunds' reviews share it, so one cursor pages through both.
 */
export function reviewListKey(requestedAt: string, claimId: string): string {
  return `${requestedAt}#${claimId}`;
}

/** A page of reviews. */
export type ReviewPage = { items: ReviewRecord[]; nextCursor?: string };

/** Where human reviews live: one per claim, changed only by conditional updates on their version. */
export interface ReviewRepository {
  /** Stores the review unless the claim has one; returns the one stored now. */
  openReview(review: ReviewRecord): Promise<ReviewRecord>;
  /** The claim's review, or undefined. */
  getReview(claimId: string): Promise<ReviewRecord | undefined>;
  /** Writes `next` (version + 1) if the stored version is still `next.version - 1`. */
  updateReview(next: ReviewRecord): Promise<ReviewUpdate>;
  /** Reviews with `status`, oldest request first, `limit` at a time; `cursor` continues a previous page. */
  listReviews(query: { status: ReviewStatus; limit: number; cursor?: string }): Promise<ReviewPage>;
}

/** Where settlements live: one per claim, changed by conditional writes on `version`. */
export interface SettlementRepository {
  get(claimId: string): Promise<SettlementRecord | undefined>;
  /** Stores `record` (version 1) unless the claim has one; returns the one stored now. */
  create(record: SettlementRecord): Promise<SettlementRecord>;
  /** Writes `next` if the stored version is `next.version - 1`; otherwise throws VersionConflictError. */
  update(next: SettlementRecord): Promise<void>;
  /** Every settlement, oldest request first. */
  list(): Promise<SettlementRecord[]>;
  /**
   * The settlements whose failed refund's review is PENDING, oldest review first (reviewListKey of the review's
   * `requested_at` and the claim id), `limit` at a time; `cursor` continues after that key. Reads those only.
   */
  listPendingReviews(query: { limit: number; cursor?: string }): Promise<SettlementPage>;
  /**
   * The settlements whose refund review was decided (RETRY / CLOSE) but whose effects are not yet marked performed
   * (a crash cut the decision short), oldest request first. Reads those only: the sweep completes them.
   */
  listUnperformedReviews(): Promise<SettlementRecord[]>;
  /**
   * The settlements whose refund is not settled (`isUnsettled`: pending, or failed and not closed by a person), oldest
   * request first. Reads those only: the refund-due alarm (docs/returns.md#the-refund-due-alarm) reads them.
   */
  listUnsettled(): Promise<SettlementRecord[]>;
}

/** A page of settlements and, when more follow, the key of its last one. */
export type SettlementPage = { items: SettlementRecord[]; nextCursor?: string };

/** Where a settlement's pending review stands in the reviews' listing (undefined: it has none pending). */
export function pendingReviewKey(record: SettlementRecord): string | undefined {
  return record.review?.status === "PENDING" ? reviewListKey(record.review.requested_at, record.claim_id) : undefined;
}

/** A settlement's place among settlements, oldest refund request first: `<requested_at>#<claim_id>`. */
export function settlementListKey(record: SettlementRecord): string {
  return `${record.requested_at}#${record.claim_id}`;
}

/** Settlements in the order of their requests (settlementListKey). */
export function byRequest(a: SettlementRecord, b: SettlementRecord): number {
  const ka = settlementListKey(a);
  const kb = settlementListKey(b);
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/** Whether a settlement's refund is still owed: PENDING, or FAILED and not CLOSEd by a person (a RETRY pays again). */
export function isUnsettled(record: SettlementRecord): boolean {
  return record.status !== "SETTLED" && record.review?.status !== "CLOSED";
}

/** Whether a settlement's review was decided and its effects are not yet all performed (the sweep completes it). */
export function hasUnperformedReview(record: SettlementRecord): boolean {
  return record.review !== undefined && record.review.status !== "PENDING" && record.review.performed !== true;
}

/** What destroying a subject's key found: a key it destroyed, a key destroyed before, or no key at all. */
export type DestroyOutcome = "destroyed" | "already_erased" | "unknown";

/** Where personal data is sealed: one data key per subject (a claim), AES-256-GCM (adapters/vault/). */
export interface PersonalDataVault {
  /**
   * `plaintext` sealed under `subject`'s key (made on first use); ERASED once the subject's key was destroyed. A token
   * this vault made for `subject` comes back as it is (in the form asked for); any other text, one in the form of a
   * token included, is sealed. With `implied`, the token leaves the subject out: only for a record that names it
   * (an item whose key is the claim's), and opened only with it. With `dictionary` too (implied only), the plaintext
   * is deflated against it before it is sealed: bytes the record holds anyway (its ids, amounts) cost nearly nothing,
   * and the token opens only with the very same dictionary.
   */
  seal(subject: string, plaintext: string, opts?: { implied?: boolean; dictionary?: Uint8Array }): Promise<string>;
  /**
   * The text of a sealed field, or undefined when its key was destroyed. `recordSubject` is the claim the record it
   * was read from names (its key), which a token sealed `implied` needs; a token that names its own subject ignores it.
   * A token sealed with a `dictionary` needs the same one.
   */
  open(token: string, recordSubject?: string, opts?: { dictionary?: Uint8Array }): Promise<string | undefined>;
  /** Destroys `subject`'s key for good: whatever was sealed under it can never be opened again, nor sealed anew. */
  destroy(subject: string): Promise<DestroyOutcome>;
}

/**
 * How far the retention sweep has erased (pipeline/retention.ts): every claim received before `erasedBefore` had its
 * personal data erased. One small item of the table; it only moves forward.
 */
export interface RetentionWatermark {
  /** The instant (ISO) claims received before it are erased, or undefined before the first complete run. */
  erasedBefore(): Promise<string | undefined>;
  /** Records that every claim received before `instant` is erased (a later instant recorded stays). */
  advance(instant: string): Promise<void>;
}
