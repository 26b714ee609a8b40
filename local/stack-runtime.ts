// The ClaimsRuntime over the local stack: submissions go through intake (core submitClaim over the
// stack's DynamoDB and SQS adapters), everything after that through the queues and the production
// handlers; settle() polls the claim record until it is final, then waits for the queues to drain.
// A claim still not final when the settle limit (derived from the LLM settings) runs out goes to
// NEEDS_REVIEW (CLAIM_TIMED_OUT): a slow model costs a claim, never the run.
import { setTimeout as sleep } from "node:timers/promises";
import type { ClaimRecord, ClaimStatus } from "../core/kernel/claim-record.ts";
import type { PipelineDeps } from "../pipeline/deps.ts";
import { submitClaim } from "../pipeline/intake.ts";
import { endOverdueClaim } from "../pipeline/overdue.ts";
import { decideReview } from "../pipeline/review.ts";
import { depsAt, rehearseDecline, SWEEP_PAGE } from "./runtime.ts";
import { postReturnEvent, sweepDueReturns } from "../pipeline/returns.ts";
import type { ClaimsRuntime } from "./runtime.ts";
import { SettleTimeoutError } from "./errors.ts";

const FINAL: readonly ClaimStatus[] = ["DECIDED", "NEEDS_REVIEW", "AWAITING_RETURN"];

/** What the runtime needs from the stack. */
interface StackRuntimeInput {
  readonly deps: PipelineDeps;
  /** The intake function's dependencies (its links only); submissions go through them. */
  readonly intake?: PipelineDeps;
  /** Resolves when the work queues are empty, no handler runs and the bus has delivered everything. */
  readonly drained: (timeoutMs?: number) => Promise<void>;
  readonly stop: () => Promise<void>;
  readonly settleTimeoutMs: number;
  /** A one-line account of the queues (depths, DLQs) for the timeout error. */
  readonly diagnose?: () => Promise<string>;
  readonly description?: string;
}

/** A ClaimsRuntime whose settle() names the claim and its last status when it gives up. */
export function createStackRuntime(input: StackRuntimeInput): ClaimsRuntime {
  const { deps } = input;
  return {
    description: input.description ?? "local stack (dynalite, fauxqs, local EventBridge; production handlers)",
    submit: (body, o = {}) => submitClaim(body, o, input.intake ?? deps),
    async settle(claimId) {
      const deadline = Date.now() + input.settleTimeoutMs;
      for (let wait = 2; ; wait = Math.min(50, wait * 2)) {
        const record: ClaimRecord | undefined = await deps.claims.getClaim(claimId);
        if (record && FINAL.includes(record.status)) {
          // The claim is final; its follow-up work (events, the refund) gets the time left, at least 5 s.
          await input.drained(Math.max(5_000, deadline - Date.now())).catch(() => undefined);
          return deps.claims.getClaim(claimId);
        }
        if (Date.now() >= deadline) {
          const status = record?.status ?? "not stored";
          const queues = input.diagnose
            ? await input.diagnose().catch((e: unknown) => `queues unreadable: ${(e as Error).message}`)
            : "";
          if (!record)
            throw new SettleTimeoutError(
              `claim ${claimId} did not reach DECIDED or NEEDS_REVIEW within ${input.settleTimeoutMs / 1000} s (last status: ${status})${queues ? `; ${queues}` : ""}`,
              claimId,
              status,
            );
          return endOverdueClaim(claimId, { waitedMs: input.settleTimeoutMs, detail: queues }, deps);
        }
        await sleep(wait);
      }
    },
    getClaim: (claimId) => deps.claims.getClaim(claimId),
    // As the ReviewApi function decides it: through the stack's ports, so the refund, audit and events are the real ones.
    decideReview: (claimId, body, by, atMs) => decideReview(claimId, body, depsAt(deps, atMs), by),
    // Through the stack's ports: the settlement in its table, RefundFailed and ReviewOpened on its bus.
    async rehearseDecline(claimId, declined, atMs) {
      const rehearsal = await rehearseDecline(depsAt(deps, atMs), claimId, declined);
      await input.drained().catch(() => undefined);
      return rehearsal;
    },
    // As the ReviewApi function records it; the refund it releases is paid by the stack's executor before this resolves.
    async postReturnEvent(claimId, body, atMs) {
      const result = await postReturnEvent(claimId, body, depsAt(deps, atMs));
      await input.drained().catch(() => undefined);
      return result;
    },
    async sweepReturns(atMs) {
      const result = await sweepDueReturns(depsAt(deps, atMs), { pageSize: SWEEP_PAGE });
      await input.drained().catch(() => undefined);
      return result;
    },
    appendAudit: (event) => deps.audit.append(event),
    auditBySimulation: (id) => deps.audit.bySimulation(id),
    close: () => input.stop(),
  };
}
