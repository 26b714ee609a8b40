// Replay's checks of the claim's audit as a whole: the outage hold's notes, and every recorded event readable, of
// the claim's flow and, when replay reached the end, on its path.
import { isReplayableKind } from "./events.ts";
import type { ReplayDetails } from "./events.ts";
import { label, scope, unused } from "./context.ts";
import type { Ctx, Flow } from "./context.ts";

/**
 * The outage hold's notes (docs/llm.md): a claim may have waited for the model, any number of times, between any
 * two steps. They decide nothing, so replay checks that each is a hold (since ≤ recorded ≤ until), and that each
 * CLAIM_RESUMED ends a recorded hold and says how long it lasted. It cannot require a CLAIM_RESUMED for each hold: a
 * late copy of a step that was answered already may find the model down and record a hold no answer ends.
 */
export function holdNotes(ctx: Ctx): void {
  const s = scope(ctx, "audit");
  const held = unused(ctx, "CLAIM_HELD").filter((r) => r.parsed !== undefined);
  const since = new Set<string>();
  for (const r of held) {
    ctx.used.add(r.n);
    const d = r.parsed as ReplayDetails<"CLAIM_HELD">;
    since.add(d.since);
    s.expect(
      Date.parse(d.since) <= Date.parse(r.event.created_at) && Date.parse(d.until) > Date.parse(d.since),
      `${label(r)} holds from ${d.since} until ${d.until}, recorded at ${r.event.created_at}: not a hold`,
    );
  }
  for (const r of unused(ctx, "CLAIM_RESUMED").filter((x) => x.parsed !== undefined)) {
    ctx.used.add(r.n);
    const d = r.parsed as ReplayDetails<"CLAIM_RESUMED">;
    s.expect(since.has(d.held_since), `${label(r)} ends a hold since ${d.held_since} that no CLAIM_HELD records`);
    s.expect(
      d.waited_ms === Date.parse(r.event.created_at) - Date.parse(d.held_since),
      `${label(r)} says it waited ${d.waited_ms} ms, from ${d.held_since} to ${r.event.created_at}`,
    );
  }
}

/** Every recorded event is readable, of the claim's flow, and (when replay reached the end) on its path. */
export function auditCheck(ctx: Ctx, flow: Flow | undefined): void {
  const s = scope(ctx, "audit");
  const finished = ctx.outcome !== undefined && !ctx.steps.some((x) => x.status === "INCOMPLETE");
  for (const r of ctx.mine) {
    if (!isReplayableKind(r.event.event_type))
      s.incomplete(`${label(r)}: replay cannot read ${r.event.event_type} events`);
    else if (r.error !== undefined) {
      if (!ctx.reported.has(r.n)) s.incomplete(`${label(r)} cannot be read: ${r.error}`);
    } else if (flow && r.event.dfid !== flow.dfid)
      s.different(`${label(r)} belongs to flow ${r.event.dfid}, the claim's is ${flow.dfid}`);
    else if (finished && !ctx.used.has(r.n))
      s.different(`${label(r)} is not on this claim's path (${ctx.path.join(" → ")})`);
  }
  if (finished) s.done(`all ${ctx.mine.length} recorded events accounted for`);
}
