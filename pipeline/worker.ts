// Worker: the shell of pipeline/decide/worker.ts. It runs one agent step through the LLM port (a model failure is an
// answer, not an error), then loops over the decider — the claim read if it asks, the step held for the model or
// answered to the claim's crew with its audit, as it decides.
import { runClaimsAgentStep } from "../core/agents/agent-step.ts";
import type { PipelineDeps } from "./deps.ts";
import { decideWorker, workerStart } from "./decide/worker.ts";
import type { WorkerOutcome } from "./decide/worker.ts";
import type { AgentStepMessage } from "./messages.ts";
import { runDecider } from "./perform.ts";

/**
 * Runs the step and sends `agent.step.completed` / `agent.step.failed`; a model failure is an answer, not an error.
 * While the model cannot be reached and the claim's outage hold lasts (docs/llm.md), the crew gets no answer: the
 * step goes back to its queue to be tried again a little later ("HELD").
 */
export async function handleAgentStep(
  message: AgentStepMessage,
  deps: Pick<
    PipelineDeps,
    | "claims"
    | "llm"
    | "batchLlm"
    | "agent"
    | "queues"
    | "audit"
    | "publisher"
    | "clock"
    | "reviews"
    | "ledger"
    | "settings"
  >,
): Promise<WorkerOutcome> {
  const started = deps.clock.now();
  // A batch run's claim (it carries its run's simulation id) goes through the Batch API when the stack has one.
  const llm = message.simulation_id !== undefined && deps.batchLlm ? deps.batchLlm : deps.llm;
  const result = await runClaimsAgentStep(message.request, {
    llm,
    contract: deps.agent.contract,
    responsibility: deps.agent.responsibility,
  });
  const viaBatch = llm === deps.batchLlm;
  const ran = { kind: "ran" as const, result, started, now: deps.clock.now(), ...(viaBatch ? { viaBatch } : {}) };
  const first = decideWorker(workerStart(message), ran, deps);
  return runDecider(first, (state, observed) => decideWorker(state, observed, deps), deps);
}
