// The crew event vocabulary: every event is a plain JSON object `{ type, crewId, … }`, defined
// once here as a zod schema plus its type, used by producers and consumers alike.

import * as z from "zod";
import { InvalidCrewEventError } from "./errors.ts";
import { schemaIssues } from "./json.ts";
import { JsonValueSchema } from "./json.ts";
import { CapabilitiesSchema, PermissionsSchema, TaskSchema, VotingStrategySchema } from "./schema.ts";

const CrewIdSchema = z.string().min(1, "crewId may not be empty");
const CorrelationIdSchema = z.string().min(1, "correlationId may not be empty");
const PhaseIndexSchema = z.int().min(0);

/** An agent's error as a worker reports it. */
export const StepErrorSchema = z.object({ message: z.string(), code: z.string().optional() });

/** An agent's error. */
export type StepError = z.infer<typeof StepErrorSchema>;

/** One memory change an agent asks for; applied when its phase settles, in slot order. */
export const MemoryCommandSchema = z.discriminatedUnion("op", [
  z.object({ op: z.literal("set"), key: z.string().min(1), value: JsonValueSchema }),
  z.object({ op: z.literal("delete"), key: z.string().min(1) }),
]);

/** A memory change. */
export type MemoryCommand = z.infer<typeof MemoryCommandSchema>;

/** A message an agent sends to another role; relayed only if the sender's role may `talk_to` it. */
export const AgentMessageSchema = z.object({ to: z.string().min(1), body: JsonValueSchema });

/** A piece of work an agent hands to another role; relayed only if the sender's role may `delegate_to` it. */
export const AgentDelegationSchema = z.object({ to: z.string().min(1), task: JsonValueSchema });

/** The self-contained description of a role that rides on every step request. */
export const RoleSnapshotSchema = z.object({
  role: z.string(),
  system_prompt: z.string().optional(),
  capabilities: CapabilitiesSchema,
  permissions: PermissionsSchema,
});

/** A role snapshot. */
export type RoleSnapshot = z.infer<typeof RoleSnapshotSchema>;

/** How a phase's vote came out: slots in total, successful and failed slots, votes for the winner, distinct outputs. */
export const VoteTallySchema = z.object({
  total: z.int().min(0),
  valid: z.int().min(0),
  failed: z.int().min(0),
  winnerVotes: z.int().min(0),
  distinct: z.int().min(0),
});

/** A vote tally. */
export type VoteTally = z.infer<typeof VoteTallySchema>;

/** Codes of `crew.diagnostic` events: things the engine ignored or refused, reported rather than thrown. */
export const DiagnosticCodeSchema = z.enum([
  "UNKNOWN_CORRELATION",
  "DUPLICATE_DELIVERY",
  "LATE_DELIVERY",
  "ACL_DENIED",
  "STEP_VETOED",
  "MEMORY_UNAVAILABLE",
]);

/** A diagnostic code. */
export type DiagnosticCode = z.infer<typeof DiagnosticCodeSchema>;

// ── inbound ──────────────────────────────────────────────────────────────────────────────────

/** A worker's successful answer to `agent.step.requested`. */
export const AgentStepCompletedEventSchema = z.object({
  type: z.literal("agent.step.completed"),
  crewId: CrewIdSchema,
  correlationId: CorrelationIdSchema,
  output: JsonValueSchema,
  messages: z.array(AgentMessageSchema).optional(),
  delegations: z.array(AgentDelegationSchema).optional(),
  memoryCommands: z.array(MemoryCommandSchema).optional(),
});

/** A worker's failed answer to `agent.step.requested`. */
export const AgentStepFailedEventSchema = z.object({
  type: z.literal("agent.step.failed"),
  crewId: CrewIdSchema,
  correlationId: CorrelationIdSchema,
  error: StepErrorSchema,
});

/** A partial answer while a step streams; accepted and ignored by the engine (it decides nothing). */
export const AgentStreamChunkEventSchema = z.object({
  type: z.literal("agent.stream.chunk"),
  crewId: CrewIdSchema,
  correlationId: CorrelationIdSchema,
  chunk: z.string(),
  seq: z.int().min(0).optional(),
});

/** The inbound form of `tick(nowMs)`, so a queue can carry timer ticks to `deliver`. */
export const CrewTickEventSchema = z.object({
  type: z.literal("crew.tick"),
  crewId: CrewIdSchema,
  nowMs: z.number().refine(Number.isFinite, "nowMs must be a finite number"),
});

/** The inbound form of `cancel(reason?)`. */
export const CrewCancelEventSchema = z.object({
  type: z.literal("crew.cancel"),
  crewId: CrewIdSchema,
  reason: z.string().optional(),
});

/** Every event `deliver` accepts. */
export const InboundCrewEventSchema = z.discriminatedUnion("type", [
  AgentStepCompletedEventSchema,
  AgentStepFailedEventSchema,
  AgentStreamChunkEventSchema,
  CrewTickEventSchema,
  CrewCancelEventSchema,
]);

// ── outbound ─────────────────────────────────────────────────────────────────────────────────

/** The crew began; carries the session-level task once. Only the root session emits it. */
export const CrewStartedEventSchema = z.object({
  type: z.literal("crew.started"),
  crewId: CrewIdSchema,
  crewName: z.string(),
  phaseCount: z.int().min(1),
  task: TaskSchema.optional(),
});

/** A phase began: every agent of `role` is about to get a step (or an inner crew). */
export const PhaseStartedEventSchema = z.object({
  type: z.literal("phase.started"),
  crewId: CrewIdSchema,
  phaseIndex: PhaseIndexSchema,
  role: z.string(),
  agentCount: z.int().min(1),
});

/** Ask a worker to run one agent step; answer with `agent.step.completed` / `agent.step.failed` carrying the same correlationId. */
export const AgentStepRequestedEventSchema = z.object({
  type: z.literal("agent.step.requested"),
  crewId: CrewIdSchema,
  correlationId: CorrelationIdSchema,
  phaseIndex: PhaseIndexSchema,
  role: z.string(),
  agentId: z.string(),
  attempt: z.int().min(1),
  roleSnapshot: RoleSnapshotSchema,
  input: JsonValueSchema,
  memoryContext: JsonValueSchema.optional(),
  deadlineMs: z.number().optional(),
});

/** A step passed its deadline at a tick; its answer, if it still comes, is ignored. */
export const AgentStepTimedOutEventSchema = z.object({
  type: z.literal("agent.step.timed_out"),
  crewId: CrewIdSchema,
  correlationId: CorrelationIdSchema,
  phaseIndex: PhaseIndexSchema,
  role: z.string(),
  agentId: z.string(),
  attempt: z.int().min(1),
  deadlineMs: z.number(),
});

/** A fixer agent takes over a failed (`fault`) or stalled (`stall`) slot; its step request follows. */
export const FixerInvokedEventSchema = z.object({
  type: z.literal("fixer.invoked"),
  crewId: CrewIdSchema,
  phaseIndex: PhaseIndexSchema,
  reason: z.enum(["fault", "stall"]),
  failedRole: z.string(),
  failedAgentId: z.string(),
  fixerRole: z.string(),
  fixerAgentId: z.string(),
  correlationId: CorrelationIdSchema,
  error: StepErrorSchema,
});

/** A phase's vote picked one output; it becomes the next phase's input (or the crew's output). */
export const VoteResolvedEventSchema = z.object({
  type: z.literal("vote.resolved"),
  crewId: CrewIdSchema,
  phaseIndex: PhaseIndexSchema,
  role: z.string(),
  strategy: VotingStrategySchema,
  output: JsonValueSchema,
  tally: VoteTallySchema,
});

/** A message an agent sent, relayed because its role may talk to the recipient role. */
export const AgentMessageRelayedEventSchema = z.object({
  type: z.literal("agent.message.relayed"),
  crewId: CrewIdSchema,
  phaseIndex: PhaseIndexSchema,
  fromRole: z.string(),
  fromAgentId: z.string(),
  to: z.string(),
  body: JsonValueSchema,
});

/** A delegation an agent asked for, relayed because its role may delegate to the recipient role. */
export const AgentDelegationRelayedEventSchema = z.object({
  type: z.literal("agent.delegation.relayed"),
  crewId: CrewIdSchema,
  phaseIndex: PhaseIndexSchema,
  fromRole: z.string(),
  fromAgentId: z.string(),
  to: z.string(),
  task: JsonValueSchema,
});

/** An agent of a nested-crew role started its inner crew (`innerCrewId`). */
export const NestedCrewStartedEventSchema = z.object({
  type: z.literal("nested.crew.started"),
  crewId: CrewIdSchema,
  phaseIndex: PhaseIndexSchema,
  role: z.string(),
  agentId: z.string(),
  innerCrewId: CrewIdSchema,
  memoryIsolation: z.enum(["soft", "hard"]),
});

/** An inner crew produced its output, which fills its agent's slot. */
export const NestedCrewCompletedEventSchema = z.object({
  type: z.literal("nested.crew.completed"),
  crewId: CrewIdSchema,
  phaseIndex: PhaseIndexSchema,
  role: z.string(),
  agentId: z.string(),
  innerCrewId: CrewIdSchema,
  output: JsonValueSchema,
});

/** An inner crew failed; its agent's slot fails (and may go to a fixer). */
export const NestedCrewFailedEventSchema = z.object({
  type: z.literal("nested.crew.failed"),
  crewId: CrewIdSchema,
  phaseIndex: PhaseIndexSchema,
  role: z.string(),
  agentId: z.string(),
  innerCrewId: CrewIdSchema,
  reason: z.string(),
  code: z.string(),
});

/** The crew's final output. Only the root session emits it (inner crews end in `nested.crew.completed`). */
export const CrewCompletedEventSchema = z.object({
  type: z.literal("crew.completed"),
  crewId: CrewIdSchema,
  output: JsonValueSchema,
});

/** The crew could not produce an output; `code` is the failing vote's code (e.g. NO_VALID_OUTPUT). */
export const CrewFailedEventSchema = z.object({
  type: z.literal("crew.failed"),
  crewId: CrewIdSchema,
  reason: z.string(),
  code: z.string(),
  phaseIndex: PhaseIndexSchema.optional(),
  role: z.string().optional(),
  tally: VoteTallySchema.optional(),
});

/** The crew was cancelled; answers still in flight are ignored. */
export const CrewCancelledEventSchema = z.object({
  type: z.literal("crew.cancelled"),
  crewId: CrewIdSchema,
  reason: z.string(),
});

/** Something the engine ignored or refused; reported, never thrown. */
export const CrewDiagnosticEventSchema = z.object({
  type: z.literal("crew.diagnostic"),
  crewId: CrewIdSchema,
  code: DiagnosticCodeSchema,
  message: z.string(),
  correlationId: z.string().optional(),
});

/** Every event a session emits. */
export const OutboundCrewEventSchema = z.discriminatedUnion("type", [
  CrewStartedEventSchema,
  PhaseStartedEventSchema,
  AgentStepRequestedEventSchema,
  AgentStepTimedOutEventSchema,
  FixerInvokedEventSchema,
  VoteResolvedEventSchema,
  AgentMessageRelayedEventSchema,
  AgentDelegationRelayedEventSchema,
  NestedCrewStartedEventSchema,
  NestedCrewCompletedEventSchema,
  NestedCrewFailedEventSchema,
  CrewCompletedEventSchema,
  CrewFailedEventSchema,
  CrewCancelledEventSchema,
  CrewDiagnosticEventSchema,
]);

/** Every crew event, inbound or outbound. */
export const CrewEventSchema = z.discriminatedUnion("type", [
  ...InboundCrewEventSchema.options,
  ...OutboundCrewEventSchema.options,
]);

/** A worker's successful answer. */
export type AgentStepCompletedEvent = z.infer<typeof AgentStepCompletedEventSchema>;
/** A worker's failed answer. */
export type AgentStepFailedEvent = z.infer<typeof AgentStepFailedEventSchema>;
/** A streamed partial answer. */
export type AgentStreamChunkEvent = z.infer<typeof AgentStreamChunkEventSchema>;
/** A timer tick. */
export type CrewTickEvent = z.infer<typeof CrewTickEventSchema>;
/** A cancel request. */
export type CrewCancelEvent = z.infer<typeof CrewCancelEventSchema>;
/** Any inbound event. */
export type InboundCrewEvent = z.infer<typeof InboundCrewEventSchema>;
/** Crew began. */
export type CrewStartedEvent = z.infer<typeof CrewStartedEventSchema>;
/** Phase began. */
export type PhaseStartedEvent = z.infer<typeof PhaseStartedEventSchema>;
/** Step request. */
export type AgentStepRequestedEvent = z.infer<typeof AgentStepRequestedEventSchema>;
/** Step timeout. */
export type AgentStepTimedOutEvent = z.infer<typeof AgentStepTimedOutEventSchema>;
/** Fixer took over a slot. */
export type FixerInvokedEvent = z.infer<typeof FixerInvokedEventSchema>;
/** Phase vote result. */
export type VoteResolvedEvent = z.infer<typeof VoteResolvedEventSchema>;
/** Relayed message. */
export type AgentMessageRelayedEvent = z.infer<typeof AgentMessageRelayedEventSchema>;
/** Relayed delegation. */
export type AgentDelegationRelayedEvent = z.infer<typeof AgentDelegationRelayedEventSchema>;
/** Inner crew began. */
export type NestedCrewStartedEvent = z.infer<typeof NestedCrewStartedEventSchema>;
/** Inner crew finished. */
export type NestedCrewCompletedEvent = z.infer<typeof NestedCrewCompletedEventSchema>;
/** Inner crew failed. */
export type NestedCrewFailedEvent = z.infer<typeof NestedCrewFailedEventSchema>;
/** Crew output. */
export type CrewCompletedEvent = z.infer<typeof CrewCompletedEventSchema>;
/** Crew failure. */
export type CrewFailedEvent = z.infer<typeof CrewFailedEventSchema>;
/** Crew cancelled. */
export type CrewCancelledEvent = z.infer<typeof CrewCancelledEventSchema>;
/** Diagnostic. */
export type CrewDiagnosticEvent = z.infer<typeof CrewDiagnosticEventSchema>;
/** Any outbound event. */
export type OutboundCrewEvent = z.infer<typeof OutboundCrewEventSchema>;
/** Any crew event. */
export type CrewEvent = InboundCrewEvent | OutboundCrewEvent;

/** Names of the inbound event types `deliver` accepts. */
export const INBOUND_EVENT_TYPES = InboundCrewEventSchema.options.map((o) => o.shape.type.value);

/** Validates an inbound event; throws `InvalidCrewEventError` naming every problem. */
export function parseInboundCrewEvent(raw: unknown): InboundCrewEvent {
  const result = InboundCrewEventSchema.safeParse(raw);
  if (result.success) return result.data;
  const type =
    typeof (raw as { type?: unknown } | null)?.type === "string"
      ? (raw as { type: string }).type
      : String((raw as { type?: unknown } | null)?.type);
  if (!(INBOUND_EVENT_TYPES as string[]).includes(type)) {
    throw new InvalidCrewEventError(
      type,
      [{ path: "type", code: "invalid_union", message: `expected one of ${INBOUND_EVENT_TYPES.join(", ")}` }],
      { cause: result.error },
    );
  }
  throw new InvalidCrewEventError(type, schemaIssues(result.error), { cause: result.error });
}
