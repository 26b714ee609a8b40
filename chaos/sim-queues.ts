// The pipeline's five queues (and the refund executor's, fed by the payments rule) simulated with SQS's semantics, so the in-memory chaos runs deliver work as
// Lambda's event sources do: at least once, standard queues in any order, the FIFO crew-events queue in order
// per claim (one batch of a group in flight at a time, a five-minute deduplication window), a failed or
// crashed delivery visible again after its visibility timeout, and a message moved to its DLQ after
// maxReceiveCount receives. On top of that the flow's faults: duplicated, delayed and lost messages.
import {
  AgentStepMessageSchema,
  CrewQueueMessageSchema,
  crewMessageDedupeId,
  ExtractionMessageSchema,
  ProposalMessageSchema,
  TimerMessageSchema,
} from "../pipeline/messages.ts";
import type { WorkQueues } from "../pipeline/ports.ts";
import { timerDelaySeconds } from "../adapters/aws/sqs-work-queues.ts";
import { FUNCTIONS, PAYMENTS_QUEUE, QUEUES, visibilityTimeoutSeconds } from "../app/manifest.ts";
import type { QueueRole } from "../app/manifest.ts";
import { RefundExecutedEnvelopeSchema } from "../functions/refund-executor.ts";
import type { z } from "zod";
import type { FaultPlan } from "./plan.ts";
import type { Rng } from "./rng.ts";
import { ChaosError } from "./errors.ts";

/** A simulated queue: a work queue of the pipeline, or the refund executor's (`payments`). */
export type SimRole = QueueRole | "payments";

/** Every queue role, in a fixed order. */
const QUEUE_ROLES: readonly SimRole[] = ["crewEvents", "agentSteps", "proposals", "extraction", "timers", "payments"];

/** A queue's batch size, receives before its DLQ and visibility timeout (the payments queue: infra/payments.ts). */
function queueFact(role: SimRole): { batchSize: number; maxReceives: number; visibilityMs: number } {
  if (role === "payments")
    return {
      batchSize: PAYMENTS_QUEUE.batchSize,
      maxReceives: PAYMENTS_QUEUE.maxReceives,
      visibilityMs: 6 * FUNCTIONS.refundExecutor.timeoutSeconds * 1000,
    };
  return {
    batchSize: QUEUES[role].batchSize,
    maxReceives: QUEUES[role].maxReceives,
    visibilityMs: visibilityTimeoutSeconds(role) * 1000,
  };
}

/** SQS FIFO drops a message whose deduplication id was seen in the last five minutes. */
const FIFO_DEDUPE_WINDOW_MS = 5 * 60_000;

/** A message in a simulated queue. */
export interface SimMessage {
  readonly id: number;
  readonly role: SimRole;
  readonly body: string;
  readonly group?: string;
  visibleAt: number;
  receives: number;
  inFlight: boolean;
}

/** What the faults did to the messages sent (counted for the report). */
export interface SendFaultCounts {
  duplicate: number;
  delay: number;
  lostTimer: number;
}

/** The simulated queues: the producer side is a `WorkQueues` port; the scheduler receives, acks and fails deliveries. */
export interface SimQueues {
  readonly port: WorkQueues;
  /** The payments rule's target: an EventBridge envelope of RefundExecuted for the refund executor's queue. */
  sendToPayments(envelope: unknown): void;
  /** Moves the payments DLQ's messages back to their queue (an operator's redrive after the DLQ alarm); returns how many. */
  redrivePayments(now: number): number;
  /** Deliveries that could start now, each the messages one consumer invocation would get. */
  available(now: number): SimMessage[][];
  /** Marks the messages received (in flight; their receive count goes up). */
  receive(messages: readonly SimMessage[]): void;
  /** Deletes delivered messages; failed ones become visible after the visibility timeout, or go to the DLQ after their last receive. */
  settle(results: ReadonlyMap<SimMessage, boolean>, now: number): void;
  /** When the next message becomes visible, if any is waiting. */
  nextVisibleAt(): number | undefined;
  /** Messages not yet delivered (not counting the DLQs). */
  pending(): number;
  /** Messages moved to a DLQ, by role. */
  readonly deadLetters: SimMessage[];
  readonly counts: SendFaultCounts;
}

const SCHEMAS: Record<SimRole, z.ZodType> = {
  crewEvents: CrewQueueMessageSchema,
  agentSteps: AgentStepMessageSchema,
  proposals: ProposalMessageSchema,
  extraction: ExtractionMessageSchema,
  timers: TimerMessageSchema,
  payments: RefundExecutedEnvelopeSchema,
};

/** A producer's delay as SQS applies it: whole seconds, at most 15 minutes. */
function sqsDelay(delayMs: number | undefined): { delayMs?: number } {
  return delayMs === undefined || delayMs <= 0 ? {} : { delayMs: Math.min(900, Math.ceil(delayMs / 1000)) * 1000 };
}

/** Simulated queues on `clock`, with `faults` drawn from `rng` as messages are sent. */
export function createSimQueues(opts: { clock: { now(): number }; rng: Rng; faults: FaultPlan }): SimQueues {
  const { clock, rng, faults } = opts;
  const messages: SimMessage[] = [];
  const deadLetters: SimMessage[] = [];
  const dedupe = new Map<string, number>();
  const counts: SendFaultCounts = { duplicate: 0, delay: 0, lostTimer: 0 };
  let nextId = 1;

  const send = (role: SimRole, message: unknown, o: { group?: string; dedupeId?: string; delayMs?: number } = {}) => {
    // As the SQS adapter: a message is checked against its schema before it leaves.
    const parsed = SCHEMAS[role].safeParse(message);
    if (!parsed.success)
      throw new ChaosError(
        "INVALID_MESSAGE_SENT",
        `a ${role} message does not match its schema: ${parsed.error.message}`,
      );
    const now = clock.now();
    if (o.dedupeId !== undefined) {
      const seen = dedupe.get(o.dedupeId);
      if (seen !== undefined && now - seen < FIFO_DEDUPE_WINDOW_MS) return;
      dedupe.set(o.dedupeId, now);
    }
    if (role === "timers" && faults.lostTimer > 0 && rng.chance(faults.lostTimer)) {
      counts.lostTimer++;
      return;
    }
    let delay = o.delayMs ?? 0;
    if (faults.delay > 0 && rng.chance(faults.delay)) {
      counts.delay++;
      delay += rng.int(1, faults.maxDelayMs);
    }
    const body = JSON.stringify(message);
    const push = (extraDelay: number) =>
      messages.push({
        id: nextId++,
        role,
        body,
        ...(o.group !== undefined ? { group: o.group } : {}),
        visibleAt: now + delay + extraDelay,
        receives: 0,
        inFlight: false,
      });
    push(0);
    // A duplicate: the producer retried after its answer was lost, or SQS delivered twice (FIFO: under another deduplication id).
    if (faults.duplicate > 0 && rng.chance(faults.duplicate)) {
      counts.duplicate++;
      push(rng.int(0, 5_000));
    }
  };

  const port: WorkQueues = {
    async sendAgentSteps(list, opts) {
      for (const m of list) send("agentSteps", m, sqsDelay(opts?.delayMs));
    },
    async sendProposal(m) {
      send("proposals", m);
    },
    async sendCrewEvents(claimId, list) {
      for (const m of list) send("crewEvents", m, { group: claimId, dedupeId: `${claimId}|${crewMessageDedupeId(m)}` });
    },
    async scheduleTimer(claimId, dueMs) {
      send("timers", { claim_id: claimId, due_ms: dueMs }, { delayMs: timerDelaySeconds(dueMs, clock.now()) * 1000 });
    },
    async requestExtraction(claimId, opts) {
      send("extraction", { claim_id: claimId }, sqsDelay(opts?.delayMs));
    },
  };

  const available = (now: number): SimMessage[][] => {
    const out: SimMessage[][] = [];
    // FIFO: per group, the visible messages from the head on, unless a batch of the group is in flight.
    const groups = new Map<string, SimMessage[]>();
    for (const m of messages) if (m.role === "crewEvents") groups.set(m.group!, [...(groups.get(m.group!) ?? []), m]);
    for (const list of groups.values()) {
      if (list.some((m) => m.inFlight)) continue;
      const batch: SimMessage[] = [];
      for (const m of list) {
        if (m.visibleAt > now || batch.length === QUEUES.crewEvents.batchSize) break;
        batch.push(m);
      }
      if (batch.length > 0) out.push(batch);
    }
    // Standard queues: any visible messages, in any order, up to the batch size.
    for (const role of QUEUE_ROLES) {
      if (role === "crewEvents") continue;
      const visible = rng.shuffle(messages.filter((m) => m.role === role && !m.inFlight && m.visibleAt <= now));
      for (let i = 0; i < visible.length; ) {
        const size = rng.int(1, queueFact(role).batchSize);
        out.push(visible.slice(i, i + size));
        i += size;
      }
    }
    return out;
  };

  return {
    port,
    sendToPayments(envelope) {
      send("payments", envelope);
    },
    redrivePayments(now) {
      let n = 0;
      for (let i = deadLetters.length - 1; i >= 0; i--) {
        const m = deadLetters[i]!;
        if (m.role !== "payments") continue;
        deadLetters.splice(i, 1);
        messages.push({ ...m, receives: 0, inFlight: false, visibleAt: now });
        n++;
      }
      return n;
    },
    available,
    receive(list) {
      for (const m of list) {
        m.inFlight = true;
        m.receives++;
      }
    },
    settle(results, now) {
      for (const [m, ok] of results) {
        const at = messages.indexOf(m);
        if (at === -1) continue; // settled by a racing delivery already
        if (ok) {
          messages.splice(at, 1);
          continue;
        }
        m.inFlight = false;
        m.visibleAt = now + queueFact(m.role).visibilityMs;
        if (m.receives >= queueFact(m.role).maxReceives) {
          messages.splice(at, 1);
          deadLetters.push(m);
        }
      }
    },
    nextVisibleAt() {
      // A FIFO group moves when its head is visible; a standard message when it is.
      const heads = new Map<string, SimMessage>();
      for (const m of messages) if (m.role === "crewEvents" && !heads.has(m.group!)) heads.set(m.group!, m);
      const waiting = messages
        .filter((m) => !m.inFlight && (m.role !== "crewEvents" || heads.get(m.group!) === m))
        .map((m) => m.visibleAt);
      return waiting.length === 0 ? undefined : Math.min(...waiting);
    },
    pending: () => messages.length,
    deadLetters,
    counts,
  };
}
