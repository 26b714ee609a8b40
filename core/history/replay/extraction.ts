// Replay of a free-text claim's extraction: the claim read again from the recorded model answer, or the
// recorded failure failing again (and the claim's review).
import { ERASED } from "../../privacy/sealing.ts";
import type { Claim } from "../../claim/claim.ts";
import { claimFromExtraction, extractionFailureReasonCode } from "../../extraction/extraction.ts";
import { enter, label, scope, unused } from "./context.ts";
import type { Ctx, Flow } from "./context.ts";
import { review } from "./review.ts";
import { patternsRead } from "./memo.ts";

/**
 * The text read again by patterns alone, as the recorded answer was read: one recorded before extraction read items
 * has no `items`, so it is compared without them (docs/llm.md#items-and-lines).
 */
function readAgainByPatterns(ctx: Ctx, text: string, receivedAt: string, recorded: unknown): object | undefined {
  const again = patternsRead(text, receivedAt, ctx.opts.memo);
  if (again === undefined || (typeof recorded === "object" && recorded !== null && "items" in recorded)) return again;
  const { items: _items, ...before } = again;
  return before;
}

/** The extraction from the recorded model answer; returns the claim, or nothing when the flow ends or stops here. */
export function replayExtraction(ctx: Ctx, text: string, flow: Flow): Claim | undefined {
  const s = scope(ctx, "extraction");
  const ok = unused(ctx, "CLAIM_EXTRACTED").length > 0;
  const failed = unused(ctx, "CLAIM_EXTRACTION_FAILED").length > 0;
  if (ok && failed) {
    s.different("both CLAIM_EXTRACTED and CLAIM_EXTRACTION_FAILED are recorded");
    return undefined;
  }
  if (!ok && !failed) {
    s.incomplete("CLAIM_EXTRACTED or CLAIM_EXTRACTION_FAILED is missing: the claim text was never read");
    return undefined;
  }
  if (ok) {
    const f = enter(ctx, "extracted", "extraction");
    if (!f) return undefined;
    const { d, raw } = f.CLAIM_EXTRACTED;
    if (text === ERASED) {
      // The text is erased (claims erase): the extracted order id and amount can no longer be held to it.
      s.done(
        "the claim text is erased: the claim is taken as recorded, its order id and amount no longer held to the text",
      );
      return d.claim;
    }
    const again = claimFromExtraction(d.extracted, { text, now: flow.receivedAt });
    if (!again.ok) {
      s.different(`the recorded model answer no longer gives a claim (${again.code}: ${again.message})`);
      return undefined;
    }
    s.compare("the claim read from the recorded model answer", raw.claim, again.claim);
    // A claim the patterns read alone (no model call) is read by them again, and must still need no model.
    if (d.source === "patterns")
      s.compare(
        "the claim text read again by patterns alone",
        raw.extracted,
        readAgainByPatterns(ctx, text, flow.receivedAt, raw.extracted) ?? "(the patterns no longer read it alone)",
      );
    s.expect(
      again.warnings.every((w) => d.warnings.includes(w)),
      `${label(f.CLAIM_EXTRACTED.r)} lacks warnings the extraction gives: ${again.warnings.join("; ")}`,
    );
    s.done("claim re-read from the recorded model answer");
    return again.claim;
  }
  const f = enter(ctx, "extraction_failed", "extraction");
  if (!f) return undefined;
  const { d } = f.CLAIM_EXTRACTION_FAILED;
  if (d.extracted && text === ERASED)
    s.done(`the claim text is erased: the recorded failure (${d.reason_code}) is taken as recorded`);
  else if (d.extracted) {
    const again = claimFromExtraction(d.extracted, { text, now: flow.receivedAt });
    if (again.ok)
      s.different("recorded as failed, but the recorded model answer gives a claim", d.reason_code, again.claim);
    else {
      s.compare("the extraction failure code", d.reason_code, again.code);
      s.expect(d.reason.includes(again.message), `the recorded reason does not state the failure: ${again.message}`);
    }
    s.done(`the recorded model answer fails again: ${d.reason_code}`);
  } else {
    s.expect(
      d.code !== undefined && d.reason_code === extractionFailureReasonCode(d.code),
      `${label(f.CLAIM_EXTRACTION_FAILED.r)} has neither the model's answer nor its error code, or names another reason than the code gives`,
    );
    s.done(`the model call failed (${d.code ?? "?"}): nothing to recompute`);
  }
  review(ctx, flow, d, f.CLAIM_NEEDS_REVIEW);
  return undefined;
}
