// What the kernel's shell and its decider exchange (decide/kernel.ts): the requests the decider asks the shell to
// read or write, the observations the shell answers with, the states the decider waits in, and the outcome of a
// message. Plain data.
import type { CustomerReserveResult, CustomerWindow, LedgerEntry, ReserveResult } from "../../core/kernel/index.ts";
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import type { ReviewRecord } from "../../core/kernel/review.ts";
import type { ORDER_SOURCE_UNAVAILABLE } from "../../core/kernel/reason-codes.ts";
import type { AuditEvent, Order } from "../../core/integrity/index.ts";
import type { PipelineDeps, PipelineSettings } from "../deps.ts";
import type { ProposalMessage } from "../messages.ts";
import type { CustomerReserveRequest, ReserveRequest, StoredVerdict, VerdictOutcome } from "../ports.ts";
import type { PublicationObservation, PublicationRequest, PublicationState } from "./publication.ts";

/** What the kernel decides with beyond the message and what it reads: contracts, registry, hash, the order wait. */
export type KernelPolicy = Pick<PipelineDeps, "agent" | "registry" | "sha256"> & {
  settings: Pick<PipelineSettings, "orderSourceWaitMs">;
};

/** What the kernel did with a proposal message. */
export type KernelOutcome =
  | { outcome: "DECIDED"; verdict: StoredVerdict }
  | { outcome: "NEEDS_REVIEW"; reasonCode: string }
  /** The order source could not answer and the claim may still wait: retry the message later. Nothing was decided. */
  | { outcome: "RETRY"; reason: string }
  /** Not acted on: an unknown claim, another decision flow, or a claim not awaiting a decision. Nothing was written. */
  | { outcome: "REFUSED"; reason: string };

/** What the kernel asks the shell to read or write; the answer comes back as the observation of the same `kind`. */
export type KernelRequest =
  | PublicationRequest
  | { kind: "verdict"; key: string }
  | { kind: "store_verdict"; verdict: StoredVerdict }
  | { kind: "order"; orderId: string }
  | { kind: "ledger"; orderId: string; scope: string | undefined }
  | { kind: "customer_window"; customerId: string; scope: string | undefined }
  | { kind: "reserve_customer"; request: CustomerReserveRequest }
  | { kind: "reserve"; request: ReserveRequest }
  | { kind: "release_customer"; customerId: string; claimId: string; scope: string | undefined }
  | { kind: "record_execution"; key: string; outcome: VerdictOutcome }
  | { kind: "review"; claimId: string };

/**
 * The requests of deciding and executing: a failure of the order source (OrderSourceUnavailableError) or of the
 * order data (OrderDataError, KernelInputError) while the shell performs one of them is answered as `failed`, which
 * the kernel decides on (a wait, or a person); any other failure, or a failure of any other request, is thrown.
 */
export const ORDER_FAILURES_OBSERVED: ReadonlySet<KernelRequest["kind"]> = new Set([
  "order",
  "ledger",
  "customer_window",
  "reserve_customer",
  "reserve",
  "release_customer",
  "record_execution",
] as const);

/** The answer to a `KernelRequest`. */
export type KernelObservation =
  | PublicationObservation
  | { kind: "verdict"; verdict: StoredVerdict | undefined }
  | { kind: "store_verdict"; verdict: StoredVerdict }
  | { kind: "order"; order: Order | undefined }
  | { kind: "ledger"; entry: LedgerEntry | undefined }
  | { kind: "customer_window"; window: CustomerWindow | undefined }
  | { kind: "reserve_customer"; result: CustomerReserveResult }
  | { kind: "reserve"; result: ReserveResult }
  | { kind: "release_customer" }
  | { kind: "record_execution"; verdict: StoredVerdict }
  | { kind: "review"; review: ReviewRecord | undefined }
  /** A request of `ORDER_FAILURES_OBSERVED` failed: the order source could not answer, or the order data is unusable. */
  | { kind: "failed"; code: typeof ORDER_SOURCE_UNAVAILABLE | "ORDER_DATA_INVALID"; message: string };

/** What comes after a step: the outcome, a retry of the message (the shell throws KernelRetryError), or a request. */
export type KernelNext = { done: KernelOutcome } | { retry: string } | { awaiting: KernelRequest; state: KernelState };

/** The message, as delivered: `finalAttempt` when the queue will not deliver it again. */
export type Delivered = { message: ProposalMessage; finalAttempt: boolean };
/** The message with the claim it names, as loaded, and the proposal's idempotency key. */
export type Claimed = Delivered & { record: ClaimRecord; key: string };
/** Where a stored verdict came from: found stored (a redelivery) or stored now, with the order decided on. */
export type Settling = Claimed & { foundStored: boolean; decidedOrder: Order | undefined };
/** One reservation round of a PENDING verdict: what it reserves, since the execution's instant. */
export type Round = Settling & {
  now: number;
  limitCents: number;
  current: StoredVerdict;
  raced: AuditEvent[];
  round: number;
  refund: { order_id: string; amount_cents: number; amount_eur: number };
};
/** A round once it has the order it reserves on (and the order's amount in cents). */
export type Reserving = Round & { order: Order; orderCents: number };

/** Where the kernel stands with a message, waiting for the answer to what it asked. */
export type KernelState =
  /** Loaded: the claim the message names. */
  | ({ at: "claim" } & Delivered)
  | ({ at: "verdict" } & Claimed)
  /** The decision's instant. */
  | ({ at: "decision_time" } & Claimed)
  | ({ at: "order" } & Claimed & { now: number })
  | ({ at: "ledger" } & Claimed & { now: number; order: Order })
  | ({ at: "customer_window" } & Claimed & { now: number; order: Order; ledgerEntry: LedgerEntry | undefined })
  | ({ at: "stored" } & Claimed & { decidedOrder: Order | undefined })
  /** The execution's instant. */
  | ({ at: "execution_time" } & Settling & { stored: StoredVerdict })
  | ({ at: "refund_order" } & Round)
  | ({ at: "customer_reserved" } & Reserving)
  /** The customer's window refused: the order's entry, to decide again against. */
  | ({ at: "refused_entry" } & Reserving & { refused: Extract<CustomerReserveResult, { ok: false }> })
  | ({ at: "reserved" } & Reserving & { customer: boolean })
  | ({ at: "customer_released" } & Reserving & { result: ReserveResult })
  /** The customer's window as it stands after the reservation. */
  | ({ at: "window_after" } & Reserving & { result: ReserveResult })
  | ({ at: "recorded" } & Settling)
  | ({ at: "publication" } & Claimed & { stored: StoredVerdict; publication: PublicationState })
  /** The escalation's review: a reviewer may have approved it before the claim was recorded DECIDED. */
  | ({ at: "approval" } & Claimed & { stored: StoredVerdict })
  /** The instant a failure of the order source or its data is decided at. */
  | ({ at: "failure_time" } & Claimed & { failure: Extract<KernelObservation, { kind: "failed" }> });
