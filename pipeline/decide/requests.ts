// What a decider may ask its shell to read or write when its next decision needs the answer (a read whose key it
// decides, a conditional write's outcome: a reservation, a version conflict), and the observations the shell answers
// with, one per request `kind`. One vocabulary for every process; pipeline/perform.ts performs it through the ports.
// Plain data.
import type { CustomerReserveResult, CustomerWindow, LedgerEntry, ReserveResult } from "../../core/kernel/index.ts";
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import type { ReviewRecord } from "../../core/kernel/review.ts";
import type { SettlementRecord } from "../../core/kernel/settlement.ts";
import type { ORDER_SOURCE_UNAVAILABLE } from "../../core/kernel/reason-codes.ts";
import type { Order, PolicyProposal } from "../../core/integrity/index.ts";
import type { ClaimExtractionOutput } from "../../core/claim/proposal-output.ts";
import type { LlmResult, LlmStructuredRequest } from "../../core/llm/index.ts";
import type { Effect } from "../effects.ts";
import type {
  CreateClaimResult,
  CustomerReserveRequest,
  ReserveRequest,
  StoredSession,
  StoredVerdict,
  VerdictOutcome,
} from "../ports.ts";

/** Whether one more claim may be opened now (back-pressure: the local stack bounds its open claims, docs/http-api.md). */
export type Admission = { ok: true } | { ok: false; open: number; bound: number; retryAfterS: number };

/** A conditional update of a claim whose outcome the decider needs (`changed`). */
export type ClaimUpdate = Extract<Effect, { kind: "claim_update" }>;

/** A read or write a decider asks for; the answer comes back as the observation of the same `kind`. */
export type Request =
  /** The clock. */
  | { kind: "now" }
  /** The claim as it stands now. */
  | { kind: "claim"; claimId: string }
  /** A conditional update of the claim: whether it changed it, and the claim as it stands after it. */
  | { kind: "claim_update"; update: ClaimUpdate }
  /** Whether one more claim may be opened now (the intake's back-pressure, when the caller bounds it). */
  | { kind: "admit" }
  /** A new id with the prefix (a claim's). */
  | { kind: "new_id"; prefix: string }
  /** The claim stored unless its id (or its idempotency key) is taken. */
  | { kind: "create_claim"; record: ClaimRecord; idempotency: { key: string; requestHash: string } | undefined }
  /** The model asked to read a free-text claim. */
  /** `viaBatch`: a batch run's claim, read through the Batch API where the stack has one (PipelineDeps.batchLlm). */
  | { kind: "extract"; request: LlmStructuredRequest<ClaimExtractionOutput>; viaBatch?: boolean }
  /** The verdict stored under a proposal's (or triage's) idempotency key. */
  | { kind: "verdict"; key: string }
  /** The verdict stored once (conditional put): the one stored now. */
  | { kind: "store_verdict"; verdict: StoredVerdict }
  /** A PENDING verdict's execution settled (first writer wins): the verdict stored now. */
  | { kind: "record_execution"; key: string; outcome: VerdictOutcome }
  /** The verdict marked published on its own item. */
  | { kind: "mark_published"; key: string }
  | { kind: "order"; orderId: string }
  | { kind: "ledger"; orderId: string; scope: string | undefined }
  | { kind: "customer_window"; customerId: string; scope: string | undefined }
  /** A reservation on the customer's window (versioned write). */
  | { kind: "reserve_customer"; request: CustomerReserveRequest }
  /** A reservation on the order's ledger (one conditional update). */
  | { kind: "reserve"; request: ReserveRequest }
  | { kind: "release_customer"; customerId: string; claimId: string; scope: string | undefined }
  | { kind: "review"; claimId: string }
  /** What `reviewer` alone approved on the order so far, and its approved count (pipeline/approved-alone.ts). */
  | { kind: "approved_alone"; orderId: string; scope: string | undefined; reviewer: string; exceptClaimId: string }
  /** The review stored conditionally on its version: whether it changed, and the review as stored now. */
  | { kind: "review_update"; review: ReviewRecord }
  /** The claim's refund settlement (none where nothing pays refunds). */
  | { kind: "settlement"; claimId: string }
  /** The settlement stored conditionally on its version: a conflict (someone else changed it) is answered, not thrown. */
  | { kind: "settlement_update"; settlement: SettlementRecord }
  /** A settled or failed refund announced (RefundSettled / RefundFailed) and marked so (pipeline/payments.ts). */
  | { kind: "announce"; settlement: SettlementRecord }
  /** The claim's crew session. */
  | { kind: "session"; claimId: string }
  /** The proposal the claim's crew sent to the kernel, as its AGENT_DECISION audit event records it (the latest one). */
  | { kind: "sent_proposal"; claimId: string; dfid: string }
  /** Whether the run has time left for one more claim (a sweep stops before its Lambda's timeout). */
  | { kind: "has_time" }
  /** The crew session saved with its outbox, conditionally on its version (a conflict is thrown: the batch is retried). */
  | { kind: "save_session"; session: StoredSession }
  /** The session's outbox marked performed (cleared), if the session is still at `version`. */
  | { kind: "clear_outbox"; claimId: string; version: number };

/** The answer to a `Request`, or `failed` for a request whose order failures the decider decides on. */
export type Observation =
  | { kind: "now"; now: number }
  | { kind: "claim"; claim: ClaimRecord | undefined }
  | { kind: "claim_update"; changed: boolean; record: ClaimRecord | undefined }
  | { kind: "admit"; admission: Admission }
  | { kind: "new_id"; id: string }
  | { kind: "create_claim"; result: CreateClaimResult }
  | { kind: "extract"; result: LlmResult<ClaimExtractionOutput> }
  | { kind: "verdict"; verdict: StoredVerdict | undefined }
  | { kind: "store_verdict"; verdict: StoredVerdict }
  | { kind: "record_execution"; verdict: StoredVerdict }
  | { kind: "mark_published" }
  | { kind: "order"; order: Order | undefined; absentFrom?: "shop_api" }
  | { kind: "ledger"; entry: LedgerEntry | undefined }
  | { kind: "customer_window"; window: CustomerWindow | undefined }
  | { kind: "reserve_customer"; result: CustomerReserveResult }
  | { kind: "reserve"; result: ReserveResult }
  | { kind: "release_customer" }
  | { kind: "review"; review: ReviewRecord | undefined }
  | { kind: "approved_alone"; cents: number; approvedCount: number }
  | { kind: "review_update"; changed: boolean; review: ReviewRecord | undefined }
  | { kind: "settlement"; settlement: SettlementRecord | undefined }
  | { kind: "settlement_update"; conflict: boolean }
  | { kind: "announce" }
  | { kind: "session"; session: StoredSession | undefined }
  | { kind: "sent_proposal"; proposal: PolicyProposal | undefined }
  | { kind: "has_time"; hasTime: boolean }
  /** The session saved: the outbox's effects still to perform (its own audit events went with the save). */
  | { kind: "save_session"; rest: Effect[] }
  | { kind: "clear_outbox" }
  /**
   * A request the decider observes order failures of (its `failuresObserved`) failed: the order source could not
   * answer (OrderSourceUnavailableError), or the order data is unusable (OrderDataError, KernelInputError).
   */
  | { kind: "failed"; code: typeof ORDER_SOURCE_UNAVAILABLE | "ORDER_DATA_INVALID"; message: string };

/** The observation answering a request of `kind`. */
export type ObservationOf<K extends Request["kind"]> = Extract<Observation, { kind: K | "failed" }>;
