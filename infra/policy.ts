// The refund policy as a deploy-time input (the claims contract and the agent's responsibility contract):
// `sst deploy` reads the operator's policy file (CLAIMS_POLICY_FILE; the demo's scenarios/config.yaml on the
// `demo` stage only), validates it as `claims config check` does — a mistake stops the deploy with the file,
// line and field — and ships it PRE-PARSED as JSON to every function that decides, prompts or proposes
// (app/manifest.ts POLICY_FUNCTIONS), which validate it again on their first invocation. The same holds for the
// scheduled batch's claims file. The file's orders are not deployed: orders are loaded with `claims load-orders`.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentHandshake, parseConfig } from "../core/claim/config.ts";
import { parseScenarios } from "../core/history/scenarios.ts";
import { POLICY_FILE_NAME, policyFromConfig } from "../app/policy-format.ts";
import type { ClaimsPolicy } from "../app/policy-format.ts";
import { InfraFileError } from "./errors.ts";
import { LLM_CALL_BUDGET_SECONDS, LLM_FUNCTION_TIMEOUT_SECONDS } from "../app/manifest.ts";
import { settings } from "./settings.ts";

/** Where the deploy writes the pre-parsed policy of a stage (under .sst/, which git ignores). */
export const POLICY_OUT_DIR = join(".sst", "claims-policy");

function readText(variable: string, file: string): string {
  if (!existsSync(file))
    throw new InfraFileError(
      variable,
      file,
      "the file does not exist (paths are relative to the directory of sst.config.ts)",
    );
  return readFileSync(file, "utf8");
}

/** Reads, validates and converts the policy file; InfraFileError carries every problem at its line. */
function deployedPolicy(): ClaimsPolicy {
  const { file, demo } = settings.policy;
  const text = readText("CLAIMS_POLICY_FILE", file);
  let config;
  try {
    config = parseConfig(text, file, Date.now());
  } catch (error) {
    throw new InfraFileError("CLAIMS_POLICY_FILE", file, (error as Error).message);
  }
  const handshake = agentHandshake(config);
  if (!handshake.ok)
    throw new InfraFileError("CLAIMS_POLICY_FILE", file, `the agent registry refuses its agent: ${handshake.message}`);
  const budgetMs = LLM_CALL_BUDGET_SECONDS * 1000;
  if (config.llm.timeout_ms > budgetMs)
    throw new InfraFileError(
      "CLAIMS_POLICY_FILE",
      file,
      `llm_defaults.timeout_ms is ${config.llm.timeout_ms}, but one LLM call may take at most ${budgetMs} ms: the LLM functions time out after ${LLM_FUNCTION_TIMEOUT_SECONDS} s (app/manifest.ts LLM_CALL_BUDGET_SECONDS); lower timeout_ms to ${budgetMs} or less`,
    );
  return policyFromConfig(config, text, { source: file, demo });
}

/** The policy this deploy ships. */
export const policy = deployedPolicy();

const policyPath = join(POLICY_OUT_DIR, `${$app.stage}.json`);
mkdirSync(POLICY_OUT_DIR, { recursive: true });
writeFileSync(policyPath, `${JSON.stringify(policy, null, 2)}\n`);

/** The copyFiles entry that puts the policy in a function's package, where functions/composition/policy.ts reads it. */
export const policyCopyFile = { from: policyPath, to: POLICY_FILE_NAME } as const;

/** The batch's claims file, validated like `claims config check --kind scenarios`; shipped as claims-batch.yaml. */
function batchFile(): { from: string; to: string } {
  const { file } = settings.batch;
  try {
    parseScenarios(readText("CLAIMS_BATCH_FILE", file), file);
  } catch (error) {
    if (error instanceof InfraFileError) throw error;
    throw new InfraFileError("CLAIMS_BATCH_FILE", file, (error as Error).message);
  }
  return { from: file, to: BATCH_FILE_NAME };
}

/** The name of the batch's claims file in its package (its CLAIMS_SCENARIOS_PATH). */
export const BATCH_FILE_NAME = "claims-batch.yaml";

/** The copyFiles entry of the batch's claims file. */
export const batchCopyFile = batchFile();
