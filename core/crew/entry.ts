// Entry points of a crew's transitions: start, deliver (dispatch by event type and crew id),
// tick, cancel, and the next deadline a shell should tick at. Each appends what it causes to `out`.

import { SessionStateError } from "./errors.ts";
import type { InboundCrewEvent, OutboundCrewEvent, StepError } from "./events.ts";
import type { JsonValue } from "./json.ts";
import type { CrewState } from "./machine.ts";
import { notStarted, phaseRole, stepOf, stepRole } from "./machine.ts";
import { answer } from "./answers.ts";
import { checkInner, routeInner } from "./inner.ts";
import { abort, settleRound, startPhase } from "./rounds.ts";
import type { Task } from "./schema.ts";
import { attemptOf, fixerOf, slotKind, STEP_TIMEOUT, withStep } from "./slots.ts";

/** Starts an idle crew on `input`: `crew.started` (root only), then its first phase. */
export function begin(
  st: CrewState,
  out: OutboundCrewEvent[],
  input: JsonValue,
  task: Task | undefined,
  now: number,
): void {
  if (st.status !== "idle") throw new SessionStateError(`crew ${st.crewId} was already started (status ${st.status})`);
  st.status = "running";
  st.task = task;
  if (st.env.root) {
    out.push({
      type: "crew.started",
      crewId: st.crewId,
      crewName: st.env.graph.name,
      phaseCount: st.env.graph.phases.length,
      ...(task === undefined ? {} : { task }),
    });
  }
  startPhase(st, out, 0, input, now);
}

/** Applies one validated inbound event addressed to this crew or (by crew id) one of its inner crews. */
export function deliver(st: CrewState, out: OutboundCrewEvent[], ev: InboundCrewEvent): void {
  if (ev.crewId !== st.crewId) {
    routeInner(st, out, ev);
    return;
  }
  switch (ev.type) {
    case "crew.tick":
      tick(st, out, ev.nowMs);
      return;
    case "crew.cancel":
      cancel(st, out, ev.reason);
      return;
    case "agent.stream.chunk":
      if (st.status === "idle") throw notStarted(st);
      return;
    case "agent.step.completed":
    case "agent.step.failed":
      answer(st, out, ev);
      return;
  }
}

/** Times out every step (here and in inner crews) whose deadline is at or before `now`, then settles the round if nothing is left in flight. */
function tick(st: CrewState, out: OutboundCrewEvent[], now: number): void {
  if (st.status !== "running") return;
  const role = phaseRole(st);
  for (let i = 0; i < st.slots.length; i++) {
    const s = st.slots[i]!;
    const kind = slotKind(s);
    if (kind === "nested") {
      tick(st.inners[i]!, out, now);
      checkInner(st, out, i);
      continue;
    }
    if (kind !== "agent" && kind !== "fixer") continue;
    const step = stepOf(st, i, s);
    const timeout = step.role.timeout_ms;
    if (timeout === undefined) continue;
    const deadlineMs = st.roundMs + timeout;
    if (now < deadlineMs) continue;
    const attempt = attemptOf(s);
    out.push({
      type: "agent.step.timed_out",
      crewId: st.crewId,
      correlationId: step.correlationId,
      phaseIndex: st.phase,
      role: step.role.role,
      agentId: step.agentId,
      attempt: step.fixer === undefined ? attempt : 1,
      deadlineMs,
    });
    const e: StepError = {
      message: `${step.agentId} (${step.role.role}) did not answer within ${timeout} ms of its request in phase ${st.phase} (${role.role})`,
      code: STEP_TIMEOUT,
    };
    st.slots[i] = withStep({ f: "stall" as const, e }, attempt, fixerOf(s));
    st.byId?.delete(step.correlationId);
    st.inflight--;
  }
  if (st.status === "running" && st.inflight === 0) settleRound(st, out, now);
}

/** Cancels a running (or idle) crew and its inner crews; `crew.cancelled` from the root only. */
function cancel(st: CrewState, out: OutboundCrewEvent[], reason: string | undefined): void {
  if (st.status !== "running" && st.status !== "idle") return;
  abort(st, reason ?? "cancelled");
  if (st.env.root) out.push({ type: "crew.cancelled", crewId: st.crewId, reason: st.reason });
}

/** The earliest deadline of any step in flight, in this crew or its inner crews. */
export function nextDeadlineMs(st: CrewState): number | undefined {
  if (st.status !== "running") return undefined;
  let min: number | undefined;
  for (let i = 0; i < st.slots.length; i++) {
    const s = st.slots[i]!;
    const kind = slotKind(s);
    let d: number | undefined;
    if (kind === "nested") d = nextDeadlineMs(st.inners[i]!);
    else if (kind === "agent" || kind === "fixer") {
      const t = stepRole(st, i, s).timeout_ms;
      d = t === undefined ? undefined : st.roundMs + t;
    }
    if (d !== undefined && (min === undefined || d < min)) min = d;
  }
  return min;
}
