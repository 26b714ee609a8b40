// Returns in the chaos flows (docs/returns.md, docs/testing.md): some flows' policies ask the item back before the
// refund pays, and a warehouse posts each return's progress to `POST /claims/{id}/return-events` — on time, late
// (after the deadline), never (the sweep releases the refund), or ending in a failed inspection (a person decides),
// each event at times twice, at the same moment or later, and reported out of order. Drawn from rngs of their own, so
// a flow without a return policy is the same flow it was before returns were drawn.
import type { ClaimsContract } from "../core/integrity/index.ts";
import type { ReturnEventKind } from "../core/kernel/returns.ts";
import type { Rng } from "./rng.ts";

/** How a return ends, as the warehouse reports it. */
export const RETURN_FATES = ["on_time", "late", "never", "failed"] as const;

/** How a return ends. */
export type ReturnFate = (typeof RETURN_FATES)[number];

/** A flow's return policy and how its warehouse reports returns. */
export interface ReturnsPlan {
  /** The agent's `claims_bounds.returns` in this flow (replacing the bundled one). */
  policy: NonNullable<ClaimsContract["returns"]>;
  /** How each return ends, by weight. */
  fates: Readonly<Record<ReturnFate, number>>;
  /** Each event is posted again (a retry, a double send) with this probability; `together` of those at once. */
  duplicate: number;
  together: number;
  /** Each event is reported up to six hours after it happened (so events arrive out of order) with this probability. */
  disorder: number;
  /** After a crash (no answer) the warehouse posts the event again with this probability. */
  retryAfterCrash: number;
}

const MIN = 60_000;
const HOUR = 3_600_000;
const PAY_ON = ["in_transit", "delivered", "inspected"] as const;

/** The days a drawn return deadline is at most (the flow runs past it: docs/testing.md). */
export const MAX_RETURN_DEADLINE_DAYS = 3;

/**
 * Whether a flow's policy asks for returns, and how: one flow in three. Deadlines of 1–3 days (the flow's clock jumps
 * to them once nothing else is left to do), `pay_on` any of the three, a keep-the-item bound now and then, and a
 * category of its own at times (one that pays at once, or pays on another event).
 */
export function planReturns(rng: Rng): ReturnsPlan | undefined {
  if (!rng.chance(1 / 3)) return undefined;
  const policy: NonNullable<ClaimsContract["returns"]> = {
    return_required: true,
    pay_on: rng.pick(PAY_ON),
    return_deadline_days: rng.int(1, MAX_RETURN_DEADLINE_DAYS),
    refund_due_days: rng.pick([7, 14]),
  };
  if (rng.chance(0.4))
    policy.keep_item_below = rng.chance(0.5) ? { EUR: rng.pick([30, 100, 250]) } : { EUR: 100, USD: 100, JPY: 15_000 };
  if (rng.chance(0.5)) {
    const [free, other] = rng.shuffle(["electronics", "clothing", "home"]);
    policy.categories = {
      [free!]: { return_required: false },
      ...(rng.chance(0.5) ? { [other!]: { pay_on: rng.pick(PAY_ON), return_deadline_days: 1 } } : {}),
    };
  }
  return {
    policy,
    fates: rng.pick([
      { on_time: 55, late: 15, never: 15, failed: 15 },
      { on_time: 25, late: 25, never: 25, failed: 25 },
    ]),
    duplicate: rng.pick([0, 0.2, 0.5]),
    together: rng.pick([0, 0.5]),
    disorder: rng.pick([0, 0.3, 0.7]),
    retryAfterCrash: 0.9,
  };
}

/** A return event the warehouse posts: the body, and when it is posted (ms); `together`: a double send at once. */
export interface ReturnPost {
  claimId: string;
  postAtMs: number;
  body: { event_id: string; event: ReturnEventKind; at: string; carrier_ref?: string };
  together?: string;
}

/** What a return asked: the ReturnRequested's claim, when it was asked and by when the item must be sent. */
export interface AskedReturn {
  claim_id: string;
  return_by: string;
  pay_on: string;
}

/**
 * The posts of one return, drawn when its `ReturnRequested` goes out (at `nowMs`): the events its fate gives, with
 * the carrier's or warehouse's instant (`at`), each posted a while after it happened, some twice. A late return's
 * first event is after `return_by`; a failed one ends `inspected_failed`; an on-time one reaches at least its `pay_on`.
 */
export function drawReturnPosts(rng: Rng, plan: ReturnsPlan, asked: AskedReturn, nowMs: number): ReturnPost[] {
  const fate = rng.weighted(plan.fates);
  if (fate === "never") return [];
  const deadline = Date.parse(asked.return_by);
  const reach = PAY_ON.indexOf(asked.pay_on as (typeof PAY_ON)[number]);
  const kinds: ReturnEventKind[] =
    fate === "failed"
      ? ["in_transit", "delivered", "inspected_failed"]
      : (["in_transit", "delivered", "inspected_ok"] as const).slice(0, rng.int(Math.max(reach, 0) + 1, 3));
  // A carrier now and then misses the first scan.
  if (kinds.length > 1 && rng.chance(0.15)) kinds.shift();
  // The instants the events happened: in order, before the deadline, or (late) after it.
  const from = fate === "late" ? deadline + rng.int(1, 60) * MIN : nowMs + rng.int(1, 60) * MIN;
  const to = fate === "late" ? deadline + 12 * HOUR : Math.max(from + kinds.length, deadline - MIN);
  const ats = kinds.map(() => rng.int(from, to)).sort((a, b) => a - b);
  const carrier = `CR${asked.claim_id.replace(/[^A-Za-z0-9]/g, "").slice(-12)}`;
  const posts: ReturnPost[] = [];
  kinds.forEach((event, i) => {
    const at = ats[i]!;
    const delay = rng.chance(plan.disorder) ? rng.int(0, 6 * HOUR) : rng.int(0, 10 * MIN);
    const body = {
      event_id: `wh-${asked.claim_id}-${i + 1}`,
      event,
      at: new Date(at).toISOString(),
      ...(rng.chance(0.7) ? { carrier_ref: carrier } : {}),
    };
    const post: ReturnPost = { claimId: asked.claim_id, postAtMs: Math.max(nowMs + 1, at + delay), body };
    if (!rng.chance(plan.duplicate)) return void posts.push(post);
    if (rng.chance(plan.together)) {
      const together = `return-${body.event_id}`;
      posts.push({ ...post, together }, { ...post, together });
    } else posts.push(post, { ...post, postAtMs: post.postAtMs + rng.int(1_000, 2 * HOUR) });
  });
  return posts;
}

/** What the flow's returns did: events posted and how they were answered, how the returns ended. */
export interface ReturnCounts {
  /** Returns asked (ReturnRequested) and return events posted (repeats and retries included). */
  asked: number;
  posted: number;
  /** Posts answered RECORDED (a repeat) or refused 409 (the claim awaits no return any more). */
  repeats: number;
  refused: number;
  /** Events posted after the claim's return_by. */
  late: number;
  /** How the returns ended: paid on pay_on, released at the deadline, sent to a person. */
  paid: number;
  released: number;
  reviewed: number;
}

/** The counts of a flow without returns. */
export const emptyReturnCounts = (): ReturnCounts => ({
  asked: 0,
  posted: 0,
  repeats: 0,
  refused: 0,
  late: 0,
  paid: 0,
  released: 0,
  reviewed: 0,
});
