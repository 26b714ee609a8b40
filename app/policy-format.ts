// The refund policy as the deploy ships it: pre-parsed JSON, the same shape on both sides. infra/policy.ts
// writes it from the operator's policy file at `sst deploy`; functions/composition/policy.ts reads and validates it
// again in each function that decides, prompts or proposes. Free of SST, so functions/ can import it as it
// imports app/manifest.ts.
import { createHash } from "node:crypto";
import * as z from "zod";
import { CREW_SHAPES } from "../core/claim/crew-shape.ts";
import type { ClaimsConfig } from "../core/claim/config.ts";
import { ClaimsContractSchema, ResponsibilityContractSchema } from "../core/integrity/contracts.ts";

/** The name of the policy file in a function's package (infra/policy.ts copies it there). */
export const POLICY_FILE_NAME = "claims-policy.json";

/** The version of the JSON shape below; a function refuses any other. */
const POLICY_FORMAT = "claims-crew.policy/v1";

/** The LLM defaults of a policy (the deployed LLM_* variables override provider, base URL and model). */
const LlmDefaultsSchema = z
  .object({
    provider: z.enum(["rules", "openai"]),
    model: z.string().min(1),
    base_url: z.string().url(),
    temperature: z.number().min(0).max(2),
    timeout_ms: z.number().int().positive(),
    max_retries: z.number().int().min(0).max(10),
  })
  .strict();

/** An agent's policy: its responsibility contract and claims bounds. */
const AgentPolicySchema = z
  .object({
    agentId: z.string().min(1),
    version: z.string().min(1),
    responsibility: ResponsibilityContractSchema,
    contract: ClaimsContractSchema,
    /**
     * `claims_bounds.second_approval_above_eur`: an APPROVE above it waits for a second reviewer (four eyes);
     * `review_due_days` / `review_due_hours`: how long a review may wait (`dueMs`).
     */
    review: z
      .object({
        secondApprovalAboveEur: z.number().positive().optional(),
        dueMs: z.number().int().positive().optional(),
      })
      .strict()
      .optional(),
    /** `crew_shape`: which crew decides a claim (docs/llm.md, "Crew shape"); absent: compact. */
    crewShape: z.enum(CREW_SHAPES).optional(),
  })
  .strict();

/** The deployed policy: what the functions read instead of the YAML file it came from. */
export const ClaimsPolicySchema = z
  .object({
    format: z.literal(POLICY_FORMAT),
    /** The file the operator deployed (as given to CLAIMS_POLICY_FILE), and the SHA-256 of its text. */
    source: z.string().min(1),
    source_sha256: z.string().regex(/^[0-9a-f]{64}$/),
    /** Whether this is the bundled demo policy (scenarios/config.yaml, deployed only to the demo stage). */
    demo: z.boolean(),
    /** `simulation.run_id` of the file: the prefix of the scheduled batch's simulation ids. */
    run_id: z.string().min(1),
    contract_format: z.enum(["claims-crew", "dir-seed-era", "roa.dir/v1"]),
    llm: LlmDefaultsSchema,
    agent: AgentPolicySchema.extend({
      /** The config's `shadow_policy`: decided beside the agent's on every decision, never acted on. */
      shadow: AgentPolicySchema.optional(),
    }).strict(),
    /** `retention.customer_text_days`: the sweep erases the personal data of claims received longer ago (docs/customer-data.md#retention). */
    retention: z
      .object({ customerTextDays: z.number().int().min(1).max(36_500) })
      .strict()
      .optional(),
  })
  .strict();

/** A deployed policy. */
export type ClaimsPolicy = z.infer<typeof ClaimsPolicySchema>;

/** What composition needs of a policy (a parsed config file has it too, so local runs pass their config). */
export type PolicySettings = Pick<ClaimsConfig, "llm" | "agent">;

/** The deployed policy of a parsed config file (`text` is the file's text, for its hash). */
export function policyFromConfig(
  config: ClaimsConfig,
  text: string,
  options: { source: string; demo: boolean },
): ClaimsPolicy {
  return ClaimsPolicySchema.parse({
    format: POLICY_FORMAT,
    source: options.source,
    source_sha256: createHash("sha256").update(text, "utf8").digest("hex"),
    demo: options.demo,
    run_id: config.simulationId,
    contract_format: config.reading.format,
    llm: config.llm,
    agent: config.agent,
    ...(config.retention ? { retention: config.retention } : {}),
  });
}
