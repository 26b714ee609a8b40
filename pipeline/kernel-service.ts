// Kernel service: decide a proposal once per idempotency key, from the STORED claim (never a queue message's copy),
// and publish only the final verdict (docs/kernel.md). The shell of decide/kernel.ts: it loads the claim the message
// names, then loops — the decider's effects performed in order, what it asks read or written, the answer fed back —
// until the decider has an outcome. Every decision (what to read, store, reserve, publish, record) is the decider's;
// every step is repaired by a redelivery; no step needs a transaction.
import { KernelRetryError } from "./errors.ts";
import type { PipelineDeps } from "./deps.ts";
import { decideKernel, kernelStart } from "./decide/kernel.ts";
import type { KernelOutcome } from "./decide/kernel-protocol.ts";
import type { ProposalMessage } from "./messages.ts";
import { runDecider } from "./perform.ts";

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

/** How the message is delivered: `finalAttempt` when the queue will not deliver it again (its last receive). */
type KernelDelivery = { finalAttempt?: boolean };

/** Handles one proposal message. Throws KernelRetryError when the message is to be retried (a race lost too often). */
export async function handleProposal(
  message: ProposalMessage,
  deps: KernelDeps,
  delivery: KernelDelivery = {},
): Promise<KernelOutcome> {
  const claim = await deps.claims.getClaim(message.claim_id);
  const first = decideKernel(kernelStart(message, delivery), { kind: "claim", claim }, deps);
  const outcome = await runDecider(first, (state, observed) => decideKernel(state, observed, deps), deps);
  if ("retry" in outcome) throw new KernelRetryError(outcome.retry);
  return outcome;
}
