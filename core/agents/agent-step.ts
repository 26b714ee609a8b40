// One agent step of the claims crew: what the worker runs for an `agent.step.requested`.
import * as z from "zod";
import type { AgentStepRequestedEvent } from "../crew/index.ts";
import type { ClaimsContract, ResponsibilityContract } from "../integrity/contracts.ts";
import { sumUsage, type LlmPort, type LlmResult, type LlmUsage } from "../llm/index.ts";
import { AnalystOutputSchema, CLAIMS_ROLES, ClaimsCrewInputSchema } from "./crew.ts";
import { ClaimDecisionOutputSchema, proposalForCrew, RefundProposalOutputSchema } from "../claim/proposal-output.ts";
import type { RefundProposalOutput } from "../claim/proposal-output.ts";
import type { Claim } from "../claim/claim.ts";
import type { LlmStructuredRequest } from "../llm/index.ts";
import {
  analystMessages,
  claimDecisionMessages,
  decisionMakerMessages,
  fixerMessages,
  selfCheckRepairMessage,
} from "./prompts.ts";
import { selfCheck, type SelfCheckFailure } from "./self-check.ts";

/** What the worker needs besides the request. */
interface AgentStepDeps {
  llm: LlmPort;
  contract: ClaimsContract;
  responsibility: ResponsibilityContract;
}

/** The inbound crew event a step produced, plus what the call cost (for the audit and the report). */
interface AgentStepResult {
  event:
    | { type: "agent.step.completed"; crewId: string; correlationId: string; output: unknown }
    | { type: "agent.step.failed"; crewId: string; correlationId: string; error: { message: string; code?: string } };
  usage?: LlmUsage;
  model?: string;
  attempts?: number;
  /** Model calls the step made, given only when it made 2 (the Decision Maker's self-check repair round). */
  calls?: 2;
  /** The Decision Maker's first proposal and why it failed the self-check, when it got a repair round (audited). */
  selfCheckRepair?: { output: RefundProposalOutput; failures: SelfCheckFailure[] };
  /** The compact crew's Claims Officer's analysis (its answer to the crew is the proposal alone; audited in LLM_CALL). */
  analysis?: string;
}

const FixerInputSchema = z.object({
  failed: z.object({
    agentId: z.string(),
    role: z.string(),
    error: z.object({ message: z.string(), code: z.string().optional() }),
  }),
  input: z.unknown(),
});

/** Runs one step of the claims crew through the LLM port; failures come back as `agent.step.failed`, never thrown. */
export async function runClaimsAgentStep(
  request: AgentStepRequestedEvent,
  deps: AgentStepDeps,
): Promise<AgentStepResult> {
  const base = { crewId: request.crewId, correlationId: request.correlationId };
  const fail = (code: string, message: string, extra: Partial<AgentStepResult> = {}): AgentStepResult => ({
    event: { type: "agent.step.failed", ...base, error: { code, message } },
    ...extra,
  });
  const badInput = (what: string, error: z.ZodError) =>
    fail("INVALID_STEP_INPUT", `${what} input is invalid: ${z.prettifyError(error)}`);
  // The fixer's answer as the step's output (`output` builds it from the model's value), or the call's failure.
  const fixerAnswered = <T>(result: LlmResult<T>, output: (value: T) => unknown): AgentStepResult =>
    result.ok
      ? {
          event: { type: "agent.step.completed", ...base, output: output(result.value) },
          usage: result.usage,
          model: result.model,
          attempts: result.attempts,
        }
      : fail(result.code, result.message, { model: result.model, attempts: result.attempts });

  switch (request.role) {
    case CLAIMS_ROLES.analyst: {
      const input = ClaimsCrewInputSchema.safeParse(request.input);
      if (!input.success) return badInput("analyst", input.error);
      const ctx = { receivedAt: input.data.received_at, responsibility: deps.responsibility };
      const result = await deps.llm.complete(analystMessages(input.data.claim, deps.contract, ctx));
      if (!result.ok)
        return fail(result.code, result.message, {
          ...(result.usage ? { usage: result.usage } : {}),
          model: result.model,
          attempts: result.attempts,
        });
      const output = { analysis: String(result.value), claim: input.data.claim, received_at: input.data.received_at };
      return {
        event: { type: "agent.step.completed", ...base, output },
        usage: result.usage,
        model: result.model,
        attempts: result.attempts,
      };
    }
    case CLAIMS_ROLES.decision: {
      const input = AnalystOutputSchema.safeParse(request.input);
      if (!input.success) return badInput("decision maker", input.error);
      const ctx = { receivedAt: input.data.received_at, responsibility: deps.responsibility };
      const claim = input.data.claim;
      const prompt = decisionMakerMessages(input.data.analysis, claim, deps.contract, ctx);
      return proposeWithRepair(prompt, claim, deps, base, (value) => ({ proposal: proposalForCrew(value) }));
    }
    case CLAIMS_ROLES.officer: {
      const input = ClaimsCrewInputSchema.safeParse(request.input);
      if (!input.success) return badInput("claims officer", input.error);
      const ctx = { receivedAt: input.data.received_at, responsibility: deps.responsibility };
      const claim = input.data.claim;
      const prompt = claimDecisionMessages(claim, deps.contract, ctx);
      // The answer carries the analysis and the proposal; the crew gets the proposal, the audit the analysis.
      return proposeWithRepair(prompt, claim, deps, base, (value) => {
        const parsed = ClaimDecisionOutputSchema.safeParse(value);
        if (!parsed.success) return { proposal: proposalForCrew(value) };
        const { analysis, ...proposal } = parsed.data;
        return { proposal: proposalForCrew(proposal), analysis };
      });
    }
    case CLAIMS_ROLES.fixer: {
      const input = FixerInputSchema.safeParse(request.input);
      if (!input.success) return badInput("fixer", input.error);
      const { failed } = input.data;
      const error = failed.error;
      const ctxAt = (receivedAt: string) => ({ receivedAt, responsibility: deps.responsibility });
      if (failed.role === CLAIMS_ROLES.analyst) {
        const inner = ClaimsCrewInputSchema.safeParse(input.data.input);
        if (!inner.success) return badInput("fixer (for the analyst)", inner.error);
        const { claim, received_at } = inner.data;
        const result = await deps.llm.complete(
          fixerMessages({ failedTask: "analyze_claim", claim, contract: deps.contract, error }, ctxAt(received_at)),
        );
        return fixerAnswered(result, (value) => ({ analysis: String(value), claim, received_at }));
      }
      if (failed.role === CLAIMS_ROLES.decision) {
        const inner = AnalystOutputSchema.safeParse(input.data.input);
        if (!inner.success) return badInput("fixer (for the decision maker)", inner.error);
        const { claim, analysis, received_at } = inner.data;
        const facts = { failedTask: "decide_refund" as const, claim, contract: deps.contract, error, analysis };
        return fixerAnswered(await deps.llm.complete(fixerMessages(facts, ctxAt(received_at))), proposalForCrew);
      }
      if (failed.role === CLAIMS_ROLES.officer) {
        // The compact crew's one step failed: the fixer proposes alone, from the claim and the contract.
        const inner = ClaimsCrewInputSchema.safeParse(input.data.input);
        if (!inner.success) return badInput("fixer (for the claims officer)", inner.error);
        const { claim, received_at } = inner.data;
        const facts = { failedTask: "decide_refund" as const, claim, contract: deps.contract, error };
        return fixerAnswered(await deps.llm.complete(fixerMessages(facts, ctxAt(received_at))), proposalForCrew);
      }
      return fail("UNKNOWN_ROLE", `the fixer cannot stand in for role '${failed.role}'`);
    }
    default:
      return fail("UNKNOWN_ROLE", `the claims crew has no role '${request.role}'`);
  }
}

/**
 * A proposing step (the Decision Maker's, or the compact crew's Claims Officer's): one call, and — when its proposal
 * fails the agent's self-check — one repair round with the errors (docs/kernel.md); what it gives (or the first
 * answer, if the call fails) goes on, and the orchestrator's self-check sends a proposal that still fails to
 * NEEDS_REVIEW. `split` takes the answer apart into the proposal the crew gets and the analysis the audit keeps.
 */
async function proposeWithRepair<T>(
  prompt: LlmStructuredRequest<T>,
  claim: Claim,
  deps: AgentStepDeps,
  base: { crewId: string; correlationId: string },
  split: (value: unknown) => { proposal: unknown; analysis?: string },
): Promise<AgentStepResult> {
  const result = await deps.llm.complete(prompt);
  if (!result.ok)
    return {
      event: { type: "agent.step.failed", ...base, error: { code: result.code, message: result.message } },
      ...(result.usage ? { usage: result.usage } : {}),
      model: result.model,
      attempts: result.attempts,
    };
  const first = split(result.value);
  const withAnalysis = (s: { analysis?: string }) => (s.analysis === undefined ? {} : { analysis: s.analysis });
  // The port validated the answer against the schema; a port that did not (a test double) is checked by the orchestrator.
  const proposal = RefundProposalOutputSchema.safeParse(first.proposal);
  const check = proposal.success ? selfCheck(proposal.data, deps.responsibility, claim) : undefined;
  if (!proposal.success || check === undefined || check.ok)
    return {
      event: { type: "agent.step.completed", ...base, output: first.proposal },
      usage: result.usage,
      model: result.model,
      attempts: result.attempts,
      ...withAnalysis(first),
    };
  const answer = prompt.task === "decide_claim" ? "JSON object (analysis and proposal)" : undefined;
  const repair = await deps.llm.complete({
    ...prompt,
    messages: [
      ...prompt.messages,
      { role: "assistant", content: result.text },
      { role: "user", content: selfCheckRepairMessage(check.failures, claim, answer) },
    ],
  });
  const usage = repair.usage === undefined ? result.usage : sumUsage([result.usage, repair.usage]);
  const kept = repair.ok ? split(repair.value) : first;
  return {
    event: { type: "agent.step.completed", ...base, output: kept.proposal },
    usage,
    model: result.model,
    attempts: result.attempts + repair.attempts,
    calls: 2,
    selfCheckRepair: { output: proposal.data, failures: check.failures },
    ...withAnalysis(kept),
  };
}
