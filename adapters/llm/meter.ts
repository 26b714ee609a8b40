// Counts and times the calls through an LlmPort, for the batch's progress lines (calls in flight,
// how long) and its figures (time per call and per claim). Adds nothing to the calls themselves.
import type { LlmPort, LlmRequest, LlmResult, LlmTask } from "../../core/llm/port.ts";

/** One finished call. */
interface LlmCallRecord {
  readonly task: LlmTask;
  readonly ok: boolean;
  readonly code?: string | undefined;
  readonly attempts: number;
  readonly ms: number;
}

/** A call still waiting for its answer. */
interface LlmCallInFlight {
  readonly task: LlmTask;
  readonly elapsedMs: number;
}

/** A metered port and what it saw. */
export interface LlmMeter {
  readonly port: LlmPort;
  inFlight(): LlmCallInFlight[];
  /** The finished calls kept (every one, unless `keep` bounds them: then the last `keep`), in the order they finished. */
  calls(): readonly LlmCallRecord[];
}

/**
 * Wraps `port` so every call is counted and timed (wall time, `now` in ms). A process that stays up (`claims serve`)
 * passes `keep` (how many finished calls to remember, 0: none), so the records do not grow with every claim.
 */
export function meterLlm(
  port: LlmPort,
  now: () => number = () => performance.now(),
  keep = Number.POSITIVE_INFINITY,
): LlmMeter {
  const open = new Map<number, { task: LlmTask; started: number }>();
  const done: LlmCallRecord[] = [];
  let next = 0;
  return {
    inFlight: () => [...open.values()].map((c) => ({ task: c.task, elapsedMs: now() - c.started })),
    calls: () => done,
    port: {
      provider: port.provider,
      model: port.model,
      async complete<T = string>(request: LlmRequest<T>): Promise<LlmResult<T>> {
        const id = next++;
        const started = now();
        open.set(id, { task: request.task, started });
        try {
          const result = await port.complete(request);
          if (keep > 0)
            done.push({
              task: request.task,
              ok: result.ok,
              ...(result.ok ? {} : { code: result.code }),
              attempts: result.attempts,
              ms: now() - started,
            });
          if (done.length > keep) done.splice(0, done.length - keep);
          return result;
        } finally {
          open.delete(id);
        }
      },
    },
  };
}
