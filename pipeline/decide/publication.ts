// Publishing a settled verdict and recording its claim DECIDED, decided (docs/kernel.md). Its events go to the bus
// before its claim is recorded DECIDED with its verdict_id, so that record proves the publication: the verdict item
// is not written a third time to say so. Only a verdict whose claim does not take it (a REFUSED execution, or a
// claim that moved on meanwhile) is marked `published` on its own item. A PENDING verdict is never published either
// way: execution settles first. The kernel's decider and triage's run this one; the shell performs what it asks.
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import type { ClaimVerdictEvent, RefundExecutedDetail, ReturnRequestedDetail } from "../../core/kernel/events.ts";
import { proposalOutputOf } from "../../core/claim/proposal-output.ts";
import type { Effect } from "../effects.ts";
import type { StoredVerdict } from "../ports.ts";
import type { ClaimUpdate, Observation } from "./requests.ts";
import { observedAs } from "./step.ts";
import type { Next, Step } from "./step.ts";

/** True when `stored` was published: marked so, or its claim is recorded DECIDED with its verdict_id. */
export function verdictPublished(
  stored: Pick<StoredVerdict, "published" | "execution"> & { readonly record: { readonly verdict_id: string } },
  claim: Pick<ClaimRecord, "status" | "verdict_id" | "return"> | undefined,
): boolean {
  if (stored.published) return true;
  if (stored.execution === "PENDING" || claim?.verdict_id !== stored.record.verdict_id) return false;
  // A claim that took a return-required ACCEPT moves on from AWAITING_RETURN; its `return` still proves it took it.
  return claim.status === "DECIDED" || claim.return?.verdict_id === stored.record.verdict_id;
}

/** What publishing a stored verdict does: its audit appended, the review an ESCALATE opens, its events published. */
export function publishEffects(stored: StoredVerdict): Effect[] {
  return [
    ...(stored.audit ?? []).map((event): Effect => ({ kind: "audit", event })),
    ...(stored.review ? [{ kind: "review_open" as const, review: stored.review }] : []),
    ...(stored.events.length > 0 ? [{ kind: "publish" as const, entries: stored.events }] : []),
  ];
}

/**
 * The claim recorded DECIDED with the stored verdict and the proposal it decided (only from an open status: a repeat
 * changes nothing). The proposal is written here, with the claim's final update, not by the crew's last step: a
 * triaged claim has none.
 */
export function decidedUpdate(stored: StoredVerdict, now: number, proposal?: unknown): ClaimUpdate {
  const { record } = stored;
  const output = proposalOutputOf(proposal);
  // The verdict's amount in its currency and its lines, as its ClaimVerdict event carries them (absent on a verdict
  // stored before they existed).
  const event = stored.events.find((e) => e.detailType === "ClaimVerdict")?.detail as ClaimVerdictEvent | undefined;
  // A return-required ACCEPT waits for the item (docs/returns.md): reserved, not yet executed.
  const asked = stored.events.find((e) => e.detailType === "ReturnRequested")?.detail as
    | ReturnRequestedDetail
    | undefined;
  const refund = stored.events.find((e) => e.detailType === "RefundExecuted")?.detail as
    | RefundExecutedDetail
    | undefined;
  const credit = asked?.credit ?? refund?.credit;
  // An exchange (docs/returns.md#outcomes): announced, reserved, and no money moves.
  const exchange = stored.events.some((e) => e.detailType === "ExchangeRequested");
  return {
    kind: "claim_update",
    claimId: stored.claim_id,
    patch: {
      status: asked ? "AWAITING_RETURN" : "DECIDED",
      verdict: record.verdict,
      verdict_id: record.verdict_id,
      reason_code: record.reason_code,
      reason: record.reason,
      executed: asked || exchange ? false : stored.execution === "EXECUTED",
      ...(asked ? { return: asked } : {}),
      // Store credit instead of money back (docs/returns.md#outcomes), as the refund's events carry it.
      ...(credit ? { outcome: "STORE_CREDIT" as const, credit } : {}),
      ...(exchange ? { outcome: "EXCHANGE" as const } : {}),
      ...(event?.amount !== undefined ? { amount: event.amount } : {}),
      ...(event?.lines ? { lines: event.lines } : {}),
      ...(output ? { proposal: output } : {}),
      updated_at: new Date(now).toISOString(),
    },
    onlyFrom: ["RECEIVED", "RUNNING"],
  };
}

/** Where a publication stands, waiting for the answer to what it asked. */
export type PublicationState =
  /** A verdict found stored (a redelivery): its claim read again, so a publication proven since is not repeated. */
  | { at: "reread"; stored: StoredVerdict; proposal?: unknown }
  /** The instant the claim is recorded DECIDED at. */
  | { at: "record_time"; stored: StoredVerdict; proposal?: unknown; publishedHere: boolean }
  /** The claim's DECIDED update: taken or not. */
  | { at: "recorded"; stored: StoredVerdict; publishedHere: boolean }
  /** The verdict marked published. */
  | { at: "marked" };

/** What comes after a publication step: ask the shell, or the publication is done. */
export type PublicationNext = Next<true, PublicationState>;

/**
 * Starts publishing `stored` for `claim` as loaded (`foundStored`: the verdict was found stored, a redelivery, so the
 * claim is read again first). Publishes unless already published, then records the claim DECIDED with it (not for a
 * REFUSED execution), then marks the verdict published when this delivery published it and the claim did not take
 * it. A crash between the publish and the claim's update leaves neither: the redelivery publishes the same entries
 * again (at least once, never lost). The decision's audit is stored with the verdict, so whichever delivery publishes
 * it appends it (a crash loses none, a race adds none). `proposal`: what the kernel's update records with the claim.
 */
export function startPublication(
  stored: StoredVerdict,
  claim: ClaimRecord | undefined,
  opts: { foundStored: boolean; proposal?: unknown },
): Step<PublicationNext> {
  const proposal = "proposal" in opts ? { proposal: opts.proposal } : {};
  if (verdictPublished(stored, claim)) return recordDecided(stored, proposal, false);
  if (opts.foundStored)
    return {
      effects: [],
      next: { awaiting: { kind: "claim", claimId: stored.claim_id }, state: { at: "reread", stored, ...proposal } },
    };
  return publish(stored, proposal);
}

/** The next step of a publication on the answer to what it asked. */
export function decidePublication(state: PublicationState, observed: Observation): Step<PublicationNext> {
  switch (state.at) {
    case "reread": {
      const claim = observedAs(observed, "claim").claim;
      const proposal = "proposal" in state ? { proposal: state.proposal } : {};
      return verdictPublished(state.stored, claim)
        ? recordDecided(state.stored, proposal, false)
        : publish(state.stored, proposal);
    }
    case "record_time": {
      const update = decidedUpdate(state.stored, observedAs(observed, "now").now, state.proposal);
      return {
        effects: [],
        next: {
          awaiting: { kind: "claim_update", update },
          state: { at: "recorded", stored: state.stored, publishedHere: state.publishedHere },
        },
      };
    }
    case "recorded": {
      const { changed } = observedAs(observed, "claim_update");
      const { stored } = state;
      // The update that took this verdict: the claim now proves the publication.
      return markUnlessTaken(stored, state.publishedHere, changed);
    }
    case "marked":
      observedAs(observed, "mark_published");
      return { effects: [], next: { done: true } };
  }
}

function publish(stored: StoredVerdict, proposal: { proposal?: unknown }): Step<PublicationNext> {
  const { next } = recordDecided(stored, proposal, true);
  return { effects: publishEffects(stored), next };
}

/** The claim recorded DECIDED (its instant read first), unless the execution was REFUSED. */
function recordDecided(
  stored: StoredVerdict,
  proposal: { proposal?: unknown },
  publishedHere: boolean,
): Step<PublicationNext> {
  if (stored.execution === "REFUSED") return markUnlessTaken(stored, publishedHere, false);
  return {
    effects: [],
    next: { awaiting: { kind: "now" }, state: { at: "record_time", stored, ...proposal, publishedHere } },
  };
}

function markUnlessTaken(stored: StoredVerdict, publishedHere: boolean, taken: boolean): Step<PublicationNext> {
  if (!publishedHere || taken) return { effects: [], next: { done: true } };
  return {
    effects: [],
    next: { awaiting: { kind: "mark_published", key: stored.idempotency_key }, state: { at: "marked" } },
  };
}
