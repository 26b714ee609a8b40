// Performs effects through the ports, in order; consecutive agent steps go out as one batch, and the
// audit events of a list are appended together where the first of them stands (one stored item). Performs what a
// decider asks (a read, a conditional write) and runs a decider to its outcome: the shells' one loop.
import { approvedAloneOnOrder } from "./approved-alone.ts";
import { VersionConflictError } from "../core/errors.ts";
import { KernelInputError, OrderDataError } from "../core/integrity/index.ts";
import { announce } from "./payments.ts";
import { sentProposalIn } from "./decide/crew-completion.ts";
import type { EffectPorts, PipelineDeps } from "./deps.ts";
import { splitSessionOutbox } from "./ports.ts";
import type { Effect } from "./effects.ts";
import { OrderSourceUnavailableError } from "./errors.ts";
import type { AgentStepMessage } from "./messages.ts";
import type { Admission, Observation, Request } from "./decide/requests.ts";
import type { FailureObserved, Next, Step } from "./decide/step.ts";

/** Performs `effects` in order. Every effect is idempotent, so performing a list twice is safe. */
export async function performEffects(effects: readonly Effect[], ports: EffectPorts): Promise<void> {
  // Every audit event of the list goes with the first one: earlier than its place in the list, never
  // later, so each is still appended before anything that follows it (a publish, a queue message).
  const audit = effects.flatMap((e) => (e.kind === "audit" ? [e.event] : []));
  let audited = false;
  let steps: AgentStepMessage[] = [];
  const flushSteps = async () => {
    if (steps.length > 0) await ports.queues.sendAgentSteps(steps);
    steps = [];
  };
  for (const effect of effects) {
    if (effect.kind === "agent_step" && effect.delayMs === undefined) {
      steps.push(effect.message);
      continue;
    }
    await flushSteps();
    switch (effect.kind) {
      case "agent_step":
        await ports.queues.sendAgentSteps([effect.message], { delayMs: effect.delayMs });
        break;
      case "proposal":
        await ports.queues.sendProposal(effect.message);
        break;
      case "crew_event":
        await ports.queues.sendCrewEvents(effect.claimId, [effect.message]);
        break;
      case "timer":
        await ports.queues.scheduleTimer(effect.claimId, effect.dueMs);
        break;
      case "extraction":
        await ports.queues.requestExtraction(
          effect.claimId,
          effect.delayMs === undefined ? undefined : { delayMs: effect.delayMs },
        );
        break;
      case "audit":
        if (!audited) await (audit.length === 1 ? ports.audit.append(audit[0]!) : ports.audit.appendAll(audit));
        audited = true;
        break;
      case "claim_update":
        await ports.claims.updateClaim(effect.claimId, effect.patch, effect.onlyFrom);
        break;
      case "publish":
        await ports.publisher.publish(effect.entries);
        break;
      case "review_open": {
        // The ledger mark goes first: once the review exists a repeat may find nothing left to do. A repeat after
        // the review was decided (a late redelivery) takes its mark back, or it would block the order for good; a
        // decision records itself before it clears the mark a last time, so one of the two always clears it.
        const orderId = effect.review.order_id;
        if (orderId) await ports.ledger.markReviewPending(orderId, effect.review.claim_id, effect.review.simulation_id);
        const stored = await ports.reviews.openReview(effect.review);
        if (orderId && stored.status !== "PENDING")
          await ports.ledger.clearReviewPending(orderId, effect.review.claim_id, effect.review.simulation_id);
        break;
      }
      case "review_closed":
        await ports.ledger.clearReviewPending(effect.orderId, effect.claimId, effect.scope, effect.decision);
        break;
      case "refund_released":
        await ports.ledger.releaseRefund(effect.orderId, effect.claimId, effect.scope);
        break;
    }
  }
  await flushSteps();
}

/** The ports a decider's requests are performed through. */
export type RequestPorts = EffectPorts &
  Pick<
    PipelineDeps,
    | "clock"
    | "claims"
    | "verdicts"
    | "orders"
    | "ledger"
    | "reviews"
    | "sessions"
    | "ids"
    | "llm"
    | "batchLlm"
    | "settlements"
  > & {
    /** The intake's back-pressure, when its caller bounds open claims. */
    admit?: () => Promise<Admission>;
    /** Whether a run bounded in time (the sweep's Lambda) may go on. */
    hasTime?: () => boolean;
  };

/**
 * Performs what a decider asked (pipeline/decide/requests.ts) and answers with what came back. A failure the decider
 * observes (`failureObserved`, pipeline/decide/step.ts) is answered as `failed`, for it to decide on; anything else
 * is thrown.
 */
export function performRequest(
  request: Request,
  ports: Partial<RequestPorts> & EffectPorts,
  failureObserved?: FailureObserved,
): Promise<Observation> {
  if (failureObserved === undefined) return answer(request, ports as RequestPorts);
  return answer(request, ports as RequestPorts).catch((error: unknown): Observation => {
    if (failureObserved !== "order_data" && error instanceof OrderSourceUnavailableError)
      return { kind: "failed", code: error.code, message: error.message };
    if (error instanceof OrderDataError || (failureObserved === "order" && error instanceof KernelInputError))
      return { kind: "failed", code: "ORDER_DATA_INVALID", message: error.message };
    throw error;
  });
}

async function answer(request: Request, ports: RequestPorts): Promise<Observation> {
  switch (request.kind) {
    case "now":
      return { kind: "now", now: ports.clock.now() };
    case "claim":
      return { kind: "claim", claim: await ports.claims.getClaim(request.claimId) };
    case "claim_update": {
      const { claimId, patch, onlyFrom } = request.update;
      const { changed, record } = await ports.claims.updateClaim(claimId, patch, onlyFrom);
      return { kind: "claim_update", changed, record };
    }
    case "admit": {
      if (!ports.admit) throw new Error("performRequest: admit asked of a shell that bounds nothing");
      return { kind: "admit", admission: await ports.admit() };
    }
    case "new_id":
      return { kind: "new_id", id: ports.ids.next(request.prefix) };
    case "create_claim":
      return { kind: "create_claim", result: await ports.claims.createClaim(request.record, request.idempotency) };
    case "extract":
      return {
        kind: "extract",
        result: await (request.viaBatch && ports.batchLlm ? ports.batchLlm : ports.llm).complete(request.request),
      };
    case "verdict":
      return { kind: "verdict", verdict: await ports.verdicts.getVerdict(request.key) };
    case "store_verdict":
      return { kind: "store_verdict", verdict: await ports.verdicts.putVerdictOnce(request.verdict) };
    case "record_execution":
      return { kind: "record_execution", verdict: await ports.verdicts.recordExecution(request.key, request.outcome) };
    case "mark_published":
      await ports.verdicts.markPublished(request.key);
      return { kind: "mark_published" };
    case "order": {
      const order = await ports.orders.getOrder(request.orderId);
      // Who said there is no such order, for the verdict's reason (the shop's API, or the context store).
      const absentFrom = order === undefined ? ports.orders.origin : undefined;
      return { kind: "order", order, ...(absentFrom ? { absentFrom } : {}) };
    }
    case "ledger":
      return { kind: "ledger", entry: await ports.ledger.get(request.orderId, request.scope) };
    case "customer_window":
      return {
        kind: "customer_window",
        window: await ports.ledger.getCustomerWindow(request.customerId, request.scope),
      };
    case "reserve_customer":
      return { kind: "reserve_customer", result: await ports.ledger.reserveCustomer(request.request) };
    case "reserve":
      return { kind: "reserve", result: await ports.ledger.reserve(request.request) };
    case "release_customer":
      await ports.ledger.releaseCustomer(request.customerId, request.claimId, request.scope);
      return { kind: "release_customer" };
    case "review":
      return { kind: "review", review: await ports.reviews.getReview(request.claimId) };
    case "approved_alone": {
      const { orderId, scope, reviewer, exceptClaimId } = request;
      return {
        kind: "approved_alone",
        ...(await approvedAloneOnOrder(ports, { orderId, scope, reviewer, exceptClaimId })),
      };
    }
    case "review_update": {
      const { changed, review } = await ports.reviews.updateReview(request.review);
      return { kind: "review_update", changed, review };
    }
    case "settlement":
      return { kind: "settlement", settlement: await ports.settlements?.get(request.claimId) };
    case "settlement_update":
      try {
        await ports.settlements!.update(request.settlement);
        return { kind: "settlement_update", conflict: false };
      } catch (error) {
        if (error instanceof VersionConflictError) return { kind: "settlement_update", conflict: true };
        throw error;
      }
    case "announce":
      await announce({ ...ports, settlements: ports.settlements! }, request.settlement);
      return { kind: "announce" };
    case "session":
      return { kind: "session", session: await ports.sessions.loadSession(request.claimId) };
    case "sent_proposal":
      return {
        kind: "sent_proposal",
        proposal: sentProposalIn(await ports.audit.byDfid(request.dfid), request.claimId),
      };
    case "has_time":
      return { kind: "has_time", hasTime: ports.hasTime ? ports.hasTime() : true };
    case "save_session": {
      const { session } = request;
      await ports.sessions.saveSession(session);
      return { kind: "save_session", rest: splitSessionOutbox(session.claimId, session.outbox).rest };
    }
    case "clear_outbox":
      await ports.sessions.clearOutbox(request.claimId, request.version);
      return { kind: "clear_outbox" };
  }
}

/**
 * Runs a decider to its outcome: performs each step's effects (one list per step; `ifFailed` if they fail), goes on
 * to `then`, and performs what it asks, feeding the answer back, until it is done.
 */
export async function runDecider<O, S>(
  first: Step<Next<O, S>>,
  decide: (state: S, observed: Observation) => Step<Next<O, S>>,
  ports: Partial<RequestPorts> & EffectPorts,
): Promise<O> {
  let step = first;
  for (;;) {
    if (step.effects.length > 0) {
      try {
        await performEffects(step.effects, ports);
      } catch (error) {
        if (step.ifFailed) await performEffects(step.ifFailed, ports).catch(() => undefined);
        throw error;
      }
    }
    const { next } = step;
    if ("done" in next) return next.done;
    if ("then" in next) step = next.then;
    // The clock is read where the decider asks, at once (no I/O).
    else if (next.awaiting.kind === "now") step = decide(next.state, { kind: "now", now: ports.clock!.now() });
    else step = decide(next.state, await performRequest(next.awaiting, ports, next.failureObserved));
  }
}
