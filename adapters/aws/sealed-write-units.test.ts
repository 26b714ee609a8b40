// The claim and the verdict of the bench's structured claim stored sealed, as every deployed function stores them
// (issue 37): the claim's reason sealed once (its `claim` read from its input), tokens that leave out the claim the
// item names, the verdict's body compressed against its record — each claim write one write unit again, the verdict's
// put too. What the release before stored (pd1 tokens, a body compressed without the record) still reads.
import { createCipheriv } from "node:crypto";
import { readFileSync } from "node:fs";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import type { StoredVerdict } from "../../pipeline/ports.ts";
import { localClientConfig } from "../../local/emulators.ts";
import { envelopeVault } from "../vault/envelope.ts";
import type { DataKeyStore } from "../vault/envelope.ts";
import { sealTableClient } from "../vault/sealed-table.ts";
import { measureCapacity } from "./capacity.test-kit.ts";
import { itemBytes, packText, unpackText, writeUnits } from "./compact.ts";
import { createDynamoPorts } from "./dynamo-ports.ts";
import { verdictItem } from "./dynamo-verdicts.ts";
import { useEmulatedAws } from "./emulators.test-kit.ts";
import { keys } from "./table.ts";

const aws = useEmulatedAws();

/** The bench's structured claim, settled, as the local stack stored it at a313a77 (fixtures/verdict-v1-item.json). */
const SETTLED = (
  JSON.parse(readFileSync(new URL("./fixtures/verdict-v1-item.json", import.meta.url), "utf8")) as {
    read: StoredVerdict;
  }
).read;
const PUT: StoredVerdict = {
  ...SETTLED,
  published: false,
  execution: "PENDING",
  events: SETTLED.events.filter((e) => e.detailType === "ClaimVerdict"),
  audit: SETTLED.audit!.filter((e) => e.event_type !== "CLAIM_REFUND_EXECUTED"),
};
const CLAIM_ID = SETTLED.claim_id;
const inputs = (SETTLED.audit![0]!.details as { kernel_inputs: Record<string, Record<string, unknown>> }).kernel_inputs;
const REASON = inputs.claim!.reason as string;
const PROPOSAL_REASON = (inputs.proposal!.params as { reason: string }).reason;

/** The bench's claim as intake stores it, and the patch the kernel's decision writes. */
const claim = { order_id: "ord_bs000001", amount_eur: 299.99, category: "electronics", reason: REASON };
const RECEIVED: ClaimRecord = {
  claim_id: CLAIM_ID,
  dfid: `dfid_${CLAIM_ID}`,
  root_dfid: `dfid_${CLAIM_ID}`,
  status: "RECEIVED",
  input: { claim },
  claim,
  received_at: "2026-12-07T16:49:29.582Z",
  updated_at: "2026-12-07T16:49:29.582Z",
};
const DECIDED = {
  status: "DECIDED",
  updated_at: "2026-12-07T16:49:30.005Z",
  verdict: "ACCEPT",
  verdict_id: SETTLED.record.verdict_id,
  reason_code: "VALIDATION_PASSED",
  reason: "Validation passed",
  executed: true,
  amount: { value: "299.99", currency: "EUR" },
  proposal: { action: "REFUND", ...claim, reason: PROPOSAL_REASON, confidence: 0.85 },
} as const;

const KEY = Buffer.alloc(32, 7);
/** One fixed key for every subject (the tokens' form is what is tested), destroyed per subject. */
function keyStore(): DataKeyStore {
  const erased = new Set<string>();
  return {
    key: async (subject) => (erased.has(subject) ? { state: "erased" } : { state: "key", key: KEY }),
    destroy: async (subject) => (erased.add(subject), "destroyed"),
  };
}

async function setup() {
  const tableName = await aws.newTable();
  const vault = envelopeVault(keyStore(), { cacheKeys: false });
  const client = sealTableClient(
    DynamoDBDocumentClient.from(new DynamoDBClient(localClientConfig(aws.emulators.dynamodbEndpoint)), {
      marshallOptions: { removeUndefinedValues: true },
    }),
    vault,
  );
  const ports = createDynamoPorts({ client, tableName, clock: { now: () => 0 } });
  const raw = async (key: { pk: string; sk: string }) =>
    (await aws.doc.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }))).Item!;
  return { tableName, vault, client, ports, raw };
}

/** The header byte of every pd2 token in `text` (0: the claim left to the item). */
const tokenHeaders = (text: string) =>
  [...text.matchAll(/"(pd[12]:[A-Za-z0-9_:-]+)"/g)].map((m) =>
    m[1]!.startsWith("pd2:") ? Buffer.from(m[1]!.slice(4), "base64url")[0] : "pd1",
  );

describe("the bench's structured claim stored sealed (issue 37)", () => {
  it("writes its claim item in one write unit a write: the reason sealed once, its claim read from its input", async () => {
    const { client, ports, raw } = await setup();
    const { capacity } = await measureCapacity(client, async () => {
      await ports.claims.createClaim(RECEIVED);
      await ports.claims.updateClaim(CLAIM_ID, { status: "RUNNING", updated_at: RECEIVED.updated_at });
      await ports.claims.updateClaim(CLAIM_ID, DECIDED, ["RUNNING"]);
    });
    expect(capacity.wruByKey).toEqual({ "PutItem META": 1, "UpdateItem META": 2 });
    const stored = await raw(keys.claim(CLAIM_ID));
    expect(writeUnits(itemBytes(stored))).toBe(1);
    expect(stored.claim).toBeUndefined();
    expect(JSON.stringify(stored)).not.toContain(REASON);
    expect(tokenHeaders(JSON.stringify(stored))).toEqual([0, 0]);
    expect(await ports.claims.getClaim(CLAIM_ID)).toEqual({ ...RECEIVED, ...DECIDED });
  });

  it("keeps a claim that is not its input's, and a free-text claim's extraction, as they are", async () => {
    const { ports, raw } = await setup();
    const completed = { ...RECEIVED, claim: { ...claim, currency: "EUR" } };
    await ports.claims.createClaim(completed);
    expect((await raw(keys.claim(CLAIM_ID))).claim).toBeDefined();
    expect(await ports.claims.getClaim(CLAIM_ID)).toEqual(completed);
    const text: ClaimRecord = { ...RECEIVED, claim_id: "clm_text", input: { claim_text: REASON }, claim: undefined };
    const { claim: _none, ...created } = text;
    await ports.claims.createClaim(text);
    expect(await ports.claims.getClaim("clm_text")).toEqual(created);
    await ports.claims.updateClaim("clm_text", { claim });
    expect(await ports.claims.getClaim("clm_text")).toEqual({ ...created, claim });
  });

  it("refuses a token moved to another claim's item, and reads an erased claim's as [erased]", async () => {
    const { tableName, vault, ports, raw } = await setup();
    await ports.claims.createClaim(RECEIVED);
    await ports.claims.createClaim({ ...RECEIVED, claim_id: "clm_other" });
    const token = ((await raw(keys.claim(CLAIM_ID))).input as { claim: { reason: string } }).claim.reason;
    await aws.doc.send(
      new UpdateCommand({
        TableName: tableName,
        Key: keys.claim("clm_other"),
        UpdateExpression: "SET #i.#c.reason = :t",
        ExpressionAttributeNames: { "#i": "input", "#c": "claim" },
        ExpressionAttributeValues: { ":t": token },
      }),
    );
    await expect(ports.claims.getClaim("clm_other")).rejects.toThrow(/a sealed field of clm_other does not open/);
    await vault.destroy(CLAIM_ID);
    const erased = await ports.claims.getClaim(CLAIM_ID);
    expect([erased?.claim?.reason, erased?.input]).toEqual(["[erased]", { claim: { ...claim, reason: "[erased]" } }]);
  });

  it("puts its verdict in one write unit (settled: two), the body compressed against the record, its tokens leaving the claim to the item", async () => {
    const { client, vault, ports, raw } = await setup();
    const { capacity } = await measureCapacity(client, async () => {
      await ports.verdicts.putVerdictOnce(PUT);
      await ports.verdicts.recordExecution(PUT.idempotency_key, SETTLED);
    });
    // Two sealed fields add ~230 bytes no compressor takes out (IVs, tags, ciphertext) to an 835-byte settled item.
    expect(capacity.wruByKey).toEqual({ "PutItem VERDICT": 1, "UpdateItem VERDICT": 2 });
    expect(writeUnits(itemBytes(await verdictItem(PUT, vault)))).toBe(1);
    const stored = await raw(keys.verdict(PUT.idempotency_key));
    expect(Object.keys(stored).filter((k) => k.startsWith("body"))).toEqual(["body_z2c"]);
    const body = (await unpackText(stored, "body", JSON.stringify(SETTLED.record)))!;
    expect(body).not.toContain(REASON);
    expect(tokenHeaders(body)).toEqual([0, 0]);
    expect(await ports.verdicts.getVerdict(PUT.idempotency_key)).toEqual({ ...SETTLED, published: false });
  });

  it("reads a sealed verdict as the release before stored it: pd1 tokens in a body compressed without the record", async () => {
    const { tableName, ports } = await setup();
    /** A pd1 token as envelope.ts wrote it until issue 37 (any IV opens: the synthetic one only made it repeatable). */
    const pd1 = (text: string) => {
      const iv = Buffer.alloc(12, 1);
      const cipher = createCipheriv("aes-256-gcm", KEY, iv).setAAD(Buffer.from(CLAIM_ID));
      const ct = Buffer.concat([cipher.update(text, "utf8"), cipher.final()]);
      const b64 = (b: Buffer) => b.toString("base64url");
      return `pd1:${b64(Buffer.from(CLAIM_ID))}:${b64(iv)}:${b64(ct)}:${b64(cipher.getAuthTag())}`;
    };
    const item = await verdictItem(PUT);
    const { body_z2c: _context, ...head } = item;
    const text = JSON.stringify({ checks: PUT.checks, events: PUT.events, review: PUT.review, audit: PUT.audit })
      .replace(JSON.stringify(REASON), JSON.stringify(pd1(REASON)))
      .replace(JSON.stringify(PROPOSAL_REASON), JSON.stringify(pd1(PROPOSAL_REASON)));
    expect(tokenHeaders(text)).toEqual(["pd1", "pd1"]);
    const packed = await packText("body", text, itemBytes(head));
    expect(packed.attribute).toBe("body_z2");
    await aws.doc.send(new PutCommand({ TableName: tableName, Item: { ...head, body_z2: packed.value } }));
    expect(await ports.verdicts.getVerdict(PUT.idempotency_key)).toEqual(PUT);
  });
});
