// How the failed refunds' pending reviews are found on DynamoDB: one Query of their own gsi1 partition, which
// reads those settlements and no other — however many refunds were settled — and never a Scan.
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import type { SettlementRecord } from "../../core/kernel/settlement.ts";
import { createDynamoSettlementRepository } from "./dynamo-settlements.ts";
import { useEmulatedAws } from "./emulators.test-kit.ts";
import { gsi1 } from "./table.ts";

const aws = useEmulatedAws();

type Sent = { name: string; input: Record<string, unknown>; items: number; scanned: unknown };

/** The document client, recording every command it sends and how many items each answered and read. */
function recording(doc: DynamoDBDocumentClient): { client: DynamoDBDocumentClient; sent: Sent[] } {
  const sent: Sent[] = [];
  const client = new Proxy(doc, {
    get(target, prop, receiver) {
      if (prop !== "send") return Reflect.get(target, prop, receiver);
      return async (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
        const out = (await target.send(command as never)) as { Items?: unknown[]; ScannedCount?: number };
        sent.push({
          name: command.constructor.name,
          input: command.input,
          items: out.Items?.length ?? 0,
          scanned: out.ScannedCount,
        });
        return out;
      };
    },
  });
  return { client, sent };
}

function settlement(i: number, failed: boolean): SettlementRecord {
  const at = new Date(Date.UTC(2026, 10, 27, 10, 0, i)).toISOString();
  return {
    claim_id: `clm_${String(i).padStart(3, "0")}`,
    dfid: `dfid_${i}`,
    order_id: `ord_${i}`,
    amount_eur: 20,
    verdict_id: `vrd_${i}`,
    provider: "stripe",
    execution_id: `exe_${i}`,
    status: failed ? "FAILED" : "SETTLED",
    ...(failed ? { failure_reason: "insufficient_funds" } : { provider_ref: `re_${i}` }),
    requested_at: at,
    updated_at: at,
    attempts: [],
    ...(failed
      ? {
          review: {
            review_id: `rev_${i}`,
            origin: "REFUND_FAILED" as const,
            execution_id: `exe_${i}`,
            status: "PENDING" as const,
            reason_code: "REFUND_FAILED" as const,
            reason: "refused",
            requested_at: at,
          },
        }
      : {}),
    version: 1,
  };
}

describe("the pending refund reviews on DynamoDB", () => {
  it("are one Query of their own partition that reads only them, beside 60 settled refunds", async () => {
    const tableName = await aws.newTable();
    const { client, sent } = recording(aws.doc);
    const repo = createDynamoSettlementRepository({ client, tableName, clock: { now: () => 0 }, pageSize: undefined });
    for (let i = 0; i < 63; i++) await repo.create(settlement(i, i % 30 === 7));
    sent.length = 0;

    const page = await repo.listPendingReviews({ limit: 50 });

    expect(page.items.map((s) => s.claim_id)).toEqual(["clm_007", "clm_037"]);
    expect(sent).toEqual([
      {
        name: "QueryCommand",
        input: expect.objectContaining({ ExpressionAttributeValues: { ":p": gsi1.refundReviewsPending } }),
        items: 2,
        scanned: 2,
      },
    ]);
    expect(await repo.list()).toHaveLength(63);
  });
});
