// Phases and rounds: start a phase, request steps, settle a round (retry, fixer or fail each
// failed slot, in slot order), settle a phase (relay held messages, apply memory, vote) and end
// the crew.

import type { AgentStepRequestedEvent, FixerInvokedEvent, OutboundCrewEvent, VoteResolvedEvent } from "./events.ts";
import { innerCrewId } from "./ids.ts";
import { startInner } from "./inner.ts";
import type { JsonValue } from "./json.ts";
import type { CrewState } from "./machine.ts";
import { diagnostic, phaseRole, stepOf } from "./machine.ts";
import { awaitingAgent } from "./slots.ts";
import type { AgentSlot, FixerSlot, Slot } from "./slots.ts";
import { resolveVotes } from "./voting.ts";

/** Starts phase `phase` on `input`: one request (or inner crew) per agent of its role. */
export function startPhase(
  st: CrewState,
  out: OutboundCrewEvent[],
  phase: number,
  input: JsonValue,
  now: number,
): void {
  const role = phaseRole(st, phase);
  const n = role.agents.length;
  st.phase = phase;
  st.input = input;
  st.roundMs = now;
  st.slots = new Array<Slot>(n);
  st.inflight = 0;
  st.byId = new Map();
  st.scanned = n;
  st.history = undefined;
  out.push({ type: "phase.started", crewId: st.crewId, phaseIndex: phase, role: role.role, agentCount: n });
  for (let i = 0; i < n; i++) {
    if (role.nested !== undefined) startInner(st, out, role, i, now);
    else awaitStep(st, out, i, awaitingAgent(1));
  }
  if (st.inflight === 0) settleRound(st, out, now);
}

/** Puts slot `i` into an awaiting state and emits its request (the hook may veto it). */
function awaitStep(st: CrewState, out: OutboundCrewEvent[], i: number, state: AgentSlot | FixerSlot): void {
  st.slots[i] = state;
  st.inflight++;
  request(st, out, i, state, false);
}

/** Emits the request slot `i` awaits; `reissue` (on resume) skips the `beforeStepRequested` hook. */
export function request(
  st: CrewState,
  out: OutboundCrewEvent[],
  i: number,
  s: AgentSlot | FixerSlot,
  reissue: boolean,
): void {
  const step = stepOf(st, i, s);
  const role = phaseRole(st);
  const input: JsonValue =
    s.kind === "agent"
      ? st.input
      : { failed: { agentId: role.agents[i]!, role: role.role, error: s.error }, input: st.input };
  const event: AgentStepRequestedEvent = {
    type: "agent.step.requested",
    crewId: st.crewId,
    correlationId: step.correlationId,
    phaseIndex: st.phase,
    role: step.role.role,
    agentId: step.agentId,
    attempt: s.kind === "agent" ? s.attempt : 1,
    roleSnapshot: st.ix.snapshots.get(step.role.role)!,
    input,
  };
  const memoryContext = st.env.memory?.context(st.env.scope, step.role.role, step.agentId);
  if (memoryContext !== undefined) event.memoryContext = memoryContext;
  if (step.role.timeout_ms !== undefined) event.deadlineMs = st.roundMs + step.role.timeout_ms;
  if (!reissue && st.env.hooks !== undefined) {
    const veto = st.env.hooks.run("beforeStepRequested", { crewId: st.crewId, event });
    if (veto !== undefined) {
      const error = { message: veto.reason, code: "STEP_VETOED" };
      st.slots[i] = { kind: "failed", attempt: s.attempt, fixer: step.fixer, error };
      st.inflight--;
      out.push(
        diagnostic(
          st,
          "STEP_VETOED",
          `the request for ${step.agentId} (${step.role.role}) in phase ${st.phase} was vetoed by a hook: ${veto.reason}`,
          step.correlationId,
        ),
      );
      return;
    }
  }
  out.push(event);
  st.byId?.set(step.correlationId, i);
}

/** Every slot of the round has settled: retry, escalate to a fixer, or fail each failed slot, in slot order. */
export function settleRound(st: CrewState, out: OutboundCrewEvent[], now: number): void {
  st.roundMs = now;
  const role = phaseRole(st);
  for (let i = 0; i < st.slots.length; i++) {
    const s = st.slots[i]!;
    if (s.kind !== "failing") continue;
    const { how, error, fixer, attempt } = s;
    if (fixer === undefined && role.nested === undefined && attempt < st.env.maxAttempts) {
      awaitStep(st, out, i, awaitingAgent(attempt + 1));
      continue;
    }
    const fixerRole = fixer === undefined ? role.fixers[how] : undefined;
    if (fixerRole !== undefined) {
      const state: FixerSlot = { kind: "fixer", attempt, fixer: how, error };
      const step = stepOf(st, i, state);
      const invoked: FixerInvokedEvent = {
        type: "fixer.invoked",
        crewId: st.crewId,
        phaseIndex: st.phase,
        reason: how,
        failedRole: role.role,
        failedAgentId: role.agents[i]!,
        fixerRole,
        fixerAgentId: step.agentId,
        correlationId: step.correlationId,
        error,
      };
      out.push(invoked);
      st.env.hooks?.run("onFixerInvoked", { crewId: st.crewId, event: invoked });
      awaitStep(st, out, i, state);
      continue;
    }
    st.slots[i] = { kind: "failed", attempt, fixer, error };
  }
  if (st.inflight === 0) settlePhase(st, out, now);
}

/** Nothing is in flight: relay held messages, apply memory, vote, and move on. */
function settlePhase(st: CrewState, out: OutboundCrewEvent[], now: number): void {
  const role = phaseRole(st);
  const memory = st.env.memory;
  const hard = role.nested?.memory_isolation === "hard";
  const ballots = st.slots.map((done, i) => {
    if (done.kind !== "ok") return { ok: false as const };
    const from =
      done.fixer === undefined
        ? { role, agentId: role.agents[i]! }
        : (() => {
            const step = stepOf(st, i, done);
            return { role: step.role, agentId: step.agentId };
          })();
    for (const msg of done.messages ?? []) {
      if (from.role.permissions.talk_to.includes(msg.to)) {
        out.push({
          type: "agent.message.relayed",
          crewId: st.crewId,
          phaseIndex: st.phase,
          fromRole: from.role.role,
          fromAgentId: from.agentId,
          to: msg.to,
          body: msg.body,
        });
      } else {
        out.push(
          diagnostic(
            st,
            "ACL_DENIED",
            `${from.agentId} (${from.role.role}) may not talk to '${msg.to}' (talk_to: ${from.role.permissions.talk_to.join(", ") || "(none)"}); the message was dropped`,
          ),
        );
      }
    }
    for (const d of done.delegations ?? []) {
      if (from.role.permissions.delegate_to.includes(d.to)) {
        out.push({
          type: "agent.delegation.relayed",
          crewId: st.crewId,
          phaseIndex: st.phase,
          fromRole: from.role.role,
          fromAgentId: from.agentId,
          to: d.to,
          task: d.task,
        });
      } else {
        out.push(
          diagnostic(
            st,
            "ACL_DENIED",
            `${from.agentId} (${from.role.role}) may not delegate to '${d.to}' (delegate_to: ${from.role.permissions.delegate_to.join(", ") || "(none)"}); the delegation was dropped`,
          ),
        );
      }
    }
    if (done.memory !== undefined && done.memory.length > 0) {
      if (memory !== undefined) memory.apply(st.env.scope, done.memory);
      else
        out.push(
          diagnostic(
            st,
            "MEMORY_UNAVAILABLE",
            `${from.agentId} (${from.role.role}) sent ${done.memory.length} memory command(s) but crew ${st.crewId} has no memory adapter; they were dropped`,
          ),
        );
    }
    if (hard && done.fixer === undefined && memory !== undefined)
      memory.merge(innerCrewId(st.crewId, role.agents[i]!), st.env.scope);
    return { ok: true as const, output: done.output };
  });
  const vote = resolveVotes(role.voting, ballots);
  if (!vote.ok) {
    finish(st, out, "failed", {
      reason: `phase ${st.phase} (${role.role}) could not pick an output by ${role.voting}: ${vote.reason}`,
      code: vote.code,
      tally: vote.tally,
    });
    return;
  }
  const resolved: VoteResolvedEvent = {
    type: "vote.resolved",
    crewId: st.crewId,
    phaseIndex: st.phase,
    role: role.role,
    strategy: role.voting,
    output: vote.output,
    tally: vote.tally,
  };
  out.push(resolved);
  st.env.hooks?.run("afterVoteResolved", { crewId: st.crewId, event: resolved });
  if (st.phase + 1 < st.env.graph.phases.length) startPhase(st, out, st.phase + 1, vote.output, now);
  else finish(st, out, "completed", { output: vote.output });
}

/** Ends the crew with an output or a failure; only the root emits `crew.completed` / `crew.failed`. */
function finish(
  st: CrewState,
  out: OutboundCrewEvent[],
  status: "completed" | "failed",
  result: { output?: JsonValue; reason?: string; code?: string; tally?: VoteResolvedEvent["tally"] },
): void {
  st.status = status;
  st.slots = [];
  st.byId = undefined;
  st.history = undefined;
  if (status === "completed") {
    st.output = result.output!;
    if (st.env.root) {
      const event = { type: "crew.completed" as const, crewId: st.crewId, output: st.output };
      out.push(event);
      st.env.hooks?.run("onCrewCompleted", { crewId: st.crewId, event });
    }
  } else {
    st.reason = result.reason!;
    st.code = result.code!;
    if (st.env.root) {
      const role = phaseRole(st);
      const event = {
        type: "crew.failed" as const,
        crewId: st.crewId,
        reason: st.reason,
        code: st.code,
        phaseIndex: st.phase,
        role: role.role,
        ...(result.tally ? { tally: result.tally } : {}),
      };
      out.push(event);
      st.env.hooks?.run("onCrewFailed", { crewId: st.crewId, event });
    }
  }
}

/** Stops this crew and its inner crews without events (the caller reports the cancel). */
export function abort(st: CrewState, reason: string): void {
  for (const s of st.slots) {
    if (s.kind !== "nested") continue;
    abort(s.inner, reason);
    if (phaseRole(st).nested?.memory_isolation === "hard") st.env.memory?.discard(s.inner.crewId);
  }
  st.status = "cancelled";
  st.reason = reason;
  st.code = "CANCELLED";
  st.slots = [];
  st.byId = undefined;
  st.history = undefined;
}
