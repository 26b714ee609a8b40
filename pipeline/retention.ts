// The retention policy on a stage (`retention.customer_text_days`, docs/customer-data.md#retention): the deployed
// sweep erases, as `claims erase` does, the personal data of every claim received more than that many days ago. It
// lists only the claims received since the watermark (how far the last complete run erased), destroys each claim's
// data key, records one PERSONAL_DATA_ERASED event for what it erased, and moves the watermark to its cutoff once
// every page is done. A run cut short leaves the watermark where it was: the next one lists those claims again, and
// destroying a destroyed key changes nothing. A claim still in flight is erased too: it goes on, its words `[erased]`.
import { auditEvent } from "../core/history/audit-events.ts";
import type { DestroyOutcome } from "./personal-data.ts";
import type { AuditLog, ClaimRepository, RetentionWatermark } from "./ports.ts";

/** The flow a stage's (and `claims serve`'s) erasures are recorded under: an event of the stack, not of a claim. */
export const PERSONAL_DATA_ERASURES_DFID = "dfid_personal_data_erasures";

/** What the retention sweep runs with: the claims' listing, the audit, the vault's destroy and the watermark. */
export interface RetentionDeps {
  readonly claims: Pick<ClaimRepository, "listClaims">;
  readonly audit: Pick<AuditLog, "append">;
  /** The vault's destroy (the one `claims erase` uses). */
  readonly destroy: (claimId: string) => Promise<DestroyOutcome>;
  readonly watermark: RetentionWatermark;
}

/** Settings of one retention run. */
export interface RetentionOptions {
  /** `retention.customer_text_days`. */
  readonly days: number;
  /** The run's instant (epoch ms). */
  readonly now: number;
  /** Asked before each claim: false stops the run, the watermark unmoved. */
  readonly hasTime?: () => boolean;
  /** Claims read per page (default 100). */
  readonly pageSize?: number;
}

/** What a retention run did (claim ids only: never a customer's words). */
export interface RetentionResult {
  /** Claims received before `receivedBefore` and since the watermark, reached by this run. */
  readonly examined: number;
  /** The claims whose key this run destroyed (or that had none: nothing of theirs could be read anyway). */
  readonly erased: string[];
  /** The cutoff: claims received before it are past the retention period. */
  readonly receivedBefore: string;
  /** Set when the run ran out of time: the watermark stays, the next run lists the rest again. */
  readonly stoppedEarly?: true;
}

/** Erases the personal data of every claim received more than `days` days before `now` and not erased by a past run. */
export async function sweepRetention(deps: RetentionDeps, opts: RetentionOptions): Promise<RetentionResult> {
  const receivedBefore = new Date(opts.now - opts.days * 86_400_000).toISOString();
  const since = await deps.watermark.erasedBefore();
  const hasTime = opts.hasTime ?? (() => true);
  const erased: string[] = [];
  let examined = 0;
  let stoppedEarly = false;
  let cursor: string | undefined;
  pages: do {
    const page = await deps.claims.listClaims({
      limit: opts.pageSize ?? 100,
      before: receivedBefore,
      ...(since !== undefined ? { since } : {}),
      ...(cursor !== undefined ? { cursor } : {}),
    });
    for (const claim of page.items) {
      if (!hasTime()) {
        stoppedEarly = true;
        break pages;
      }
      examined++;
      if ((await deps.destroy(claim.claim_id)) !== "already_erased") erased.push(claim.claim_id);
    }
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  const at = new Date(opts.now).toISOString();
  if (erased.length > 0)
    await deps.audit.append(
      auditEvent({
        dfid: PERSONAL_DATA_ERASURES_DFID,
        type: "PERSONAL_DATA_ERASED",
        state: "ERASED",
        at,
        details: { claim_ids: erased, erased_at: at, cause: "retention", retention_days: opts.days },
      }),
    );
  if (stoppedEarly) return { examined, erased, receivedBefore, stoppedEarly: true };
  if (since === undefined || since < receivedBefore) await deps.watermark.advance(receivedBefore);
  return { examined, erased, receivedBefore };
}

/** A watermark kept in memory (the in-memory stacks and tests). */
export function inMemoryRetentionWatermark(): RetentionWatermark {
  let at: string | undefined;
  return {
    erasedBefore: async () => at,
    advance: async (instant) => {
      if (at === undefined || at < instant) at = instant;
    },
  };
}
