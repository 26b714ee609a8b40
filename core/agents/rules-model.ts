// The deterministic rules model: an LlmPort with no network. It reads the structured facts
// carried beside each prompt, never the context store and never expected verdicts.
import type { Claim } from "../claim/claim.ts";
import type { ClaimsContract, ResponsibilityContract } from "../integrity/contracts.ts";
import type { RefundProposalOutput } from "../claim/proposal-output.ts";
import { extractClaimFromText } from "../extraction/extraction.ts";
import type { LlmFailureCode } from "../llm/errors.ts";
import { isRetryableLlmFailure } from "../llm/errors.ts";
import type { LlmPort, LlmRequest, LlmResult } from "../llm/port.ts";
import type { LlmFacts } from "./llm-facts.ts";
import {
  assessClaim,
  claimCurrency,
  confidenceFrom,
  formatAssessment,
  formatCompactAssessment,
  type ClaimAssessment,
} from "./rules-assessment.ts";
import { COMPACT_ANALYSIS_MAX_CHARS } from "../claim/proposal-output.ts";
import { estimateUsage } from "../llm/usage.ts";

/** The model name the rules model reports. */
const RULES_MODEL_NAME = "rules-v1";

/** What the rules model knows: the contract boundaries and the agent's responsibility, nothing else. */
interface RulesModelOptions {
  readonly contract: ClaimsContract;
  readonly responsibility?: ResponsibilityContract | undefined;
}

type Produced = { text: string; structured?: unknown; warnings: string[] };

/**
 * The rules model proposes per line (docs/kernel.md#orders-with-lines) exactly what a claim that names its lines asks
 * of each — when each line states its amount (a claim intake completed from its order does) and they add up to the
 * claim's; otherwise for the claim as a whole, as before lines.
 */
function linesAsClaimed(claim: Claim): RefundProposalOutput["lines"] {
  if (claim.lines === undefined || claim.lines.some((l) => l.amount === undefined)) return undefined;
  const lines = claim.lines.map((l) => ({
    line_id: l.line_id,
    quantity: l.quantity ?? null,
    amount: Number(l.amount),
  }));
  const total = lines.reduce((n, l) => n + Math.round(l.amount * 1000), 0);
  return total === Math.round(claim.amount_eur * 1000) ? lines : undefined;
}

/** Creates the deterministic rules model: extraction by patterns, analysis and proposal computed from the claim and contract. */
export function createRulesModel(options: RulesModelOptions): LlmPort {
  const { contract, responsibility } = options;

  function produce(facts: LlmFacts): Produced {
    switch (facts.task) {
      case "extract_claim": {
        const r = extractClaimFromText(facts.claim_text, facts.received_at);
        const value = r.ok ? r.claim : r.partial;
        const warnings = r.ok ? r.warnings : [`${r.code}: ${r.message}`, ...r.warnings];
        return { text: JSON.stringify(value), structured: value, warnings };
      }
      case "analyze_claim": {
        const assessment = assessClaim(facts.claim, contract, { responsibility, receivedAt: facts.received_at });
        return { text: formatAssessment(facts.claim, assessment), warnings: [] };
      }
      case "decide_refund": {
        const assessment = assessClaim(facts.claim, contract, { responsibility, receivedAt: facts.received_at });
        const proposal = propose(facts.claim, assessment, { analysisMissing: facts.analysis.trim() === "" });
        return { text: JSON.stringify(proposal), structured: proposal, warnings: [] };
      }
      case "decide_claim": {
        // The compact crew's one step: the analysis the Decision Maker would read, and the same proposal.
        const assessment = assessClaim(facts.claim, contract, { responsibility, receivedAt: facts.received_at });
        const analysis = formatCompactAssessment(assessment, COMPACT_ANALYSIS_MAX_CHARS);
        const answer = { analysis, ...propose(facts.claim, assessment, { analysisMissing: false }) };
        return { text: JSON.stringify(answer), structured: answer, warnings: [] };
      }
      case "fix_step": {
        const assessment = assessClaim(facts.claim, contract, { responsibility, receivedAt: facts.received_at });
        const failure = facts.error.code ?? "error";
        if (facts.failed_task === "analyze_claim") {
          return {
            text: `Fallback assessment (the analyst step failed: ${failure}).\n${formatAssessment(facts.claim, assessment)}`,
            warnings: [],
          };
        }
        const proposal = propose(facts.claim, assessment, {
          analysisMissing: facts.analysis === undefined || facts.analysis.trim() === "",
          fallbackAfter: failure,
        });
        return { text: JSON.stringify(proposal), structured: proposal, warnings: [] };
      }
    }
  }

  function propose(
    claim: Claim,
    assessment: ClaimAssessment,
    opts: { analysisMissing: boolean; fallbackAfter?: string },
  ): RefundProposalOutput {
    const allowedKinds = responsibility?.allowed_policy_types ?? ["REFUND", "REPLACE", "ESCALATE"];
    const wantsHuman = assessment.flags.some((f) => f.weight === "human");
    let confidence = confidenceFrom(assessment, { analysisMissing: opts.analysisMissing });
    if (opts.fallbackAfter !== undefined) confidence = Math.max(0, Math.round((confidence - 0.1) * 100) / 100);
    let action: RefundProposalOutput["action"] = wantsHuman ? "ESCALATE" : "REFUND";
    if (!allowedKinds.includes(action)) {
      // The preferred kind is outside this agent's authority: propose what it may, and say it is unsure.
      action = allowedKinds.includes("REFUND") ? "REFUND" : (allowedKinds[0] ?? "REFUND");
      confidence = Math.max(0, Math.round((confidence - 0.2) * 100) / 100);
    }
    const concerns = assessment.flags.filter((f) => f.weight !== "unknown").map((f) => f.detail);
    const head =
      action === "ESCALATE"
        ? `Escalate the claim on order ${claim.order_id} (${claim.amount_eur} ${claimCurrency(claim)}) to a human`
        : `Refund ${claim.amount_eur} ${claimCurrency(claim)} for order ${claim.order_id} (${claim.category})`;
    const tail =
      concerns.length === 0 ? "the claim is within the contract's boundaries as stated" : concerns.join("; ");
    const prefix =
      opts.fallbackAfter === undefined
        ? ""
        : `Fallback proposal after the decision step failed (${opts.fallbackAfter}). `;
    const reason = `${prefix}${head}: ${tail}.`;
    const lines = linesAsClaimed(claim);
    return {
      action,
      order_id: claim.order_id,
      // Never more than the structured claim says, whatever the customer's text asks for.
      amount_eur: claim.amount_eur,
      category: claim.category,
      reason: reason.length > 500 ? `${reason.slice(0, 497)}...` : reason,
      confidence,
      ...(lines === undefined ? {} : { lines }),
    };
  }

  function fail<T>(code: LlmFailureCode, message: string): LlmResult<T> {
    return { ok: false, code, message, attempts: 1, model: RULES_MODEL_NAME, retryable: isRetryableLlmFailure(code) };
  }

  return {
    provider: "rules",
    model: RULES_MODEL_NAME,
    async complete<T = string>(request: LlmRequest<T>): Promise<LlmResult<T>> {
      if (request.signal?.aborted === true) return fail("LLM_ABORTED", "the call was cancelled before it started");
      // Facts come from core/agents/prompts.ts, built with the prompt as `LlmFacts`.
      const facts = request.facts as LlmFacts | undefined;
      if (facts === undefined) {
        return fail(
          "LLM_BAD_REQUEST",
          `the rules model needs the request's structured facts for '${request.task}' (build requests with core/agents/prompts.ts)`,
        );
      }
      if (facts.task !== request.task) {
        return fail("LLM_BAD_REQUEST", `request task '${request.task}' does not match its facts' task '${facts.task}'`);
      }
      const produced = produce(facts);
      const usage = estimateUsage(request.system, request.messages, produced.text);
      if (request.schema === undefined) {
        return {
          ok: true,
          value: produced.text as T,
          text: produced.text,
          usage,
          attempts: 1,
          model: RULES_MODEL_NAME,
          warnings: produced.warnings,
        };
      }
      const parsed = request.schema.zod.safeParse(produced.structured ?? produced.text);
      if (!parsed.success) {
        return {
          ...fail<T>(
            "LLM_SCHEMA_VIOLATION",
            `rules output for '${request.task}' does not match '${request.schema.name}': ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
          ),
          usage,
          text: produced.text,
        };
      }
      return {
        ok: true,
        value: parsed.data,
        text: produced.text,
        usage,
        attempts: 1,
        model: RULES_MODEL_NAME,
        warnings: produced.warnings,
      };
    },
  };
}
