// Kernel verdicts: a stable machine shape (verdict, reason_code, layer, checks) and a separate human formatter.
import * as z from "zod";

/** The three outcomes of the kernel. */
export const VerdictKindSchema = z.enum(["ACCEPT", "ESCALATE", "REJECT"]);

/** ACCEPT, ESCALATE or REJECT. */
export type VerdictKind = z.infer<typeof VerdictKindSchema>;

/** The layer number reported when every check passed (the table row "pass" after layer 11). */
export const PASS_LAYER = 12;

/** One check the kernel ran: its layer, its name, whether it passed, and the code when it failed. */
const VerdictCheckSchema = z
  .object({
    layer: z.number().min(1).max(PASS_LAYER),
    name: z.string().min(1),
    passed: z.boolean(),
    reason_code: z.string().min(1).optional(),
  })
  .strict();

/** A check the kernel ran. */
export type VerdictCheck<Code extends string = string> = {
  layer: number;
  name: string;
  passed: boolean;
  reason_code?: Code;
};

/** A kernel verdict: outcome, stable code, human reason, deciding layer, and the checks run up to the decision. */
export const VerdictSchema = z
  .object({
    verdict: VerdictKindSchema,
    reason_code: z.string().min(1),
    reason: z.string(),
    layer: z.number().min(1).max(PASS_LAYER),
    checks: z.array(VerdictCheckSchema),
  })
  .strict();

/** A kernel verdict; `Code` narrows `reason_code` for a domain (the claims kernel uses its own union). */
export type Verdict<Code extends string = string> = {
  verdict: VerdictKind;
  reason_code: Code;
  reason: string;
  layer: number;
  checks: VerdictCheck<Code>[];
};
