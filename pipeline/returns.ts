// The return's progress (docs/returns.md), the shells of pipeline/decide/returns.ts: a return event posted by a shop
// or warehouse (`POST /claims/{id}/return-events`), and the sweep's pass over claims whose return is due. Each loads
// the claim and its recorded return events, calls the decider, and performs its effects around the claim's one
// conditional move.
import * as z from "zod";
import type { ClaimRecord } from "../core/kernel/claim-record.ts";
import { returnDfid } from "../core/kernel/claim-record.ts";
import {
  longestReturnDeadlineDays,
  ReturnEventBodySchema,
  shortestReturnDeadlineDays,
} from "../core/kernel/returns.ts";
import { DAY_MS } from "../core/integrity/index.ts";
import type { EffectPorts, PipelineDeps } from "./deps.ts";
import { performEffects } from "./perform.ts";
import {
  decideReturnDeadline,
  decideReturnEvent,
  recordedReturnEvents,
  returnOutcomeRepair,
  returnReviewRepair,
} from "./decide/returns.ts";
import type { ReturnStep } from "./decide/returns.ts";

/** What the return shells use. */
type ReturnDeps = EffectPorts & Pick<PipelineDeps, "clock">;

/** The answer to a posted return event. */
export type ReturnEventResult =
  | { ok: true; claimId: string; status: ClaimRecord["status"]; decision: ReturnStep["decision"] }
  | { ok: false; code: "INVALID_INPUT"; message: string; issues: { path: string; message: string }[] }
  | { ok: false; code: "NOT_FOUND"; message: string }
  | { ok: false; code: "NOT_AWAITING_RETURN" | "EVENT_ID_REUSED"; message: string };

/**
 * Records a return event for `claimId` and carries out what the claim's recorded events decide (idempotent by the
 * event id: the same event again changes nothing; another event under a recorded id is refused).
 */
export async function postReturnEvent(claimId: string, body: unknown, deps: ReturnDeps): Promise<ReturnEventResult> {
  const parsed = ReturnEventBodySchema.safeParse(body);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => ({ path: i.path.join(".") || "(body)", message: i.message }));
    return { ok: false, code: "INVALID_INPUT", message: z.prettifyError(parsed.error), issues };
  }
  const record = await deps.claims.getClaim(claimId);
  if (!record) return { ok: false, code: "NOT_FOUND", message: `claim ${claimId} not found` };
  const recorded = record.return ? recordedReturnEvents(await deps.audit.byDfid(returnDfid(claimId))) : [];
  // A claim its return sent to a person, whose review a crash kept from opening: opened now (returnReviewRepair).
  if (
    record.return?.outcome === "REVIEW" &&
    record.status === "NEEDS_REVIEW" &&
    !(await deps.reviews.getReview(claimId))
  )
    await performEffects(returnReviewRepair(record, recorded, deps.clock.now()), deps);
  const step = decideReturnEvent(record, recorded, parsed.data, deps.clock.now());
  if ("refused" in step) return { ok: false, code: step.refused, message: step.message };
  const status = await perform(step, record, deps);
  return { ok: true, claimId, status, decision: step.decision };
}

/** What a pass over claims awaiting their return did. */
export type ReturnSweepResult = { examined: number; notReceived: string[]; paid: string[]; reviewed: string[] };

/**
 * The deadlines of returns (the sweep's part, docs/returns.md): reads only claims AWAITING_RETURN received before the
 * shortest deadline could have passed (`before`), and for each whose `return_by` passed with no event releases its
 * refund and ends it RETURN_NOT_RECEIVED; one whose recorded events decide it (a crash cut a delivery short) is
 * carried out as its event would have been.
 */
export async function sweepReturns(
  deps: ReturnDeps,
  opts: { pageSize: number; before: string; hasTime?: () => boolean },
): Promise<ReturnSweepResult> {
  const result: ReturnSweepResult = { examined: 0, notReceived: [], paid: [], reviewed: [] };
  const hasTime = opts.hasTime ?? (() => true);
  let cursor: string | undefined;
  do {
    const page = await deps.claims.listClaims({
      statuses: ["AWAITING_RETURN"],
      limit: opts.pageSize,
      before: opts.before,
      ...(cursor ? { cursor } : {}),
    });
    for (const record of page.items) {
      if (!hasTime()) return result;
      if (!record.return || Date.parse(record.return.return_by) > deps.clock.now()) continue;
      result.examined++;
      const recorded = recordedReturnEvents(await deps.audit.byDfid(returnDfid(record.claim_id)));
      const step = decideReturnDeadline(record, recorded, deps.clock.now());
      if (!step.transition) continue;
      await perform(step, record, deps);
      if (step.decision === "NOT_RECEIVED") result.notReceived.push(record.claim_id);
      if (step.decision === "PAY") result.paid.push(record.claim_id);
      if (step.decision === "REVIEW") result.reviewed.push(record.claim_id);
    }
    cursor = page.nextCursor;
  } while (cursor);
  return result;
}

/**
 * The sweep's pass over the returns that are due at the deps' clock (`sweepReturns`): `before` is the instant the
 * policy's shortest deadline reaches back to. `undefined` when the policy asks for no return (nothing is read).
 */
export async function sweepDueReturns(
  deps: ReturnDeps & Pick<PipelineDeps, "agent">,
  opts: { pageSize: number; hasTime?: () => boolean },
): Promise<ReturnSweepResult | undefined> {
  const shortest = shortestReturnDeadlineDays(deps.agent.contract);
  if (shortest === undefined) return undefined;
  const before = new Date(deps.clock.now() - shortest * DAY_MS).toISOString();
  return sweepReturns(deps, { ...opts, before });
}

/** How many days past the policy's longest return deadline the sweep still looks for a return's unfinished steps. */
export const RETURN_REPAIR_DAYS = 7;

/**
 * The steps a crash cut off after a return moved its claim (the sweep's part, docs/returns.md): reads the claims
 * DECIDED or NEEDS_REVIEW received within the policy's longest return deadline plus `RETURN_REPAIR_DAYS` (`since`),
 * and for each whose return closed it (moved no later than `movedBefore`: a move the sweep's stalled-after period
 * ago, so the invocation that made it has finished or died, and the repair never races it) (RETURN_NOT_RECEIVED) or sent it to a person, reads the order's ledger and the
 * review and performs what is missing (`returnOutcomeRepair`): the refund's release, the review's opening.
 * Returns the claims repaired.
 */
export async function repairReturnOutcomes(
  deps: ReturnDeps,
  opts: { pageSize: number; since: string; movedBefore: string; hasTime?: () => boolean },
): Promise<string[]> {
  const repaired: string[] = [];
  const hasTime = opts.hasTime ?? (() => true);
  let cursor: string | undefined;
  do {
    const page = await deps.claims.listClaims({
      statuses: ["DECIDED", "NEEDS_REVIEW"],
      limit: opts.pageSize,
      since: opts.since,
      ...(cursor ? { cursor } : {}),
    });
    for (const record of page.items) {
      if (!hasTime()) return repaired;
      const asked = record.return;
      if (asked?.outcome !== "NOT_RECEIVED" && asked?.outcome !== "REVIEW") continue;
      if (record.updated_at > opts.movedBefore) continue;
      const entry = await deps.ledger.get(asked.order_id, record.simulation_id);
      const held = entry !== undefined && Object.hasOwn(entry.claims, record.claim_id);
      const reviewed =
        asked.outcome === "NOT_RECEIVED" || (await deps.reviews.getReview(record.claim_id)) !== undefined;
      if (!held && reviewed) continue;
      const recorded = recordedReturnEvents(await deps.audit.byDfid(returnDfid(record.claim_id)));
      const effects = returnOutcomeRepair(record, recorded, { held, reviewed }, deps.clock.now());
      if (effects.length === 0) continue;
      await performEffects(effects, deps);
      repaired.push(record.claim_id);
    }
    cursor = page.nextCursor;
  } while (cursor);
  return repaired;
}

/**
 * The sweep's repair of returns at the deps' clock (`repairReturnOutcomes`), over claims received since the policy's
 * longest deadline plus `RETURN_REPAIR_DAYS`. `undefined` when the policy asks for no return (nothing is read).
 */
export async function repairDueReturns(
  deps: ReturnDeps & Pick<PipelineDeps, "agent">,
  opts: { pageSize: number; movedBefore: string; hasTime?: () => boolean },
): Promise<string[] | undefined> {
  const longest = longestReturnDeadlineDays(deps.agent.contract);
  if (longest === undefined) return undefined;
  const since = new Date(deps.clock.now() - (longest + RETURN_REPAIR_DAYS) * DAY_MS).toISOString();
  return repairReturnOutcomes(deps, { ...opts, since });
}

/** Performs a step: `before`, the claim's conditional move, and `after` only when the move took. */
async function perform(step: ReturnStep, record: ClaimRecord, deps: ReturnDeps): Promise<ClaimRecord["status"]> {
  await performEffects(step.before, deps);
  if (!step.transition) return record.status;
  const moved = await deps.claims.updateClaim(step.transition.claimId, step.transition.patch, step.transition.onlyFrom);
  if (!moved.changed) return moved.record?.status ?? record.status;
  await performEffects(step.after, deps);
  return step.status;
}
