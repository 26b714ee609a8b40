// The refund policy a deployed function runs with — the agent, its responsibility contract, the claims
// bounds (categories, limit, return window) and the LLM defaults — as the deploy ships it: PRE-PARSED JSON.
// `sst deploy` reads the operator's policy file (CLAIMS_POLICY_FILE, the claims config format),
// validates it and writes this JSON (infra/policy.ts; its shape: app/policy-format.ts); every function that decides, prompts or proposes
// validates it again when it first needs it (cold start). No YAML parser is needed at run time: only the
// batch, which reads a scenario file, bundles one.
import { existsSync, readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { ClaimsPolicySchema, POLICY_FILE_NAME } from "../../app/policy-format.ts";
import type { ClaimsPolicy } from "../../app/policy-format.ts";
import { ConfigLoadError } from "./errors.ts";

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
