// What every step of a replay shares: the claim's recorded events as read, the steps reported so far, and the
// means to take a stage's events (each once) and to report a step IDENTICAL, DIFFERENT or INCOMPLETE.
import { canonicalize } from "../../crew/index.ts";
import type { AuditEvent, ResponsibilityContract } from "../../integrity/index.ts";
import type { CrewFailureCause } from "../../agents/crew.ts";
import { STAGE_EVENTS } from "./events.ts";
import { canonicalOf } from "./memo.ts";
import type { ReplayMemo } from "./memo.ts";
import type { ReplayDetails, ReplayStage, ReplayableKind } from "./events.ts";

/** IDENTICAL: every step reproduces; DIFFERENT: a step gives another result; INCOMPLETE: something could not be replayed or is missing. */
export type ReplayStatus = "IDENTICAL" | "DIFFERENT" | "INCOMPLETE";

/** The steps a replay reports on. */
export type ReplayStepName =
  | "intake"
  | "extraction"
  | "crew"
  | "self_check"
  | "proposal"
  | "kernel"
  | "execution"
  | "review"
  | "return"
  | "audit";

/** One reported step of a replay; a step with several problems is reported once per problem. */
export interface ReplayStep {
  step: ReplayStepName;
  status: ReplayStatus;
  detail: string;
  recorded?: unknown;
  replayed?: unknown;
}

/** The result of replaying one claim. */
export interface ReplayResult {
  claimId: string;
  /** INCOMPLETE when any step is, else DIFFERENT when any step is, else IDENTICAL. */
  status: ReplayStatus;
  /** How the claim ends on replay (absent when replay stopped before the end). */
  outcome?: "ACCEPT" | "REJECT" | "ESCALATE" | "NEEDS_REVIEW";
  reasonCode?: string;
  /** The stages (STAGE_EVENTS) whose events were found, in flow order. */
  path: ReplayStage[];
  steps: ReplayStep[];
  /** The claim's personal fields erased by `claims erase` (`CLAIM_RECEIVED #1 input.claim_text`, …): shown as erased. */
  erased?: string[];
}

/** Replay options: the responsibility contract to self-check with (default: the one the claim's audit records). */
export interface ReplayOptions {
  responsibility?: ResponsibilityContract;
  /**
   * The claim's review as stored, when the caller has it. The audit alone cannot show that a person's final
   * decision was deleted (a pending review is a complete flow); the stored review can, so replay then
   * requires REVIEW_DECIDED for a decided review, and refuses one for a pending review.
   */
  review?: { status: string; decision?: string | undefined; reviewer?: string | undefined; note?: string | undefined };
  /**
   * The claim's record as stored, when the caller has it: its `parent_claim_id` (the claim a reviewer's RESUBMIT
   * corrected, absent otherwise) must be the one the audit records, so an audit that drops or changes the parent
   * (and with it the escalation of a resubmitted claim) does not replay IDENTICAL.
   */
  claimRecord?: { parent_claim_id?: string | undefined };
  /**
   * Reads to share with other replays of the same event objects (`replayMemo()`): for a caller replaying many edited
   * copies of one audit. Its events must not change in place while it is in use, nor the values a result holds.
   */
  memo?: ReplayMemo;
}

/** One of the claim's recorded events, with its 1-based position among them and its parsed details. */
export interface Recorded {
  n: number;
  event: AuditEvent;
  parsed?: unknown;
  error?: string;
}

/** A stage's event found and read. */
export interface Found<K extends ReplayableKind> {
  r: Recorded;
  d: ReplayDetails<K>;
  raw: Record<string, unknown>;
}

/** The events of a stage, by kind, found and read. */
export type StageFinds<S extends ReplayStage> = {
  [K in Extract<(typeof STAGE_EVENTS)[S][number], ReplayableKind>]: Found<K>;
};

/** What every event of the flow shares: the claim, its flow id, its run and when it was received. */
export interface Flow {
  claimId: string;
  dfid: string;
  receivedAt: string;
  simulationId?: string;
  /** The claim a reviewer's RESUBMIT corrected, as CLAIM_RECEIVED records it. */
  parentClaimId?: string;
}

/** One replay under way: the claim's events, which were used and reported, the steps and path so far, the outcome. */
export interface Ctx {
  claimId: string;
  all: readonly AuditEvent[];
  mine: Recorded[];
  used: Set<number>;
  reported: Set<number>;
  steps: ReplayStep[];
  path: ReplayStage[];
  opts: ReplayOptions;
  outcome?: ReplayResult["outcome"];
  reasonCode?: string;
  /** A person's decision on the claim's review, when one was recorded. */
  review?: string;
  /** The step error whose delivery ended the crew in failure, if one did. */
  crewFailureCause?: CrewFailureCause;
}

export const same = (a: unknown, b: unknown) =>
  a === undefined || b === undefined ? a === b : canonicalize(a) === canonicalize(b);
/** `same`, the recorded side's canonical JSON remembered in `memo` (its values do not change while it is in use). */
function sameAsRecorded(recorded: unknown, replayed: unknown, memo: ReplayMemo | undefined): boolean {
  if (recorded === undefined || replayed === undefined) return recorded === replayed;
  return canonicalOf(recorded, memo) === canonicalize(replayed);
}
export const label = (r: Recorded) => `${r.event.event_type} #${r.n}`;
export const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** Collects one step's problems; `done` reports the step IDENTICAL only if it had none. */
export function scope(ctx: Ctx, step: ReplayStepName) {
  let problems = 0;
  const push = (status: ReplayStatus, detail: string, recorded?: unknown, replayed?: unknown) => {
    if (status !== "IDENTICAL") problems++;
    ctx.steps.push({
      step,
      status,
      detail,
      ...(recorded === undefined ? {} : { recorded }),
      ...(replayed === undefined ? {} : { replayed }),
    });
  };
  return {
    incomplete: (detail: string) => push("INCOMPLETE", detail),
    different: (detail: string, recorded?: unknown, replayed?: unknown) =>
      push("DIFFERENT", detail, recorded, replayed),
    /** Reports DIFFERENT unless `recorded` and `replayed` are the same JSON. */
    compare(what: string, recorded: unknown, replayed: unknown): boolean {
      if (sameAsRecorded(recorded, replayed, ctx.opts.memo)) return true;
      push("DIFFERENT", `${what}: the recorded value differs from the replayed one`, recorded, replayed);
      return false;
    },
    /** Reports DIFFERENT with `detail` unless `ok`. */
    expect(ok: boolean, detail: string): boolean {
      if (!ok) push("DIFFERENT", detail);
      return ok;
    },
    done(detail: string) {
      if (problems === 0) push("IDENTICAL", detail);
    },
    get clean() {
      return problems === 0;
    },
  };
}

/** One step's reporter (`scope`). */
export type Scope = ReturnType<typeof scope>;

/** The claim's events of `kind` no step has used yet. */
export function unused(ctx: Ctx, kind: string): Recorded[] {
  return ctx.mine.filter((r) => r.event.event_type === kind && !ctx.used.has(r.n));
}

/** The step that reads a kind, where it is not the step entering its stage. */
const KIND_STEP: Partial<Record<ReplayableKind, ReplayStepName>> = {
  CLAIM_TRIAGED: "kernel",
  PROPOSAL_SUBMITTED: "kernel",
  KERNEL_VERDICT: "kernel",
  CLAIM_NEEDS_REVIEW: "review",
};

/**
 * Takes the events of `stage` (each exactly once): reports a missing or unreadable one as INCOMPLETE
 * and returns nothing; a kind recorded twice is DIFFERENT (the first is used).
 */
export function enter<S extends ReplayStage>(ctx: Ctx, stage: S, step: ReplayStepName): StageFinds<S> | undefined {
  const found: Record<string, Found<ReplayableKind>> = {};
  let complete = true;
  for (const kind of STAGE_EVENTS[stage] as readonly ReplayableKind[]) {
    const s = scope(ctx, KIND_STEP[kind] ?? step);
    const records = unused(ctx, kind);
    for (const r of records) ctx.used.add(r.n);
    const first = records[0];
    if (!first) {
      s.incomplete(`${kind} is missing: the '${stage}' stage records it`);
      complete = false;
      continue;
    }
    if (records.length > 1)
      s.different(
        `${kind} is recorded ${records.length} times (${records.map(label).join(", ")}); the '${stage}' stage records it once`,
      );
    if (first.error !== undefined) {
      ctx.reported.add(first.n);
      s.incomplete(`${label(first)} cannot be read: ${first.error}`);
      complete = false;
      continue;
    }
    found[kind] = { r: first, d: first.parsed as never, raw: first.event.details };
  }
  if (!complete) return undefined;
  ctx.path.push(stage);
  return found as StageFinds<S>;
}

/**
 * Before entering `stage`, which replay reached: if its first event is absent but another ending's is
 * recorded, the record took another branch (DIFFERENT) and replay stops there.
 */
export function branch(
  ctx: Ctx,
  step: ReplayStepName,
  stage: ReplayStage,
  rivals: readonly ReplayStage[],
  what: string,
): boolean {
  if (unused(ctx, STAGE_EVENTS[stage][0]).length > 0) return true;
  const other = rivals
    .filter((r) => r !== stage)
    .map((r) => STAGE_EVENTS[r][0])
    .find((kind) => unused(ctx, kind).length > 0);
  if (other === undefined) return true;
  scope(ctx, step).different(`on replay ${what}, but the record has ${other} instead of ${STAGE_EVENTS[stage][0]}`);
  return false;
}

/** The stages that may follow the crew: exactly one of them is on a claim's path. */
export const AFTER_CREW: readonly ReplayStage[] = ["crew_failed", "self_check_failed", "decided"];
