// The crew state machine. One instance per (root or inner) crew; inner crews live inside their
// parent's slots. Every transition appends the outbound events it causes to `out`.
//
// Rounds: a phase asks all its agents at once (round 1). Answers only change slot states; when
// every slot of the round has settled, failed slots are retried, handed to a fixer, or failed
// for good — together, in slot order (the next round). When nothing is in flight any more the
// phase settles: held messages are relayed, memory commands applied, and the vote is taken.
// That is why the arrival order of answers within a round never changes the outbound log.

import type { Clock } from "./clock.ts";
import { SessionStateError, SnapshotMismatchError, UnknownCrewError } from "./errors.ts";
import type {
  AgentStepCompletedEvent,
  AgentStepFailedEvent,
  AgentStepRequestedEvent,
  CrewDiagnosticEvent,
  DiagnosticCode,
  FixerInvokedEvent,
  InboundCrewEvent,
  OutboundCrewEvent,
  RoleSnapshot,
  StepError,
  VoteResolvedEvent,
} from "./events.ts";
import type { CrewGraph, GraphRole } from "./graph.ts";
import { graphFingerprint } from "./graph.ts";
import type { HookRegistry } from "./hooks.ts";
import { correlationId, fixerStepAgentId, innerCrewId } from "./ids.ts";
import type { JsonValue } from "./json.ts";
import type { CrewMemoryAdapter } from "./memory.ts";
import { CREW_SCHEMA_VERSION } from "./schema.ts";
import type { Task } from "./schema.ts";
import { attemptOf, fixerOf, isTimeout, slotKind, STEP_TIMEOUT, withStep } from "./slots.ts";
import type { CrewSnapshot, CrewStatus, FaultKind, SlotState } from "./snapshot.ts";
import { resolveVotes } from "./voting.ts";

/** What a machine runs with; inner machines share everything but the graph, scope and root flag. */
export type MachineEnv = {
  graph: CrewGraph;
  clock: Clock;
  hooks: HookRegistry | undefined;
  memory: CrewMemoryAdapter | undefined;
  maxAttempts: number;
  scope: string;
  root: boolean;
};

/** What to do on resume with steps that were in flight when the snapshot was taken. */
export type ResumePolicy = "await" | "reissue" | "fail";

type GraphIndex = { roles: Map<string, GraphRole>; snapshots: Map<string, RoleSnapshot> };
const graphIndexes = new WeakMap<CrewGraph, GraphIndex>();

function indexGraph(graph: CrewGraph): GraphIndex {
  let ix = graphIndexes.get(graph);
  if (ix === undefined) {
    const roles = new Map(graph.roles.map((r) => [r.role, r]));
    const snapshots = new Map<string, RoleSnapshot>();
    for (const r of graph.roles) {
      const snap: RoleSnapshot = { role: r.role, capabilities: r.capabilities, permissions: r.permissions };
      if (r.system_prompt !== undefined) snap.system_prompt = r.system_prompt;
      snapshots.set(r.role, snap);
    }
    ix = { roles, snapshots };
    graphIndexes.set(graph, ix);
  }
  return ix;
}

const NESTED_PLACEHOLDER: SlotState = { n: { schema_version: CREW_SCHEMA_VERSION, status: "idle", crewId: "" } };

type HistoryEntry = { phase: number; slot: number; fixer: FaultKind | undefined; attempt: number };

/** The state machine of one crew (root or inner). Not exported from the package: use `createCrewSession`. */
export class CrewMachine {
  status: CrewStatus = "idle";
  task: Task | undefined;
  phase = 0;
  input: JsonValue = null;
  roundMs = 0;
  slots: SlotState[] = [];
  inners: (CrewMachine | undefined)[] = [];
  inflight = 0;
  output: JsonValue = null;
  reason = "";
  code = "";
  private byId: Map<string, number> | undefined;
  /** How many slots the lazy `byId` has looked at (all of them while it is filled by emitting requests). */
  private scanned = 0;
  private history: Map<string, HistoryEntry> | undefined;
  private readonly ix: GraphIndex;

  constructor(readonly crewId: string, readonly env: MachineEnv) {
    this.ix = indexGraph(env.graph);
  }

  // ── entry points ─────────────────────────────────────────────────────────────────────────

  begin(out: OutboundCrewEvent[], input: JsonValue, task: Task | undefined, now: number): void {
    if (this.status !== "idle") throw new SessionStateError(`crew ${this.crewId} was already started (status ${this.status})`);
    this.status = "running";
    this.task = task;
    if (this.env.root) {
      out.push({
        type: "crew.started",
        crewId: this.crewId,
        crewName: this.env.graph.name,
        phaseCount: this.env.graph.phases.length,
        ...(task === undefined ? {} : { task }),
      });
    }
    this.startPhase(out, 0, input, now);
  }

  deliver(out: OutboundCrewEvent[], ev: InboundCrewEvent): void {
    if (ev.crewId !== this.crewId) {
      this.routeInner(out, ev);
      return;
    }
    switch (ev.type) {
      case "crew.tick":
        this.tick(out, ev.nowMs);
        return;
      case "crew.cancel":
        this.cancel(out, ev.reason);
        return;
      case "agent.stream.chunk":
        if (this.status === "idle") throw this.notStarted();
        return;
      case "agent.step.completed":
      case "agent.step.failed":
        this.answer(out, ev);
        return;
    }
  }

  tick(out: OutboundCrewEvent[], now: number): void {
    if (this.status !== "running") return;
    const role = this.phaseRole();
    for (let i = 0; i < this.slots.length; i++) {
      const s = this.slots[i]!;
      const kind = slotKind(s);
      if (kind === "nested") {
        const inner = this.inners[i]!;
        inner.tick(out, now);
        this.checkInner(out, i);
        continue;
      }
      if (kind !== "agent" && kind !== "fixer") continue;
      const step = this.stepOf(i, s);
      const timeout = step.role.timeout_ms;
      if (timeout === undefined) continue;
      const deadlineMs = this.roundMs + timeout;
      if (now < deadlineMs) continue;
      const attempt = attemptOf(s);
      out.push({
        type: "agent.step.timed_out",
        crewId: this.crewId,
        correlationId: step.correlationId,
        phaseIndex: this.phase,
        role: step.role.role,
        agentId: step.agentId,
        attempt: step.fixer === undefined ? attempt : 1,
        deadlineMs,
      });
      const e: StepError = { message: `${step.agentId} (${step.role.role}) did not answer within ${timeout} ms of its request in phase ${this.phase} (${role.role})`, code: STEP_TIMEOUT };
      this.slots[i] = withStep({ f: "stall" as const, e }, attempt, fixerOf(s));
      this.byId?.delete(step.correlationId);
      this.inflight--;
    }
    if (this.status === "running" && this.inflight === 0) this.settleRound(out, now);
  }

  cancel(out: OutboundCrewEvent[], reason: string | undefined): void {
    if (this.status !== "running" && this.status !== "idle") return;
    this.abort(reason ?? "cancelled");
    if (this.env.root) out.push({ type: "crew.cancelled", crewId: this.crewId, reason: this.reason });
  }

  /** The earliest deadline of any step in flight, in this crew or its inner crews. */
  nextDeadlineMs(): number | undefined {
    if (this.status !== "running") return undefined;
    let min: number | undefined;
    for (let i = 0; i < this.slots.length; i++) {
      const s = this.slots[i]!;
      const kind = slotKind(s);
      let d: number | undefined;
      if (kind === "nested") d = this.inners[i]!.nextDeadlineMs();
      else if (kind === "agent" || kind === "fixer") {
        const t = this.stepRole(i, s).timeout_ms;
        d = t === undefined ? undefined : this.roundMs + t;
      }
      if (d !== undefined && (min === undefined || d < min)) min = d;
    }
    return min;
  }

  // ── snapshot / resume ────────────────────────────────────────────────────────────────────

  snapshot(): CrewSnapshot {
    // Built by assignment in a fixed key order (no object spreads: V8 copies every spread after
    // the first through a slow runtime path, and this runs on every step of a serverless shell).
    const snap = { schema_version: CREW_SCHEMA_VERSION, status: this.status, crewId: this.crewId } as Record<string, unknown>;
    if (this.env.root) snap.graph = graphFingerprint(this.env.graph);
    if (this.task !== undefined) snap.task = this.task;
    if (this.env.root && this.env.maxAttempts !== 1) snap.maxAttempts = this.env.maxAttempts;
    switch (this.status) {
      case "idle":
        break;
      case "running": {
        const slots = this.slots.slice();
        for (let i = 0; i < this.inners.length; i++) {
          const inner = this.inners[i];
          if (inner !== undefined) slots[i] = { n: inner.snapshot() };
        }
        snap.phase = this.phase;
        snap.input = this.input;
        snap.roundMs = this.roundMs;
        snap.slots = slots;
        break;
      }
      case "completed":
        snap.phase = this.phase;
        snap.output = this.output;
        break;
      case "failed":
        snap.phase = this.phase;
        snap.reason = this.reason;
        snap.code = this.code;
        break;
      case "cancelled":
        snap.phase = this.phase;
        snap.reason = this.reason;
        break;
    }
    if (this.env.root) {
      const memory = this.env.memory?.export(this.env.scope);
      if (memory !== undefined) snap.memory = memory;
    }
    return snap as CrewSnapshot;
  }

  /** Rebuilds a machine from a snapshot (already version-checked); inner crews are rebuilt recursively. */
  static fromSnapshot(snap: CrewSnapshot, crewId: string, env: MachineEnv): CrewMachine {
    const m = new CrewMachine(crewId, env);
    if (snap.crewId !== crewId) throw misfit(crewId, env, `it belongs to crew id ${JSON.stringify(snap.crewId)}`);
    m.task = snap.task;
    switch (snap.status) {
      case "idle":
        return m;
      case "completed":
      case "failed":
      case "cancelled":
        if (!isPhaseOf(env.graph, snap.phase)) throw misfit(crewId, env, `phase ${JSON.stringify(snap.phase)} is not a phase of the graph`);
        m.status = snap.status;
        m.phase = snap.phase;
        if (snap.status === "completed") m.output = snap.output;
        else {
          m.reason = snap.reason;
          if (snap.status === "failed") m.code = snap.code;
        }
        return m;
      case "running": {
        if (!isPhaseOf(env.graph, snap.phase)) throw misfit(crewId, env, `phase ${JSON.stringify(snap.phase)} is not a phase of the graph`);
        m.status = "running";
        m.phase = snap.phase;
        m.input = snap.input;
        m.roundMs = snap.roundMs;
        const role = m.phaseRole();
        if (!Array.isArray(snap.slots) || snap.slots.length !== role.agents.length) {
          throw misfit(crewId, env, `phase ${snap.phase} (${role.role}) has ${role.agents.length} agents but the snapshot has ${Array.isArray(snap.slots) ? snap.slots.length : "no"} slots`);
        }
        m.slots = snap.slots.slice();
        m.inners = role.nested === undefined ? [] : new Array<CrewMachine | undefined>(role.agents.length);
        for (let i = 0; i < m.slots.length; i++) {
          const s = m.slots[i]!;
          const kind = slotKind(s);
          if (kind === undefined) throw misfit(crewId, env, `slot ${i} holds ${JSON.stringify(s)}, which is not a slot state`);
          if (kind === "nested" && role.nested === undefined) throw misfit(crewId, env, `slot ${i} runs an inner crew but role ${role.role} has no nested_crew`);
          const fx = fixerOf(s);
          if (fx !== undefined && role.fixers[fx] === undefined) throw misfit(crewId, env, `slot ${i} went to a ${fx} fixer but role ${role.role} has none`);
          if (kind === "agent" || kind === "fixer" || kind === "nested") m.inflight++;
          if (kind === "nested") {
            const icid = innerCrewId(crewId, role.agents[i]!);
            const inner = CrewMachine.fromSnapshot((s as { n: CrewSnapshot }).n, icid, m.innerEnv(role, icid, false));
            if (inner.status !== "running") throw misfit(crewId, env, `slot ${i} holds an inner crew that is ${inner.status}`);
            m.inners[i] = inner;
            m.slots[i] = NESTED_PLACEHOLDER;
          }
        }
        return m;
      }
      default:
        throw misfit(crewId, env, `status ${JSON.stringify((snap as { status?: unknown }).status)} is unknown`);
    }
  }

  /** Applies a resume policy to the steps in flight (recursively into inner crews). */
  applyPolicy(out: OutboundCrewEvent[], policy: ResumePolicy, now: number): void {
    if (this.status !== "running" || policy === "await") return;
    if (policy === "reissue") this.roundMs = now;
    for (let i = 0; i < this.slots.length; i++) {
      const s = this.slots[i]!;
      const kind = slotKind(s);
      if (kind === "nested") {
        this.inners[i]!.applyPolicy(out, policy, now);
        this.checkInner(out, i);
      } else if (kind === "agent" || kind === "fixer") {
        if (policy === "reissue") {
          this.request(out, i, s, true);
        } else {
          const e: StepError = { message: `the step was in flight when crew ${this.crewId} was resumed with policy "fail"`, code: "RESUMED_IN_FLIGHT" };
          this.slots[i] = withStep({ f: "fault" as const, e }, attemptOf(s), fixerOf(s));
          this.byId = undefined;
          this.inflight--;
        }
      }
    }
    if (this.status === "running" && this.inflight === 0) this.settleRound(out, now);
  }

  // ── phases and rounds ────────────────────────────────────────────────────────────────────

  private phaseRole(phase = this.phase): GraphRole {
    return this.ix.roles.get(this.env.graph.phases[phase]!.role)!;
  }

  private startPhase(out: OutboundCrewEvent[], phase: number, input: JsonValue, now: number): void {
    const role = this.phaseRole(phase);
    const n = role.agents.length;
    this.phase = phase;
    this.input = input;
    this.roundMs = now;
    this.slots = new Array<SlotState>(n);
    this.inners = role.nested === undefined ? [] : new Array<CrewMachine | undefined>(n);
    this.inflight = 0;
    this.byId = new Map();
    this.scanned = n;
    this.history = undefined;
    out.push({ type: "phase.started", crewId: this.crewId, phaseIndex: phase, role: role.role, agentCount: n });
    for (let i = 0; i < n; i++) {
      if (role.nested !== undefined) this.startInner(out, role, i, now);
      else this.awaitStep(out, i, 0);
    }
    if (this.inflight === 0) this.settleRound(out, now);
  }

  /** Puts slot `i` into an awaiting state and emits its request (the hook may veto it). */
  private awaitStep(out: OutboundCrewEvent[], i: number, state: SlotState): void {
    this.slots[i] = state;
    this.inflight++;
    this.request(out, i, state, false);
  }

  private stepRole(i: number, s: SlotState): GraphRole {
    const fx = fixerOf(s);
    const role = this.phaseRole();
    return fx === undefined ? role : this.ix.roles.get(role.fixers[fx]!)!;
  }

  /** The step a slot is awaiting (or that produced its result): role, agent, correlation id. */
  private stepOf(i: number, s: SlotState): { role: GraphRole; agentId: string; correlationId: string; fixer: FaultKind | undefined } {
    const role = this.phaseRole();
    const agentId = role.agents[i]!;
    const fx = fixerOf(s);
    if (fx === undefined) return { role, agentId, correlationId: correlationId(this.crewId, this.phase, agentId, attemptOf(s)), fixer: undefined };
    const fixer = this.ix.roles.get(role.fixers[fx]!)!;
    const fixerAgentId = fixer.agents[i % fixer.agents.length]!;
    return { role: fixer, agentId: fixerAgentId, correlationId: correlationId(this.crewId, this.phase, fixerStepAgentId(fixerAgentId, agentId), 1), fixer: fx };
  }

  private request(out: OutboundCrewEvent[], i: number, s: SlotState, reissue: boolean): void {
    const step = this.stepOf(i, s);
    const phaseRole = this.phaseRole();
    const input: JsonValue =
      step.fixer === undefined
        ? this.input
        : { failed: { agentId: phaseRole.agents[i]!, role: phaseRole.role, error: (s as { e: StepError }).e }, input: this.input };
    const event: AgentStepRequestedEvent = {
      type: "agent.step.requested",
      crewId: this.crewId,
      correlationId: step.correlationId,
      phaseIndex: this.phase,
      role: step.role.role,
      agentId: step.agentId,
      attempt: step.fixer === undefined ? attemptOf(s) : 1,
      roleSnapshot: this.ix.snapshots.get(step.role.role)!,
      input,
    };
    const memoryContext = this.env.memory?.context(this.env.scope, step.role.role, step.agentId);
    if (memoryContext !== undefined) event.memoryContext = memoryContext;
    if (step.role.timeout_ms !== undefined) event.deadlineMs = this.roundMs + step.role.timeout_ms;
    if (!reissue && this.env.hooks !== undefined) {
      const veto = this.env.hooks.run("beforeStepRequested", { crewId: this.crewId, event });
      if (veto !== undefined) {
        this.slots[i] = withStep({ x: { message: veto.reason, code: "STEP_VETOED" } }, attemptOf(s), step.fixer);
        this.inflight--;
        out.push(this.diagnostic("STEP_VETOED", `the request for ${step.agentId} (${step.role.role}) in phase ${this.phase} was vetoed by a hook: ${veto.reason}`, step.correlationId));
        return;
      }
    }
    out.push(event);
    this.byId?.set(step.correlationId, i);
  }

  /** Every slot of the round has settled: retry, escalate to a fixer, or fail each failed slot, in slot order. */
  private settleRound(out: OutboundCrewEvent[], now: number): void {
    this.roundMs = now;
    const role = this.phaseRole();
    for (let i = 0; i < this.slots.length; i++) {
      const s = this.slots[i]!;
      if (slotKind(s) !== "failing") continue;
      const { f, e, fx } = s as { f: FaultKind; e: StepError; fx?: FaultKind };
      const attempt = attemptOf(s);
      if (fx === undefined && role.nested === undefined && attempt < this.env.maxAttempts) {
        this.awaitStep(out, i, { a: attempt + 1 });
        continue;
      }
      const fixerRole = fx === undefined ? role.fixers[f] : undefined;
      if (fixerRole !== undefined) {
        const state: SlotState = withStep({ fx: f, e }, attempt);
        const step = this.stepOf(i, state);
        const invoked: FixerInvokedEvent = {
          type: "fixer.invoked",
          crewId: this.crewId,
          phaseIndex: this.phase,
          reason: f,
          failedRole: role.role,
          failedAgentId: role.agents[i]!,
          fixerRole,
          fixerAgentId: step.agentId,
          correlationId: step.correlationId,
          error: e,
        };
        out.push(invoked);
        this.env.hooks?.run("onFixerInvoked", { crewId: this.crewId, event: invoked });
        this.awaitStep(out, i, state);
        continue;
      }
      this.slots[i] = withStep({ x: e }, attempt, fx);
    }
    if (this.inflight === 0) this.settlePhase(out, now);
  }

  /** Nothing is in flight: relay held messages, apply memory, vote, and move on. */
  private settlePhase(out: OutboundCrewEvent[], now: number): void {
    const role = this.phaseRole();
    const memory = this.env.memory;
    const hard = role.nested?.memory_isolation === "hard";
    const ballots = this.slots.map((s, i) => {
      if (slotKind(s) !== "ok") return { ok: false as const };
      const done = s as Extract<SlotState, { ok: JsonValue }>;
      const from = done.fx === undefined ? { role, agentId: role.agents[i]! } : (() => {
        const step = this.stepOf(i, done);
        return { role: step.role, agentId: step.agentId };
      })();
      for (const msg of done.msg ?? []) {
        if (from.role.permissions.talk_to.includes(msg.to)) {
          out.push({ type: "agent.message.relayed", crewId: this.crewId, phaseIndex: this.phase, fromRole: from.role.role, fromAgentId: from.agentId, to: msg.to, body: msg.body });
        } else {
          out.push(this.diagnostic("ACL_DENIED", `${from.agentId} (${from.role.role}) may not talk to '${msg.to}' (talk_to: ${from.role.permissions.talk_to.join(", ") || "(none)"}); the message was dropped`));
        }
      }
      for (const d of done.d ?? []) {
        if (from.role.permissions.delegate_to.includes(d.to)) {
          out.push({ type: "agent.delegation.relayed", crewId: this.crewId, phaseIndex: this.phase, fromRole: from.role.role, fromAgentId: from.agentId, to: d.to, task: d.task });
        } else {
          out.push(this.diagnostic("ACL_DENIED", `${from.agentId} (${from.role.role}) may not delegate to '${d.to}' (delegate_to: ${from.role.permissions.delegate_to.join(", ") || "(none)"}); the delegation was dropped`));
        }
      }
      if (done.m !== undefined && done.m.length > 0) {
        if (memory !== undefined) memory.apply(this.env.scope, done.m);
        else out.push(this.diagnostic("MEMORY_UNAVAILABLE", `${from.agentId} (${from.role.role}) sent ${done.m.length} memory command(s) but crew ${this.crewId} has no memory adapter; they were dropped`));
      }
      if (hard && done.fx === undefined && memory !== undefined) memory.merge(innerCrewId(this.crewId, role.agents[i]!), this.env.scope);
      return { ok: true as const, output: done.ok };
    });
    this.inners = [];
    const vote = resolveVotes(role.voting, ballots);
    if (!vote.ok) {
      this.finish(out, "failed", {
        reason: `phase ${this.phase} (${role.role}) could not pick an output by ${role.voting}: ${vote.reason}`,
        code: vote.code,
        tally: vote.tally,
      });
      return;
    }
    const resolved: VoteResolvedEvent = {
      type: "vote.resolved",
      crewId: this.crewId,
      phaseIndex: this.phase,
      role: role.role,
      strategy: role.voting,
      output: vote.output,
      tally: vote.tally,
    };
    out.push(resolved);
    this.env.hooks?.run("afterVoteResolved", { crewId: this.crewId, event: resolved });
    if (this.phase + 1 < this.env.graph.phases.length) this.startPhase(out, this.phase + 1, vote.output, now);
    else this.finish(out, "completed", { output: vote.output });
  }

  private finish(
    out: OutboundCrewEvent[],
    status: "completed" | "failed",
    result: { output?: JsonValue; reason?: string; code?: string; tally?: VoteResolvedEvent["tally"] },
  ): void {
    this.status = status;
    this.slots = [];
    this.inners = [];
    this.byId = undefined;
    this.history = undefined;
    if (status === "completed") {
      this.output = result.output!;
      if (this.env.root) {
        const event = { type: "crew.completed" as const, crewId: this.crewId, output: this.output };
        out.push(event);
        this.env.hooks?.run("onCrewCompleted", { crewId: this.crewId, event });
      }
    } else {
      this.reason = result.reason!;
      this.code = result.code!;
      if (this.env.root) {
        const role = this.phaseRole();
        const event = { type: "crew.failed" as const, crewId: this.crewId, reason: this.reason, code: this.code, phaseIndex: this.phase, role: role.role, ...(result.tally ? { tally: result.tally } : {}) };
        out.push(event);
        this.env.hooks?.run("onCrewFailed", { crewId: this.crewId, event });
      }
    }
  }

  /** Stops this crew and its inner crews without events (the caller reports the cancel). */
  private abort(reason: string): void {
    for (let i = 0; i < this.inners.length; i++) {
      const inner = this.inners[i];
      if (inner === undefined) continue;
      inner.abort(reason);
      if (this.phaseRole().nested?.memory_isolation === "hard") this.env.memory?.discard(inner.crewId);
    }
    this.status = "cancelled";
    this.reason = reason;
    this.code = "CANCELLED";
    this.slots = [];
    this.inners = [];
    this.byId = undefined;
    this.history = undefined;
  }

  // ── answers ──────────────────────────────────────────────────────────────────────────────

  private answer(out: OutboundCrewEvent[], ev: AgentStepCompletedEvent | AgentStepFailedEvent): void {
    if (this.status === "idle") throw this.notStarted();
    const slot = this.status === "running" ? this.lookup(ev.correlationId) : undefined;
    if (slot === undefined) {
      out.push(this.classify(ev.correlationId));
      return;
    }
    const s = this.slots[slot]!;
    const attempt = attemptOf(s);
    const fx = fixerOf(s);
    if (ev.type === "agent.step.completed") {
      const done: Extract<SlotState, { ok: JsonValue }> = withStep({ ok: ev.output }, attempt, fx);
      if (ev.memoryCommands !== undefined && ev.memoryCommands.length > 0) done.m = ev.memoryCommands;
      if (ev.messages !== undefined && ev.messages.length > 0) done.msg = ev.messages;
      if (ev.delegations !== undefined && ev.delegations.length > 0) done.d = ev.delegations;
      this.slots[slot] = done;
    } else {
      this.slots[slot] = withStep({ f: "fault" as const, e: ev.error }, attempt, fx);
    }
    this.byId!.delete(ev.correlationId);
    this.inflight--;
    if (ev.type === "agent.step.completed") this.env.hooks?.run("afterStepCompleted", { crewId: this.crewId, event: ev });
    if (this.inflight === 0) this.settleRound(out, this.env.clock.now());
  }

  /**
   * The slot awaiting `cid`, via a map that is never stored: filled as requests are emitted, and
   * after a resume filled lazily, slot by slot, only as far as needed to find `cid`.
   */
  private lookup(cid: string): number | undefined {
    if (this.byId === undefined) {
      this.byId = new Map();
      this.scanned = 0;
    }
    const hit = this.byId.get(cid);
    if (hit !== undefined || this.scanned >= this.slots.length) return hit;
    while (this.scanned < this.slots.length) {
      const i = this.scanned++;
      const s = this.slots[i]!;
      const kind = slotKind(s);
      if (kind !== "agent" && kind !== "fixer") continue;
      const id = this.stepOf(i, s).correlationId;
      this.byId.set(id, i);
      if (id === cid) return i;
    }
    return undefined;
  }

  /** Why an answer is not awaited: a duplicate, a late answer, or an id this crew never issued. */
  private classify(cid: string): CrewDiagnosticEvent {
    const entry = this.historyIndex().get(cid);
    if (entry === undefined) {
      return this.diagnostic("UNKNOWN_CORRELATION", `crew ${this.crewId} never requested a step with correlationId ${cid}; the answer was ignored`, cid);
    }
    const role = this.phaseRole(entry.phase);
    const who = `${role.agents[entry.slot]}${entry.fixer === undefined ? ` attempt ${entry.attempt}` : ` (${entry.fixer} fixer step)`} in phase ${entry.phase} (${role.role})`;
    if (this.status !== "running") return this.diagnostic("LATE_DELIVERY", `crew ${this.crewId} is ${this.status}; the answer for ${who} was ignored`, cid);
    if (entry.phase < this.phase) return this.diagnostic("LATE_DELIVERY", `phase ${entry.phase} (${role.role}) has already resolved; the answer for ${who} was ignored`, cid);
    const s = this.slots[entry.slot]!;
    const kind = slotKind(s);
    const same = fixerOf(s) === entry.fixer && (entry.fixer !== undefined || attemptOf(s) === entry.attempt);
    if (same && kind === "ok") return this.diagnostic("DUPLICATE_DELIVERY", `${who} was already answered; the duplicate was ignored`, cid);
    if (same && (kind === "failing" || kind === "failed")) {
      const e = kind === "failing" ? (s as { e: StepError }).e : (s as { x: StepError }).x;
      if (isTimeout(e)) return this.diagnostic("LATE_DELIVERY", `${who} had already timed out; the answer was ignored`, cid);
      return this.diagnostic("DUPLICATE_DELIVERY", `${who} was already answered (failed); the duplicate was ignored`, cid);
    }
    const fx = fixerOf(s);
    if (entry.fixer === undefined && fx !== undefined && attemptOf(s) === entry.attempt) {
      // the agent step whose failure or timeout sent this slot to a fixer
      if (fx === "stall") return this.diagnostic("LATE_DELIVERY", `${who} had already timed out and was handed to a fixer; the answer was ignored`, cid);
      return this.diagnostic("DUPLICATE_DELIVERY", `${who} was already answered (failed) and handed to a fixer; the duplicate was ignored`, cid);
    }
    return this.diagnostic("LATE_DELIVERY", `${who} was superseded by a retry; the answer was ignored`, cid);
  }

  /** Every correlation id this crew may have issued up to the current phase (built only when an answer is not awaited). */
  private historyIndex(): Map<string, HistoryEntry> {
    if (this.history !== undefined) return this.history;
    const map = new Map<string, HistoryEntry>();
    for (let p = 0; p <= this.phase; p++) {
      const role = this.phaseRole(p);
      role.agents.forEach((agentId, slot) => {
        if (role.nested === undefined) {
          for (let attempt = 1; attempt <= this.env.maxAttempts; attempt++) {
            map.set(correlationId(this.crewId, p, agentId, attempt), { phase: p, slot, fixer: undefined, attempt });
          }
        }
        for (const fx of ["fault", "stall"] as const) {
          const fixerName = role.fixers[fx];
          if (fixerName === undefined) continue;
          const fixer = this.ix.roles.get(fixerName)!;
          const fixerAgentId = fixer.agents[slot % fixer.agents.length]!;
          const cid = correlationId(this.crewId, p, fixerStepAgentId(fixerAgentId, agentId), 1);
          if (!map.has(cid)) map.set(cid, { phase: p, slot, fixer: fx, attempt: 1 });
        }
      });
    }
    this.history = map;
    return map;
  }

  private diagnostic(code: DiagnosticCode, message: string, cid?: string): CrewDiagnosticEvent {
    return { type: "crew.diagnostic", crewId: this.crewId, code, message, ...(cid === undefined ? {} : { correlationId: cid }) };
  }

  private notStarted(): SessionStateError {
    return new SessionStateError(`crew ${this.crewId} has not been started: call start(rootInput) before delivering events`);
  }

  // ── nested crews ─────────────────────────────────────────────────────────────────────────

  private innerEnv(role: GraphRole, icid: string, fork: boolean): MachineEnv {
    const nested = role.nested!;
    const hard = nested.memory_isolation === "hard";
    if (hard && fork) this.env.memory?.fork(this.env.scope, icid);
    const { clock, hooks, memory, maxAttempts } = this.env;
    return { graph: nested.graph, clock, hooks, memory, maxAttempts, scope: hard ? icid : this.env.scope, root: false };
  }

  private startInner(out: OutboundCrewEvent[], role: GraphRole, i: number, now: number): void {
    const agentId = role.agents[i]!;
    const icid = innerCrewId(this.crewId, agentId);
    const inner = new CrewMachine(icid, this.innerEnv(role, icid, true));
    this.inners[i] = inner;
    this.slots[i] = NESTED_PLACEHOLDER;
    this.inflight++;
    out.push({
      type: "nested.crew.started",
      crewId: this.crewId,
      phaseIndex: this.phase,
      role: role.role,
      agentId,
      innerCrewId: icid,
      memoryIsolation: role.nested!.memory_isolation,
    });
    inner.begin(out, this.input, undefined, now);
    this.checkInner(out, i);
  }

  /** After an inner crew moved: if it ended, fill (or fail) its slot. Does not settle the round. */
  private checkInner(out: OutboundCrewEvent[], i: number): void {
    const inner = this.inners[i];
    if (inner === undefined || inner.status === "running") return;
    const role = this.phaseRole();
    const agentId = role.agents[i]!;
    const base = { crewId: this.crewId, phaseIndex: this.phase, role: role.role, agentId, innerCrewId: inner.crewId };
    if (inner.status === "completed") {
      this.slots[i] = { ok: inner.output };
      out.push({ type: "nested.crew.completed", ...base, output: inner.output });
    } else {
      const code = inner.code || "INNER_CREW_FAILED";
      this.slots[i] = { f: "fault", e: { message: `inner crew ${inner.crewId} ${inner.status}: ${inner.reason}`, code } };
      out.push({ type: "nested.crew.failed", ...base, reason: inner.reason, code });
      if (role.nested!.memory_isolation === "hard") this.env.memory?.discard(inner.crewId);
    }
    this.inners[i] = undefined;
    this.inflight--;
  }

  private routeInner(out: OutboundCrewEvent[], ev: InboundCrewEvent): void {
    const prefix = `${this.crewId}/`;
    if (!ev.crewId.startsWith(prefix)) throw new UnknownCrewError(ev.crewId, this.crewId);
    if (this.status === "idle") throw this.notStarted();
    const rest = ev.crewId.slice(prefix.length);
    const agentId = rest.split("/", 1)[0]!;
    if (this.status === "running") {
      const role = this.phaseRole();
      const slot = role.nested === undefined ? -1 : role.agents.indexOf(agentId);
      const inner = slot < 0 ? undefined : this.inners[slot];
      if (inner !== undefined) {
        inner.deliver(out, ev);
        this.checkInner(out, slot);
        if (this.status === "running" && this.inflight === 0) this.settleRound(out, ev.type === "crew.tick" ? ev.nowMs : this.env.clock.now());
        return;
      }
    }
    if (!isInnerPath(this.env.graph, rest)) throw new UnknownCrewError(ev.crewId, this.crewId);
    if (ev.type === "agent.step.completed" || ev.type === "agent.step.failed") {
      out.push({
        type: "crew.diagnostic",
        crewId: ev.crewId,
        code: "LATE_DELIVERY",
        message: `inner crew ${ev.crewId} is no longer running; the answer was ignored`,
        correlationId: ev.correlationId,
      });
    }
  }
}

/** The error for a snapshot that does not fit the crew it is resumed on. */
function misfit(crewId: string, env: MachineEnv, what: string): SnapshotMismatchError {
  return new SnapshotMismatchError(`snapshot of crew ${crewId} does not fit crew ${env.graph.name}: ${what}`);
}

/** Whether `p` is the index of a phase of `graph`. */
function isPhaseOf(graph: CrewGraph, p: unknown): p is number {
  return Number.isInteger(p) && (p as number) >= 0 && (p as number) < graph.phases.length;
}

/** Whether `path` (`agentId/agentId/…` below a crew) names an inner crew the graph can run. */
function isInnerPath(graph: CrewGraph, path: string): boolean {
  const [head, ...tail] = path.split("/");
  const hash = head!.lastIndexOf("#");
  if (hash <= 0) return false;
  const role = graph.roles.find((r) => r.role === head!.slice(0, hash));
  if (role?.nested === undefined || !role.agents.includes(head!)) return false;
  return tail.length === 0 || isInnerPath(role.nested.graph, tail.join("/"));
}
