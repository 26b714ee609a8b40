// Kernel service: decide a proposal once per idempotency key, from the STORED claim (never a queue message's copy),
// and publish only the final verdict (docs/kernel.md). The shell of decide/kernel.ts: it loads the claim the message
// names, then loops — the decider's effects performed in order, what it asks read or written, the answer fed back —
// until the decider has an outcome. Every decision (what to read, store, reserve, publish, record) is the decider's;
// every step is repaired by a redelivery; no step needs a transaction.
import { KernelInputError, OrderDataError } from "../core/integrity/index.ts";
import type { ClaimRecord } from "../core/kernel/claim-record.ts";
import { KernelRetryError, OrderSourceUnavailableError } from "./errors.ts";
import type { PipelineDeps } from "./deps.ts";
import { decideKernel, kernelStart } from "./decide/kernel.ts";
import { ORDER_FAILURES_OBSERVED } from "./decide/kernel-protocol.ts";
import type { KernelObservation, KernelOutcome, KernelRequest } from "./decide/kernel-protocol.ts";
import { decidePublication, startPublication } from "./decide/publication.ts";
import type { PublicationObservation, PublicationRequest } from "./decide/publication.ts";
import type { ProposalMessage } from "./messages.ts";
import { performEffects } from "./perform.ts";
import type { StoredVerdict } from "./ports.ts";

/** What the kernel service runs with. */
export type KernelDeps = Pick<
  PipelineDeps,
  | "verdicts"
  | "orders"
  | "ledger"
  | "claims"
  | "audit"
  | "publisher"
  | "queues"
  | "clock"
  | "agent"
  | "registry"
  | "reviews"
  | "sha256"
  | "settings"
>;

/** The ports the shell reads and writes through (the decider gets the rest). */
type ShellDeps = Omit<KernelDeps, "agent" | "registry" | "sha256" | "settings">;

/** How the message is delivered: `finalAttempt` when the queue will not deliver it again (its last receive). */
type KernelDelivery = { finalAttempt?: boolean };

/** Handles one proposal message. Throws KernelRetryError when the message is to be retried (a race lost too often). */
export async function handleProposal(
  message: ProposalMessage,
  deps: KernelDeps,
  delivery: KernelDelivery = {},
): Promise<KernelOutcome> {
  const claim = await deps.claims.getClaim(message.claim_id);
  let step = decideKernel(kernelStart(message, delivery), { kind: "claim", claim }, deps);
  for (;;) {
    if (step.effects.length > 0) await performEffects(step.effects, deps);
    const { next } = step;
    if ("done" in next) return next.done;
    if ("retry" in next) throw new KernelRetryError(next.retry);
    step = decideKernel(next.state, await observe(next.awaiting, deps), deps);
  }
}

/**
 * Publishes a settled verdict unless it was published already, then records the claim DECIDED with it
 * (decide/publication.ts): triage's verdicts take the kernel's path. `foundStored`: the verdict was found stored
 * (a redelivery), so the claim is read again first.
 */
export async function publishAndRecordDecided(
  stored: StoredVerdict,
  claim: ClaimRecord,
  deps: ShellDeps,
  { foundStored }: { foundStored: boolean },
): Promise<void> {
  let step = startPublication(stored, claim, { foundStored });
  for (;;) {
    if (step.effects.length > 0) await performEffects(step.effects, deps);
    const { next } = step;
    if ("done" in next) return;
    step = decidePublication(next.state, (await observe(next.awaiting, deps)) as PublicationObservation);
  }
}

/**
 * Performs what the decider asked and answers with what came back. A failure of the order source or of the order
 * data while deciding or executing (ORDER_FAILURES_OBSERVED) is answered as `failed`: the decider decides on it.
 */
async function observe(request: KernelRequest | PublicationRequest, deps: ShellDeps): Promise<KernelObservation> {
  try {
    return await perform(request, deps);
  } catch (error) {
    if (!ORDER_FAILURES_OBSERVED.has(request.kind)) throw error;
    if (error instanceof OrderSourceUnavailableError)
      return { kind: "failed", code: error.code, message: error.message };
    if (error instanceof OrderDataError || error instanceof KernelInputError)
      return { kind: "failed", code: "ORDER_DATA_INVALID", message: error.message };
    throw error;
  }
}

async function perform(request: KernelRequest, deps: ShellDeps): Promise<KernelObservation> {
  switch (request.kind) {
    case "claim":
      return { kind: "claim", claim: await deps.claims.getClaim(request.claimId) };
    case "now":
      return { kind: "now", now: deps.clock.now() };
    case "claim_update": {
      const { claimId, patch, onlyFrom } = request.update;
      const { changed } = await deps.claims.updateClaim(claimId, patch, onlyFrom);
      return { kind: "claim_update", changed };
    }
    case "mark_published":
      await deps.verdicts.markPublished(request.key);
      return { kind: "mark_published" };
    case "verdict":
      return { kind: "verdict", verdict: await deps.verdicts.getVerdict(request.key) };
    case "store_verdict":
      return { kind: "store_verdict", verdict: await deps.verdicts.putVerdictOnce(request.verdict) };
    case "order":
      return { kind: "order", order: await deps.orders.getOrder(request.orderId) };
    case "ledger":
      return { kind: "ledger", entry: await deps.ledger.get(request.orderId, request.scope) };
    case "customer_window":
      return {
        kind: "customer_window",
        window: await deps.ledger.getCustomerWindow(request.customerId, request.scope),
      };
    case "reserve_customer":
      return { kind: "reserve_customer", result: await deps.ledger.reserveCustomer(request.request) };
    case "reserve":
      return { kind: "reserve", result: await deps.ledger.reserve(request.request) };
    case "release_customer":
      await deps.ledger.releaseCustomer(request.customerId, request.claimId, request.scope);
      return { kind: "release_customer" };
    case "record_execution":
      return { kind: "record_execution", verdict: await deps.verdicts.recordExecution(request.key, request.outcome) };
    case "review":
      return { kind: "review", review: await deps.reviews.getReview(request.claimId) };
  }
}
