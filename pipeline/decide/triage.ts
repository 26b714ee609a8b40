// Triage, decided (docs/kernel.md): before the crew starts, the kernel's order, category, window, amount, balance
// and customer layers run on the claim itself; a claim they reject is decided REJECT without a model call. Pure:
// a part of the orchestrator's decider (pipeline/decide/orchestrator.ts), whose shell reads the order and its
// ledger entry, stores the verdict once and publishes it as asked.
import { type LedgerEntry } from "../../core/kernel/index.ts";
import { canonicalize } from "../../core/crew/index.ts";
import { busEntry } from "../../core/kernel/events.ts";
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import { claimVerdictEvent } from "../../core/kernel/public-verdict.ts";
import { buildTriageVerdictRecord, triageIdempotencyKey } from "../../core/kernel/execution.ts";
import { triageClaim } from "../../core/kernel/kernel.ts";
import { severityForVerdict } from "../../core/integrity/index.ts";
import { KernelInputError, OrderDataError } from "../../core/integrity/index.ts";
import type { Order } from "../../core/integrity/index.ts";
import { claimAudit } from "./audit.ts";
import type { PipelineDeps } from "../deps.ts";
import type { Effect } from "../effects.ts";
import type { StoredVerdict } from "../ports.ts";
import { verdictToStore } from "./kernel-decision.ts";
import type { Decision } from "./kernel-decision.ts";
import { decidePublication, startPublication } from "./publication.ts";
import type { PublicationNext, PublicationState } from "./publication.ts";
import type { Observation } from "./requests.ts";
import { observedAs, within } from "./step.ts";
import type { Next, Step } from "./step.ts";

/** What triage decides with beyond the claim: the agent's contracts and the hash to key with. */
type TriagePolicy = Pick<PipelineDeps, "agent" | "sha256">;

/** The key a claim's triage verdict is stored under (never a proposal's: see `triageIdempotencyKey`). */
export function triageKey(record: ClaimRecord, policy: Pick<PipelineDeps, "sha256">): string | undefined {
  return record.claim ? triageIdempotencyKey(record.dfid, record.claim, policy.sha256) : undefined;
}

/**
 * Triages the stored claim against its order and that order's ledger entry at `decidedAt`: the REJECT decision with
 * its ClaimVerdict event and its audit (CLAIM_TRIAGED with the inputs, then KERNEL_VERDICT), or `undefined` when the
 * claim can pass and goes to the crew. Throws `KernelInputError` for corrupt order data (the crew path handles it).
 */
export function triageDecision(
  record: ClaimRecord,
  at: {
    order: Order | undefined;
    orderAbsentFrom?: "shop_api";
    ledgerEntry: LedgerEntry | undefined;
    decidedAt: string;
    now: number;
  },
  policy: TriagePolicy,
): Decision | undefined {
  const claim = record.claim;
  if (!claim) return undefined;
  const inputs = {
    claim,
    contract: policy.agent.contract,
    responsibility: policy.agent.responsibility,
    order: at.order,
    ...(at.orderAbsentFrom ? { orderAbsentFrom: at.orderAbsentFrom } : {}),
    ledgerEntry: at.ledgerEntry,
    receivedAt: record.received_at,
    decidedAt: at.decidedAt,
    claimId: record.claim_id,
    // Recorded as the kernel records it: replay checks a resubmitted claim's parent (found by npm run chaos once its
    // reviewers could resubmit).
    ...(record.parent_claim_id ? { parentClaimId: record.parent_claim_id } : {}),
  };
  const verdict = triageClaim(inputs);
  if (!verdict) return undefined;
  const verdictRecord = buildTriageVerdictRecord({
    verdict,
    claim,
    claimId: record.claim_id,
    dfid: record.dfid,
    decidedAt: at.decidedAt,
    policy: { contract: policy.agent.contract, responsibility: policy.agent.responsibility },
    ...(record.simulation_id ? { simulationId: record.simulation_id } : {}),
    ...(policy.sha256 ? { sha256: policy.sha256 } : {}),
  });
  const audit = [
    claimAudit(record, "CLAIM_TRIAGED", "RUNNING", at.now, {
      triage_inputs: JSON.parse(
        canonicalize({ ...inputs, dfid: record.dfid, order: at.order ?? null, ledgerEntry: at.ledgerEntry ?? null }),
      ),
    }),
    claimAudit(
      record,
      "KERNEL_VERDICT",
      "DECIDED",
      at.now,
      { ...verdictRecord, layer: verdict.layer, checks: verdict.checks },
      severityForVerdict(verdict.verdict),
    ),
  ];
  const event = claimVerdictEvent(verdictRecord, {
    order: at.order,
    claim,
    contract: policy.agent.contract,
    responsibility: policy.agent.responsibility,
    receivedAt: record.received_at,
  });
  return { verdict, record: verdictRecord, events: [busEntry("ClaimVerdict", event)], audit };
}

/** What triage ends in: the claim decided by the kernel's rules (its verdict published), or on to the crew. */
export type TriageOutcome = "TRIAGED" | "CREW";

/** Where triage stands, waiting for the answer to what it asked. */
export type TriageState =
  | { at: "verdict"; record: ClaimRecord; key: string; receipts: readonly Effect[] }
  /** The triage's instant. */
  | { at: "time"; record: ClaimRecord; key: string; receipts: readonly Effect[] }
  | { at: "order"; record: ClaimRecord; key: string; receipts: readonly Effect[]; now: number }
  | { at: "ledger"; record: ClaimRecord; key: string; receipts: readonly Effect[]; now: number; order: Order }
  | { at: "stored"; record: ClaimRecord; receipts: readonly Effect[] }
  | { at: "publication"; publication: PublicationState };

type TriageStep = Step<Next<TriageOutcome, TriageState>>;

/**
 * Triage of a claim whose crew has not started (the orchestrator's first step, docs/kernel.md): `TRIAGED` when the
 * kernel's rules decide it (now, or an earlier delivery whose verdict is stored), `CREW` when it goes to the crew as
 * before — it can pass, its order data cannot be used or the order source cannot answer (the crew path and the
 * kernel handle both: a person for corrupt data, the kernel's bounded wait for the source, docs/orders.md), or the
 * claim is no longer open. The money path is any REJECT's: nothing to reserve, the verdict stored once under the
 * triage key before it is published, published before the claim is DECIDED (which proves the publication), and a
 * redelivery finishes what a crash left (the stored verdict, never a new decision). `receipts` (the receipt a start
 * carried) are performed first when the claim is triaged, as their own list; else they are the caller's.
 */
export function startTriage(record: ClaimRecord, receipts: readonly Effect[], policy: TriagePolicy): TriageStep {
  const key = triageKey(record, policy);
  if (!key || !record.claim) return { effects: [], next: { done: "CREW" } };
  return { effects: [], next: { awaiting: { kind: "verdict", key }, state: { at: "verdict", record, key, receipts } } };
}

/** Triage's next step on the answer to what it asked. */
export function decideTriage(state: TriageState, observed: Observation, policy: TriagePolicy): TriageStep {
  const crew: TriageStep = { effects: [], next: { done: "CREW" } };
  // The order or its ledger entry could not be read (or used): the crew path handles it.
  if (observed.kind === "failed") return crew;
  switch (state.at) {
    case "verdict": {
      const { record, key, receipts } = state;
      const stored = observedAs(observed, "verdict").verdict;
      if (stored) return triaged(record, stored, true, receipts);
      if (record.status !== "RECEIVED" && record.status !== "RUNNING") return crew;
      return { effects: [], next: { awaiting: { kind: "now" }, state: { at: "time", record, key, receipts } } };
    }
    case "time": {
      const now = observedAs(observed, "now").now;
      // The order is read the way the kernel reads it (one port for every order reader).
      return {
        effects: [],
        next: {
          awaiting: { kind: "order", orderId: state.record.claim!.order_id },
          state: { ...state, at: "order", now },
          failureObserved: "order",
        },
      };
    }
    case "order": {
      const { order, absentFrom } = observedAs(observed, "order");
      if (!order) return decided(state, undefined, undefined, policy, absentFrom);
      return {
        effects: [],
        next: {
          awaiting: { kind: "ledger", orderId: order.order_id, scope: state.record.simulation_id },
          state: { ...state, at: "ledger", order },
          failureObserved: "order",
        },
      };
    }
    case "ledger":
      return decided(state, state.order, observedAs(observed, "ledger").entry, policy);
    case "stored":
      return triaged(state.record, observedAs(observed, "store_verdict").verdict, false, state.receipts);
    case "publication":
      return published(decidePublication(state.publication, observed));
  }
}

/** Triages against the order and its entry as read: a REJECT is stored once; anything else goes to the crew. */
function decided(
  state: { record: ClaimRecord; key: string; receipts: readonly Effect[]; now: number },
  order: Order | undefined,
  ledgerEntry: LedgerEntry | undefined,
  policy: TriagePolicy,
  orderAbsentFrom?: "shop_api",
): TriageStep {
  const { record, now } = state;
  let decision;
  try {
    const at = { order, ledgerEntry, decidedAt: new Date(now).toISOString(), now };
    decision = triageDecision(record, orderAbsentFrom ? { ...at, orderAbsentFrom } : at, policy);
  } catch (error) {
    if (!(error instanceof OrderDataError || error instanceof KernelInputError)) throw error;
    decision = undefined;
  }
  if (!decision) return { effects: [], next: { done: "CREW" } };
  const verdict = verdictToStore(state.key, record.claim_id, decision);
  return {
    effects: [],
    next: {
      awaiting: { kind: "store_verdict", verdict },
      state: { at: "stored", record, receipts: state.receipts },
    },
  };
}

/** The receipts first (their own list), then the verdict published and the claim recorded DECIDED. */
function triaged(
  record: ClaimRecord,
  stored: StoredVerdict,
  foundStored: boolean,
  receipts: readonly Effect[],
): TriageStep {
  const publication = published(startPublication(stored, record, { foundStored }));
  return receipts.length === 0 ? publication : { effects: receipts, next: { then: publication } };
}

function published(step: Step<PublicationNext>): TriageStep {
  return within(
    step,
    (publication): TriageState => ({ at: "publication", publication }),
    () => ({ effects: [], next: { done: "TRIAGED" } }),
  );
}
