// Queue messages between the pipeline's stages, each defined once as a zod schema used by producer and consumer.
import * as z from "zod";
import {
  AgentStepCompletedEventSchema,
  AgentStepFailedEventSchema,
  AgentStepRequestedEventSchema,
  canonicalize,
  CrewTickEventSchema,
  hashHex,
} from "../core/crew/index.ts";
import { AuditEventSchema } from "../core/integrity/audit.ts";
import type { AuditEvent } from "../core/integrity/audit.ts";
import { withPersonalErased } from "../core/privacy/sealing.ts";

/**
 * Audit carried with a crew-queue message: the worker's audit of the step it answers (its LLM_CALL, and a
 * self-check repair round's event), or intake's receipt (CLAIM_RECEIVED) with a claim's start. The orchestrator
 * stores it with the step the message makes (one write), or appends it when the message makes none (a duplicate,
 * a late answer, a triaged claim). Never given to the crew.
 */
const CarriedAuditSchema = z.array(AuditEventSchema).min(1).optional();

/**
 * Where a start says its claim's crew session can be: `"steps"` — only in the session store's current layout. Set on
 * the start made by the invocation that stored the claim (intake) or its structured claim (extraction), in a release
 * whose orchestrators write only that layout; a start without it (an older release's, a restart by the sweep or a
 * retry of a claim that may be older) has the session looked for in every layout written so far.
 */
export const SESSION_LAYOUT_STAMP = "steps";

/** Starts the crew of a claim whose structured claim is known (sent by intake, carrying its receipt). */
const ClaimStartMessageSchema = z
  .object({
    type: z.literal("claim.start"),
    crewId: z.string().min(1),
    audit: CarriedAuditSchema,
    sessionLayout: z.literal(SESSION_LAYOUT_STAMP).optional(),
  })
  .strict();

/** Everything the orchestrator's FIFO queue carries: a start, a step result, or a timer tick. */
export const CrewQueueMessageSchema = z.discriminatedUnion("type", [
  ClaimStartMessageSchema,
  AgentStepCompletedEventSchema.extend({ audit: CarriedAuditSchema }),
  AgentStepFailedEventSchema.extend({ audit: CarriedAuditSchema }),
  CrewTickEventSchema,
]);

/** A message on the crew-events queue. */
export type CrewQueueMessage = z.infer<typeof CrewQueueMessageSchema>;

/**
 * An agent step for the worker: the engine's request plus the claim's flow ids (`root_dfid` and `simulation_id`, which
 * never change, spare the worker a read of the claim; a message sent before them has the worker read it).
 */
export const AgentStepMessageSchema = z.object({
  claim_id: z.string().min(1),
  dfid: z.string().min(1),
  root_dfid: z.string().min(1).optional(),
  simulation_id: z.string().min(1).optional(),
  request: AgentStepRequestedEventSchema,
});

/** A message on the agent-steps queue. */
export type AgentStepMessage = z.infer<typeof AgentStepMessageSchema>;

/**
 * A proposal for the kernel and the claim it answers, by id only: the kernel decides from the stored claim,
 * never from a copy in a message (fields an older producer added are dropped).
 */
export const ProposalMessageSchema = z.object({
  claim_id: z.string().min(1),
  dfid: z.string().min(1),
  proposal: z.unknown(),
});

/** A message on the proposals queue. */
export type ProposalMessage = z.infer<typeof ProposalMessageSchema>;

/** Asks intake to extract a free-text claim. */
export const ExtractionMessageSchema = z.object({ claim_id: z.string().min(1) }).strict();

/** A delayed timer that becomes a `crew.tick` for the claim when it is due. */
export const TimerMessageSchema = z.object({ claim_id: z.string().min(1), due_ms: z.number().int() }).strict();

/** A message on the timers queue. */
export type TimerMessage = z.infer<typeof TimerMessageSchema>;

/**
 * Whether the session of the claim these messages belong to may be in a layout written before (a session load's
 * `legacyLayout`): false when one of them is a stamped start (`sessionLayout`), which only a claim started by this
 * release has — whatever else the batch holds, that claim's session was never written in an older layout.
 */
export function mayHaveLegacySession(messages: readonly CrewQueueMessage[]): boolean {
  return !messages.some((m) => m.type === "claim.start" && m.sessionLayout === SESSION_LAYOUT_STAMP);
}

/** The claim a crew id belongs to (inner crews are `claimId/agentId`). */
export function claimIdOfCrew(crewId: string): string {
  const slash = crewId.indexOf("/");
  return slash === -1 ? crewId : crewId.slice(0, slash);
}

/** A crew-queue message without the audit it carries, and that audit (empty when none). */
export function withoutCarriedAudit(message: CrewQueueMessage): { message: CrewQueueMessage; audit: AuditEvent[] } {
  if (message.type === "crew.tick") return { message, audit: [] };
  const { audit, ...rest } = message;
  return { message: rest, audit: audit ?? [] };
}

/**
 * Deduplication id of a crew-queue message: the same step answer or tick always maps to the same id. An answer that
 * carries its audit is told apart by it: a second model call for the same step (a redelivered request) is a
 * duplicate to the crew, but its audit must still arrive. The audit is hashed with the customer's words blanked
 * (issue 38): an answer resent from a session after its claim's erasure reads `[erased]` there, and is still the
 * message first sent, never a second one.
 */
export function crewMessageDedupeId(message: CrewQueueMessage): string {
  switch (message.type) {
    case "claim.start":
      return `start:${message.crewId}`;
    case "agent.step.completed":
    case "agent.step.failed":
      return message.audit === undefined
        ? `step:${message.correlationId}`
        : `step:${message.correlationId}:${hashHex(canonicalize(withPersonalErased(message.audit))).slice(0, 16)}`;
    case "crew.tick":
      return `tick:${message.crewId}:${message.nowMs}`;
  }
}
