// The orchestrator's process, decided: one batch of a claim's crew-queue messages (a FIFO batch may hold several of a
// group), from the loaded crew session and claim to each message's outcome, as one `decideCrew(state, observation)
// → { effects, next }` the shell (pipeline/orchestrator.ts) loops over:
//   1. the latest step's outbox is performed unless it is marked, or proven by what arrives (decide/outbox.ts): an
//      answer to its agent step, the claim's hold on that step, the claim's verdict on its proposal. Unproven, the
//      redelivery of the message that made it performs it again (a repair), and the claim is read again;
//   2. no crew yet: triage first (decide/triage.ts) — a claim the kernel's rules reject is decided without a model;
//   3. one pure batch step of the crew at one instant (decide/crew-step.ts); a re-armed timer at once;
//   4. one conditional save of snapshot + outbox (a lost race throws: the whole group is retried, and the engine
//      ignores what it already applied), the rest of the outbox performed, then marked unless its witness proves it;
//      a proof no save supersedes is recorded by the marker (an answer is gone once handled);
//   5. the audit an answer carries that made no step (a duplicate, a late one, a claim gone) is appended last.
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import type { AuditEvent } from "../../core/integrity/index.ts";
import type { Effect } from "../effects.ts";
import type { CrewQueueMessage } from "../messages.ts";
import type { StoredSession } from "../ports.ts";
import { crewStep } from "./crew-step.ts";
import type { CrewPolicy, OrchestratorOutcome } from "./crew-step.ts";
import { outboxNeedsMarker, outboxProof, outboxRepair, witnessStepId } from "./outbox.ts";
import type { Observation, Request } from "./requests.ts";
import { observedAs, within } from "./step.ts";
import type { Next, Step } from "./step.ts";
import { decideTriage, startTriage } from "./triage.ts";
import type { TriageOutcome, TriageState } from "./triage.ts";

export type { OrchestratorOutcome } from "./crew-step.ts";

/** The batch: one claim's messages, each with the audit it carries (never given to the crew). */
export interface CrewBatch {
  readonly claimId: string;
  readonly messages: readonly CrewQueueMessage[];
  readonly carried: readonly (readonly AuditEvent[])[];
}

/** The batch once its stored outbox is performed or proven, with what the crew step needs. */
interface Loaded extends CrewBatch {
  /** The session as loaded, its outbox emptied; undefined: the crew has not started. */
  readonly session: StoredSession | undefined;
  readonly claim: ClaimRecord | undefined;
  readonly repaired: boolean;
  readonly answered: string | undefined;
  /** The version whose outbox a proof showed performed: marked if nothing supersedes it. */
  readonly proven: number | undefined;
}

/** Where the orchestrator stands with a batch, waiting for the answer to what it asked. */
export type CrewState =
  /** The loads: the crew session, then the claim. */
  | ({ at: "loaded" } & CrewBatch)
  /** The instant an unproven outbox's repair is decided at. */
  | ({ at: "repair_time" } & CrewBatch & { session: StoredSession; claim: ClaimRecord | undefined })
  /** The repaired outbox marked. */
  | ({ at: "repaired" } & CrewBatch & { session: StoredSession })
  /** The claim read again: what the outbox did to it (its start, its hold) is what the crew step sees. */
  | ({ at: "reloaded" } & CrewBatch & { session: StoredSession })
  | ({ at: "triage" } & Loaded & { claim: ClaimRecord; stepped: readonly number[]; triage: TriageState })
  /** The crew step's instant. */
  | ({ at: "step_time" } & Loaded & { claim: ClaimRecord; stepped: readonly number[] })
  | ({ at: "saved" } & CrewBatch & Done & { version: number; unmarked: boolean })
  /** An outbox marked: the batch is done. */
  | ({ at: "settled" } & CrewBatch & Done);

/** Each message's outcome, and the messages whose carried audit went into a step. */
interface Done {
  readonly outcomes: readonly OrchestratorOutcome[];
  readonly stepped: readonly number[];
}

/** The first observation: what the shell loaded for the batch. */
export type CrewObservation =
  | Observation
  | { kind: "loaded"; session: StoredSession | undefined; claim: ClaimRecord | undefined };

type CrewStep = Step<Next<OrchestratorOutcome[], CrewState>>;

/** The orchestrator's next step for a batch on the answer to what it asked last. */
export function decideCrew(state: CrewState, observed: CrewObservation, policy: CrewPolicy): CrewStep {
  switch (state.at) {
    case "loaded": {
      if (observed.kind !== "loaded") throw new Error(`decideCrew: asked for the loads, answered ${observed.kind}`);
      return loaded(batchOf(state), observed.session, observed.claim, policy);
    }
    case "repair_time": {
      const now = observedAs(observed as Observation, "now").now;
      const { session, claim } = state;
      const batch = batchOf(state);
      // Only the redelivery of the message that made a witnessed step sends its step again (decide/outbox.ts).
      const repair = outboxRepair(session.outbox, state.messages, now);
      if (repair === undefined) return afterOutbox(batch, emptied(session), claim, false, undefined, undefined, policy);
      return {
        effects: repair,
        next: {
          awaiting: { kind: "clear_outbox", claimId: state.claimId, version: session.version },
          state: { ...batch, at: "repaired", session },
        },
      };
    }
    case "repaired":
      observedAs(observed as Observation, "clear_outbox");
      return ask(
        { kind: "claim", claimId: state.claimId },
        { ...batchOf(state), at: "reloaded", session: state.session },
      );
    case "reloaded": {
      const claim = observedAs(observed as Observation, "claim").claim;
      return afterOutbox(batchOf(state), emptied(state.session), claim, true, undefined, undefined, policy);
    }
    case "triage": {
      const { triage, ...rest } = state;
      return triaging(rest, decideTriage(triage, observed as Observation, policy));
    }
    case "step_time": {
      const now = observedAs(observed as Observation, "now").now;
      const { at: _at, stepped, ...loadedState } = state;
      const decided = crewStep({ ...loadedState, record: state.claim }, now, policy);
      const all = [...stepped, ...decided.stepped];
      const done = { outcomes: decided.outcomes, stepped: all };
      if (!decided.save) return seq(decided.rearm, settle(loadedState, done));
      const { session, unmarked } = decided.save;
      return {
        effects: decided.rearm,
        next: {
          awaiting: { kind: "save_session", session },
          state: { ...batchOf(state), at: "saved", ...done, version: session.version, unmarked },
        },
      };
    }
    case "saved": {
      // The save recorded the step's own audit events with the session; the rest is performed after it. It supersedes
      // the outbox before it, performed or proven above: that one needs no marker now.
      const { rest } = observedAs(observed as Observation, "save_session");
      const done = { outcomes: state.outcomes, stepped: state.stepped };
      const marker = rest.length > 0 && (!state.unmarked || outboxNeedsMarker(rest));
      if (!marker) return seq(rest, finish(state, done));
      return {
        effects: rest,
        next: {
          awaiting: { kind: "clear_outbox", claimId: state.claimId, version: state.version },
          state: { ...batchOf(state), at: "settled", ...done },
        },
      };
    }
    case "settled":
      observedAs(observed as Observation, "clear_outbox");
      return finish(state, state);
  }
}

/** The state a batch starts in: the shell loads the claim's session and the claim and gives them as `loaded`. */
export function crewStart(batch: CrewBatch): CrewState {
  return { at: "loaded", ...batchOf(batch) };
}

function batchOf({ claimId, messages, carried }: CrewBatch): CrewBatch {
  return { claimId, messages, carried };
}

function emptied(session: StoredSession): StoredSession {
  return { ...session, outbox: [] };
}

function ask(awaiting: Request, state: CrewState): CrewStep {
  return { effects: [], next: { awaiting, state } };
}

/** Two lists of effects, each performed on its own (a list's audit events are one stored item). */
function seq(effects: readonly Effect[], step: CrewStep): CrewStep {
  if (effects.length === 0) return step;
  if (step.effects.length === 0) return { effects, next: step.next };
  return { effects, next: { then: step } };
}

/**
 * The latest step's outbox is performed unless it is marked (empty) or proven by what arrives; an unproven one is
 * repaired by the redelivery of the message that made it (the instant read first).
 */
function loaded(
  batch: CrewBatch,
  session: StoredSession | undefined,
  claim: ClaimRecord | undefined,
  policy: CrewPolicy,
): CrewStep {
  if (!session || session.outbox.length === 0)
    return afterOutbox(batch, session, claim, false, undefined, undefined, policy);
  const provenBy = outboxProof(session.outbox, { messages: batch.messages, claim, sha256: policy.sha256 });
  if (provenBy === undefined) return ask({ kind: "now" }, { ...batch, at: "repair_time", session, claim });
  const answered = provenBy === "answered" ? witnessStepId(session.outbox) : undefined;
  // A proof that no save supersedes below is recorded by the marker; the kernel's verdict needs none.
  const proven = provenBy !== "decided" ? session.version : undefined;
  return afterOutbox(batch, emptied(session), claim, false, answered, proven, policy);
}

/** With the outbox before handled: nothing for a claim gone (or without its claim yet), triage first, or the crew. */
function afterOutbox(
  batch: CrewBatch,
  session: StoredSession | undefined,
  claim: ClaimRecord | undefined,
  repaired: boolean,
  answered: string | undefined,
  proven: number | undefined,
  policy: CrewPolicy,
): CrewStep {
  const base: Loaded = { ...batch, session, claim, repaired, answered, proven };
  const quiet: OrchestratorOutcome = repaired ? "REPAIRED" : "IGNORED";
  if (!claim || !claim.claim) return settle(base, { outcomes: batch.messages.map(() => quiet), stepped: [] });
  const withClaim = { ...base, claim };
  // No crew yet: triage first (docs/kernel.md). A claim the kernel's rules reject is decided without a model call;
  // a redelivery (or the sweep's tick) finishes a triage a crash interrupted.
  if (!session && policy.settings.triage !== false) {
    // A start's carried receipt goes into the audit before a triage verdict's events (or into the crew's first step).
    const starts = batch.messages.flatMap((m, i) => (m.type === "claim.start" ? [i] : []));
    const receipts = starts.flatMap((i) => batch.carried[i]!.map((event) => ({ kind: "audit" as const, event })));
    return triaging({ ...withClaim, stepped: starts }, startTriage(claim, receipts, policy));
  }
  return ask({ kind: "now" }, { ...withClaim, at: "step_time", stepped: [] });
}

/** Where a triage step leaves the batch: asking on its behalf, TRIAGED, or on to the crew step. */
function triaging(
  state: Loaded & { claim: ClaimRecord; stepped: readonly number[] },
  step: Step<Next<TriageOutcome, TriageState>>,
): CrewStep {
  const { at: _at, ...loadedState } = state as typeof state & { at?: string };
  return within(
    step,
    (triage): CrewState => ({ ...loadedState, at: "triage", triage }),
    (outcome) =>
      outcome === "TRIAGED"
        ? finish(state, { outcomes: state.messages.map(() => "TRIAGED"), stepped: state.stepped })
        : ask({ kind: "now" }, { ...loadedState, at: "step_time" }),
  );
}

/** Done without a save: the outbox a proof showed performed is marked first. */
function settle(state: Loaded, done: Done): CrewStep {
  if (state.proven === undefined) return finish(state, done);
  return ask(
    { kind: "clear_outbox", claimId: state.claimId, version: state.proven },
    { ...batchOf(state), at: "settled", ...done },
  );
}

/** The audit a message carries that made no step (a duplicate, a late answer, a claim gone) is appended last. */
function finish(batch: CrewBatch, done: Done): CrewStep {
  const left = batch.carried.flatMap((audit, i) => (done.stepped.includes(i) ? [] : audit));
  const next = { done: [...done.outcomes] };
  return { effects: left.map((event) => ({ kind: "audit" as const, event })), next };
}
