// The claim and the verdict of the bench's structured claim stored sealed, as every deployed function stores them
// (issue 37): the claim's reason sealed once (its `claim` read from its input), tokens that leave out the claim the
// item names, the verdict's body compressed against its record and its personal fields one token deflated against
// the record (i37v) — each claim write one write unit, the verdict's put and settlement too, with room for long
// reasons. What the releases before stored (pd1 tokens, a body compressed without the record; a pd2 token per field)
// still reads.
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
import { withPersonalErased } from "../../core/privacy/sealing.ts";
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
/** The same verdict as the release before stored it sealed, put and settled (fixtures/verdict-pd2-item.json). */
const PD2_RELEASE = JSON.parse(readFileSync(new URL("./fixtures/verdict-pd2-item.json", import.meta.url), "utf8")) as {
  put: Record<string, unknown>;
  settled: Record<string, unknown>;
};
/** A fixture item with its binary attributes (`{ b64 }`) as bytes. */
const fixtureItem = (item: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(item).map(([k, v]) => [
      k,
      v && typeof v === "object" && "b64" in v ? new Uint8Array(Buffer.from(String(v.b64), "base64")) : v,
    ]),
  );
/** A customer's reason no dictionary holds, and a proposal's reason of its own (the model's words, not the rules'). */
const LONG_REASON =
  "I ordered this laptop for my daughter's studies and when the parcel came on Friday the display stayed completely " +
  "black; we charged it overnight, held the power button for thirty seconds and tried another socket, but nothing at all happened.";
const OWN_PROPOSAL_REASON =
  "Refund 299.99 EUR for order ord_bs000001 (electronics): the customer says the laptop arrived with a black display " +
  "that never lit up, which a dented box suggests happened in transit.";
/** `v` with the claim's and the proposal's reasons in its kernel inputs replaced. */
function withReasons(v: StoredVerdict, reason: string, proposalReason: string): StoredVerdict {
  const copy = structuredClone(v);
  for (const e of copy.audit ?? []) {
    const ki = (
      e.details as { kernel_inputs?: { claim: { reason: string }; proposal: { params: { reason: string } } } }
    ).kernel_inputs;
    if (ki === undefined) continue;
    ki.claim.reason = reason;
    ki.proposal.params.reason = proposalReason;
  }
  return copy;
}
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

  it("puts and settles its verdict in one write unit each: its personal fields one token deflated against the record", async () => {
    const { client, vault, ports, raw } = await setup();
    const { capacity } = await measureCapacity(client, async () => {
      await ports.verdicts.putVerdictOnce(PUT);
      await ports.verdicts.recordExecution(PUT.idempotency_key, SETTLED);
    });
    // Until i37v: two tokens of ~230 bytes no compressor takes out, and the record's ids "" in place: settled 1,069 bytes.
    expect(capacity.wruByKey).toEqual({ "PutItem VERDICT": 1, "UpdateItem VERDICT": 1 });
    expect(writeUnits(itemBytes(await verdictItem(PUT, vault)))).toBe(1);
    const stored = await raw(keys.verdict(PUT.idempotency_key));
    expect(itemBytes(stored)).toBeLessThan(1024 - 200);
    expect(Object.keys(stored).filter((k) => k.startsWith("body") || k.startsWith("pd"))).toEqual([
      "pd_z2",
      "body_z2c",
    ]);
    expect((stored.pd_z2 as Uint8Array)[0]).toBe(3);
    expect(JSON.parse(stored.record as string)).not.toHaveProperty("claim_id");
    const body = (await unpackText(stored, "body", JSON.stringify(SETTLED.record)))!;
    for (const words of [REASON, PROPOSAL_REASON, "pd1:", "pd2:"]) expect(body).not.toContain(words);
    expect(await ports.verdicts.getVerdict(PUT.idempotency_key)).toEqual({ ...SETTLED, published: false });
  });

  it("settles in one write unit with a 200-character claim reason and a 150-character proposal reason of their own", async () => {
    const { client, ports } = await setup();
    const long = withReasons(SETTLED, LONG_REASON.slice(0, 200), OWN_PROPOSAL_REASON.slice(0, 150));
    const put = withReasons(PUT, LONG_REASON.slice(0, 200), OWN_PROPOSAL_REASON.slice(0, 150));
    const { capacity } = await measureCapacity(client, async () => {
      await ports.verdicts.putVerdictOnce(put);
      await ports.verdicts.recordExecution(put.idempotency_key, long);
    });
    expect(capacity.wruByKey).toEqual({ "PutItem VERDICT": 1, "UpdateItem VERDICT": 1 });
    expect(await ports.verdicts.getVerdict(put.idempotency_key)).toEqual({ ...long, published: false });
  });

  it("reads every personal field of an erased claim's verdict as [erased], the rest as it was", async () => {
    const { vault, ports } = await setup();
    await ports.verdicts.putVerdictOnce(PUT);
    await ports.verdicts.recordExecution(PUT.idempotency_key, SETTLED);
    await vault.destroy(CLAIM_ID);
    const erased = await ports.verdicts.getVerdict(PUT.idempotency_key);
    expect(erased).toEqual(withPersonalErased({ ...SETTLED, published: false }));
    expect(JSON.stringify(erased)).toContain('"reason":"[erased]"');
  });

  it("refuses its sealed fields moved to another claim's verdict or beside another record of its claim", async () => {
    const { tableName, ports, raw } = await setup();
    const other = { ...PUT, idempotency_key: `${PUT.idempotency_key.slice(0, -1)}0` };
    const later = { ...other, record: { ...other.record, decided_at: "2026-12-07T13:53:36.000Z" } };
    await ports.verdicts.putVerdictOnce(PUT);
    await ports.verdicts.putVerdictOnce({
      ...other,
      claim_id: "clm_other",
      record: { ...other.record, claim_id: "clm_other" },
    });
    const sealed = (await raw(keys.verdict(PUT.idempotency_key))).pd_z2;
    const move = (key: string) =>
      aws.doc.send(
        new UpdateCommand({
          TableName: tableName,
          Key: keys.verdict(key),
          UpdateExpression: "SET pd_z2 = :s",
          ExpressionAttributeValues: { ":s": sealed },
        }),
      );
    await move(other.idempotency_key);
    await expect(ports.verdicts.getVerdict(other.idempotency_key)).rejects.toThrow(
      /verdict .* cannot be read: a sealed field of clm_other does not open with its key/,
    );
    const sameClaim = `${PUT.idempotency_key.slice(0, -1)}1`;
    await ports.verdicts.putVerdictOnce({ ...later, idempotency_key: sameClaim });
    await move(sameClaim);
    await expect(ports.verdicts.getVerdict(sameClaim)).rejects.toThrow(
      new RegExp(`a sealed field of ${CLAIM_ID} does not open with its key`),
    );
  });

  it("seals the same verdict to the same bytes", async () => {
    const first = await setup();
    const second = await setup();
    for (const { ports } of [first, second]) await ports.verdicts.putVerdictOnce(PUT);
    const [a, b] = await Promise.all([first, second].map(({ raw }) => raw(keys.verdict(PUT.idempotency_key))));
    expect(Buffer.from(a!.pd_z2 as Uint8Array)).toEqual(Buffer.from(b!.pd_z2 as Uint8Array));
    expect(Buffer.from(a!.body_z2c as Uint8Array)).toEqual(Buffer.from(b!.body_z2c as Uint8Array));
  });

  it("reads the release before's sealed verdict (a pd2 token per field), and settles its put into one token", async () => {
    const settled = fixtureItem(PD2_RELEASE.settled);
    expect(tokenHeaders((await unpackText(settled, "body", JSON.stringify(SETTLED.record)))!)).toEqual([0, 0]);
    const older = await setup();
    await aws.doc.send(new PutCommand({ TableName: older.tableName, Item: settled }));
    expect(await older.ports.verdicts.getVerdict(PUT.idempotency_key)).toEqual({ ...SETTLED, published: false });
    const { tableName, ports, raw } = await setup();
    await aws.doc.send(new PutCommand({ TableName: tableName, Item: fixtureItem(PD2_RELEASE.put) }));
    expect(await ports.verdicts.getVerdict(PUT.idempotency_key)).toEqual(PUT);
    expect(await ports.verdicts.recordExecution(PUT.idempotency_key, SETTLED)).toEqual({
      ...SETTLED,
      published: false,
    });
    expect(Object.keys(await raw(keys.verdict(PUT.idempotency_key)))).toContain("pd_z2");
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
