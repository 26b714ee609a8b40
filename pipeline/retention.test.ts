// The retention sweep (pipeline/retention.ts) over in-memory claims and a recording destroy: only claims past the
// retention period are erased, each once; a run cut short leaves the watermark and the next run finishes the job.
import { describe, expect, it } from "vitest";
import type { ClaimRecord } from "../core/kernel/claim-record.ts";
import { createInMemoryAuditLog, createInMemoryClaimRepository } from "./in-memory.ts";
import { PERSONAL_DATA_ERASURES_DFID, inMemoryRetentionWatermark, sweepRetention } from "./retention.ts";
import type { DestroyOutcome } from "./personal-data.ts";

const DAY = 86_400_000;
const NOW = Date.parse("2027-06-01T12:00:00Z");

function claimAt(claimId: string, receivedMs: number, status: ClaimRecord["status"] = "DECIDED"): ClaimRecord {
  const at = new Date(receivedMs).toISOString();
  return {
    claim_id: claimId,
    dfid: `dfid_${claimId}`,
    root_dfid: `dfid_${claimId}`,
    status,
    input: { claim: { order_id: "ord_001", amount_eur: 10, category: "electronics", reason: "Broken" } },
    received_at: at,
    updated_at: at,
  } as ClaimRecord;
}

/** A destroy that remembers the keys it destroyed: a second destroy of one finds it erased. */
function recordingDestroy() {
  const destroyed: string[] = [];
  return {
    destroyed,
    destroy: async (claimId: string): Promise<DestroyOutcome> => {
      if (destroyed.includes(claimId)) return "already_erased";
      destroyed.push(claimId);
      return "destroyed";
    },
  };
}

async function setUp(claims: ClaimRecord[]) {
  const deps = { claims: createInMemoryClaimRepository(), audit: createInMemoryAuditLog() };
  for (const c of claims) await deps.claims.createClaim(c);
  const keys = recordingDestroy();
  const watermark = inMemoryRetentionWatermark();
  return { deps, keys, watermark, ports: { claims: deps.claims, audit: deps.audit, destroy: keys.destroy, watermark } };
}

describe("the retention sweep", () => {
  it("erases the claims received before now − days (in flight too), records one event, and erases nothing twice", async () => {
    const { deps, keys, watermark, ports } = await setUp([
      claimAt("clm_old", NOW - 400 * DAY),
      claimAt("clm_running", NOW - 366 * DAY, "RUNNING"),
      claimAt("clm_bound", NOW - 365 * DAY + 3_600_000),
      claimAt("clm_new", NOW - 10 * DAY),
    ]);
    const first = await sweepRetention(ports, { days: 365, now: NOW, pageSize: 1 });
    expect(first).toEqual({
      examined: 2,
      erased: ["clm_running", "clm_old"],
      receivedBefore: new Date(NOW - 365 * DAY).toISOString(),
    });
    expect(keys.destroyed.sort()).toEqual(["clm_old", "clm_running"]);
    expect(await watermark.erasedBefore()).toBe(first.receivedBefore);
    const events = await deps.audit.byDfid(PERSONAL_DATA_ERASURES_DFID);
    expect(events.map((e) => [e.event_type, e.details])).toEqual([
      [
        "PERSONAL_DATA_ERASED",
        expect.objectContaining({
          claim_ids: ["clm_running", "clm_old"],
          cause: "retention",
          retention_days: 365,
          erased_at: new Date(NOW).toISOString(),
        }),
      ],
    ]);

    // Five minutes later nothing new is past the bound (no event); a day later the claim an hour inside it is.
    const again = await sweepRetention(ports, { days: 365, now: NOW + 5 * 60_000 });
    expect(again).toMatchObject({ examined: 0, erased: [] });
    expect(await deps.audit.byDfid(PERSONAL_DATA_ERASURES_DFID)).toHaveLength(1);
    const dayLater = await sweepRetention(ports, { days: 365, now: NOW + DAY });
    expect(dayLater).toMatchObject({ examined: 1, erased: ["clm_bound"] });
    expect(keys.destroyed).not.toContain("clm_new");
    expect(await deps.audit.byDfid(PERSONAL_DATA_ERASURES_DFID)).toHaveLength(2);
  });

  it("a run out of time keeps the watermark; the next run lists those claims again and erases only the rest", async () => {
    const { deps, keys, watermark, ports } = await setUp(
      [1, 2, 3, 4, 5].map((i) => claimAt(`clm_${i}`, NOW - (400 + i) * DAY)),
    );
    let allowed = 2;
    const cut = await sweepRetention(ports, { days: 365, now: NOW, pageSize: 2, hasTime: () => allowed-- > 0 });
    expect(cut).toMatchObject({ examined: 2, erased: ["clm_1", "clm_2"], stoppedEarly: true });
    expect(await watermark.erasedBefore()).toBeUndefined();

    const resumed = await sweepRetention(ports, { days: 365, now: NOW + 5 * 60_000, pageSize: 2 });
    expect(resumed).toMatchObject({ examined: 5, erased: ["clm_3", "clm_4", "clm_5"] });
    expect(resumed.stoppedEarly).toBeUndefined();
    expect(keys.destroyed).toEqual(["clm_1", "clm_2", "clm_3", "clm_4", "clm_5"]);
    expect(await watermark.erasedBefore()).toBe(resumed.receivedBefore);
    const events = await deps.audit.byDfid(PERSONAL_DATA_ERASURES_DFID);
    expect(events.map((e) => (e.details as { claim_ids: string[] }).claim_ids)).toEqual([
      ["clm_1", "clm_2"],
      ["clm_3", "clm_4", "clm_5"],
    ]);
  });
});
