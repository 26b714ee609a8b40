// The kernel's decider (pipeline/decide/kernel.ts), as its shell sees it: what it decides with, the states it waits
// in for the answers to its requests (decide/requests.ts), and the outcome of a message. Plain data.
import type { CustomerReserveResult, LedgerEntry, LineReserve, ReserveResult } from "../../core/kernel/index.ts";
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import type { AuditEvent, Order } from "../../core/integrity/index.ts";
import type { PipelineDeps, PipelineSettings } from "../deps.ts";
import type { ProposalMessage } from "../messages.ts";
import type { StoredVerdict } from "../ports.ts";
import type { PublicationState } from "./publication.ts";
import type { Observation } from "./requests.ts";
import type { Next } from "./step.ts";

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

/** What comes after a step (decide/step.ts); done with `retry`: the message is retried (the shell throws KernelRetryError). */
export type KernelNext = Next<KernelOutcome | { retry: string }, KernelState>;

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
export type Reserving = Round & { order: Order; orderCents: number; lines?: LineReserve | undefined };

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
  | ({ at: "failure_time" } & Claimed & { failure: Extract<Observation, { kind: "failed" }> });
