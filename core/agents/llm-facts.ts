// The structured facts carried beside each prompt of the claims crew: built by prompts.ts with the prompt,
// read by the rules model, so a deterministic model needs no prompt parsing.
import type { FixableTask } from "../llm/port.ts";
import type { Claim } from "../claim/claim.ts";

/** The facts of a prompt, by task; built by the same function as the prompt, so both say the same. */
export type LlmFacts =
  | { readonly task: "extract_claim"; readonly claim_text: string; readonly received_at?: string | undefined }
  | { readonly task: "analyze_claim"; readonly claim: Claim; readonly received_at?: string | undefined }
  | {
      readonly task: "decide_refund";
      readonly claim: Claim;
      readonly analysis: string;
      readonly received_at?: string | undefined;
    }
  | { readonly task: "decide_claim"; readonly claim: Claim; readonly received_at?: string | undefined }
  | {
      readonly task: "fix_step";
      readonly failed_task: FixableTask;
      readonly claim: Claim;
      readonly analysis?: string | undefined;
      readonly error: { readonly code?: string | undefined; readonly message: string };
      readonly received_at?: string | undefined;
    };
