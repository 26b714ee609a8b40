// The refund policy a deployed function runs with — the agent, its responsibility contract, the claims
// bounds (categories, limit, return window) and the LLM defaults — as the deploy ships it: PRE-PARSED JSON.
// `sst deploy` reads the operator's policy file (CLAIMS_POLICY_FILE, the config format of SPEC §6),
// validates it and writes this JSON (infra/policy.ts); every function that decides, prompts or proposes
// validates it again when it first needs it (cold start). No YAML parser is needed at run time: only the
// batch, which reads a scenario file, bundles one.
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import * as z from "zod";
import type { ClaimsConfig } from "../../core/claims/config.ts";
import { ClaimsContractSchema, ResponsibilityContractSchema } from "../../core/integrity/contracts.ts";
import { ConfigLoadError } from "./errors.ts";

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
    agent: z
      .object({
        agentId: z.string().min(1),
        version: z.string().min(1),
        responsibility: ResponsibilityContractSchema,
        contract: ClaimsContractSchema,
      })
      .strict(),
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
  });
}

type Env = Readonly<Record<string, string | undefined>>;

/** The policy file of a function: CLAIMS_POLICY_PATH (relative paths under the function's root), else claims-policy.json under LAMBDA_TASK_ROOT. */
export function policyPathFrom(env: Env): string {
  const root = env.LAMBDA_TASK_ROOT ?? process.cwd();
  const path = env.CLAIMS_POLICY_PATH ?? POLICY_FILE_NAME;
  return isAbsolute(path) ? path : join(root, path);
}

/** Reads and validates a deployed policy; ConfigLoadError names the file and every problem. */
export function loadPolicyFile(path: string): ClaimsPolicy {
  if (!existsSync(path)) {
    throw new ConfigLoadError(
      `policy file not found: ${path} (infra/policy.ts ships ${POLICY_FILE_NAME} with every function that decides; locally set CLAIMS_POLICY_PATH)`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, "utf8"));
  } catch (cause) {
    throw new ConfigLoadError(`policy file ${path} is not JSON: ${(cause as Error).message}`, { cause });
  }
  const parsed = ClaimsPolicySchema.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "(policy)"}: ${i.message}`).join("; ");
    throw new ConfigLoadError(`policy file ${path} is invalid: ${issues}`);
  }
  return parsed.data;
}
