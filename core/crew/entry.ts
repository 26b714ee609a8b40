// Entry points of a crew's transitions: start, deliver (dispatch by event type and crew id),
// tick, cancel, and the next deadline a shell should tick at. Each appends what it causes to `out`.

import { SessionStateError } from "./errors.ts";
import type { InboundCrewEvent, OutboundCrewEvent, StepError } from "./events.ts";
import type { JsonValue } from "./json.ts";
import type { CrewState, StepLabel } from "./machine.ts";
import { notStarted, phaseRole, stepOf, stepRole } from "./machine.ts";
import { answer } from "./answers.ts";
import { checkInner, routeInner } from "./inner.ts";
import { abort, settleRound, startPhase } from "./rounds.ts";
import type { Task } from "./schema.ts";
import { isAwaiting, STEP_TIMEOUT } from "./slots.ts";

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

/** Applies one validated inbound event addressed to this crew or (by crew id) one of its inner crews; says what it did. */
export function deliver(st: CrewState, out: OutboundCrewEvent[], ev: InboundCrewEvent): StepLabel {
  if (ev.crewId !== st.crewId) return routeInner(st, out, ev);
  switch (ev.type) {
    case "crew.tick":
      return tick(st, out, ev.nowMs) ? "advanced" : "not-due";
    case "crew.cancel":
      return cancel(st, out, ev.reason) ? "advanced" : "ignored";
    case "agent.stream.chunk":
      if (st.status === "idle") throw notStarted(st);
      return "ignored";
    case "agent.step.completed":
    case "agent.step.failed":
      return answer(st, out, ev);
  }
}

/**
 * Times out every step (here and in inner crews) whose deadline is at or before `now`, then
 * settles the round if nothing is left in flight. Returns whether any step timed out.
 */
function tick(st: CrewState, out: OutboundCrewEvent[], now: number): boolean {
  if (st.status !== "running") return false;
  const role = phaseRole(st);
  let fired = false;
  for (let i = 0; i < st.slots.length; i++) {
    const s = st.slots[i]!;
    if (s.kind === "nested") {
      if (tick(s.inner, out, now)) fired = true;
      checkInner(st, out, i);
      continue;
    }
    if (!isAwaiting(s)) continue;
    const step = stepOf(st, i, s);
    const timeout = step.role.timeout_ms;
    if (timeout === undefined) continue;
    const deadlineMs = st.roundMs + timeout;
    if (now < deadlineMs) continue;
    const attempt = s.attempt;
    fired = true;
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
    st.slots[i] = { kind: "failing", attempt, fixer: step.fixer, how: "stall", error: e };
    st.byId?.delete(step.correlationId);
    st.inflight--;
  }
  if (st.status === "running" && st.inflight === 0) settleRound(st, out, now);
  return fired;
}

/** Cancels a running (or idle) crew and its inner crews; `crew.cancelled` from the root only. Returns whether it did. */
function cancel(st: CrewState, out: OutboundCrewEvent[], reason: string | undefined): boolean {
  if (st.status !== "running" && st.status !== "idle") return false;
  abort(st, reason ?? "cancelled");
  if (st.env.root) out.push({ type: "crew.cancelled", crewId: st.crewId, reason: st.reason });
  return true;
}

/** The earliest deadline of any step in flight, in this crew or its inner crews. */
export function nextDeadlineMs(st: CrewState): number | undefined {
  if (st.status !== "running") return undefined;
  // Runs after every event of a batch step: the phase role is looked up once, not per slot.
  const role = phaseRole(st);
  let min: number | undefined;
  for (const s of st.slots) {
    let d: number | undefined;
    if (s.kind === "nested") d = nextDeadlineMs(s.inner);
    else if (s.kind === "agent") d = role.timeout_ms === undefined ? undefined : st.roundMs + role.timeout_ms;
    else if (s.kind === "fixer") {
      const t = stepRole(st, s).timeout_ms;
      d = t === undefined ? undefined : st.roundMs + t;
    }
    if (d !== undefined && (min === undefined || d < min)) min = d;
  }
  return min;
}
