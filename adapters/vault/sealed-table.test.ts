// The table's sealing at the client (adapters/vault/sealed-table.ts) on dynalite through the real SDK: what is
// written holds the customer's words only sealed (an item's fields, an update's values, an audit event kept as JSON
// text), what is read is opened, the decision path stays in clear — and an erasure racing a claim's write, at each
// point it can land, never leaves the words in clear nor changes the decision path (deterministic: the erasure is
// made to land at that point by the key store, no timing).
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { createAuditEvent } from "../../core/integrity/audit.ts";
import { ERASED } from "../../core/privacy/sealing.ts";
import { createDynamoAuditLog } from "../aws/dynamo-audit.ts";
import { localClientConfig } from "../../local/emulators.ts";
import type { PersonalDataVault } from "../../pipeline/ports.ts";
import { useEmulatedAws } from "../aws/emulators.test-kit.ts";
import { envelopeVault } from "./envelope.ts";
import type { DataKeyStore } from "./envelope.ts";
import { keyFileStore } from "./key-files.ts";
import { claimOfItem, sealTableClient } from "./sealed-table.ts";

const aws = useEmulatedAws();
const WORDS = "Zelda Quirinius, zelda@example.com";

/** A claim's item as the claims store writes it: its words in the input, the decision path beside them. */
const item = (claimId: string) => ({
  pk: `CLAIM#${claimId}`,
  sk: "META",
  claim_id: claimId,
  order_id: "ord_001",
  amount_eur: 80,
  input: { claim: { order_id: "ord_001", amount_eur: 80, reason: `Kettle leaks. ${WORDS}` } },
  event: JSON.stringify({ details: { claim_id: claimId, input: { claim_text: WORDS } } }),
});

/** A sealing client over its own SDK client, and the raw client that sees the stored bytes. */
async function clients(vault: PersonalDataVault) {
  const tableName = await aws.newTable();
  const sealed = sealTableClient(
    DynamoDBDocumentClient.from(new DynamoDBClient(localClientConfig(aws.emulators.dynamodbEndpoint))),
    vault,
  );
  const raw = async (claimId: string) =>
    (await aws.doc.send(new GetCommand({ TableName: tableName, Key: { pk: `CLAIM#${claimId}`, sk: "META" } }))).Item;
  const read = async (claimId: string) =>
    (await sealed.send(new GetCommand({ TableName: tableName, Key: { pk: `CLAIM#${claimId}`, sk: "META" } }))).Item;
  return { tableName, sealed, raw, read };
}

const keysIn = () => keyFileStore(join(mkdtempSync(join(tmpdir(), "sealed-table-")), "keys"));

describe("the sealing table client", () => {
  it("writes a claim's words only sealed, reads them back as written, the decision path in clear", async () => {
    const { tableName, sealed, raw, read } = await clients(envelopeVault(keysIn(), { cacheKeys: false }));
    await sealed.send(new PutCommand({ TableName: tableName, Item: item("clm_1") }));
    await sealed.send(
      new UpdateCommand({
        TableName: tableName,
        Key: { pk: "CLAIM#clm_1", sk: "META" },
        UpdateExpression: "SET note = :note",
        ExpressionAttributeValues: { ":note": `Called ${WORDS}` },
      }),
    );
    const stored = JSON.stringify(await raw("clm_1"));
    expect(stored).not.toContain("Quirinius");
    expect(stored).toContain('"order_id":"ord_001"');
    expect(await read("clm_1")).toEqual({ ...item("clm_1"), note: `Called ${WORDS}` });
  });

  it("finds the claim an item belongs to by its claim_id, else its key, inside JSON text too", () => {
    expect(claimOfItem({ pk: "X", event: JSON.stringify({ details: { claim_id: "clm_9" } }) })).toBe("clm_9");
    expect(claimOfItem({ pk: "DFID#dfid_clm_7", sk: "A" })).toBe("clm_7");
    expect(claimOfItem({ pk: "ORDER#ord_1" })).toBeUndefined();
  });

  // Where an erasure can land against a claim's write: before it, between reading the claim's key and writing the
  // ciphertext, after it. In each the stored item holds no word in clear, reads [erased], keeps the decision path.
  const landings: [
    string,
    (store: DataKeyStore) => DataKeyStore,
    (destroy: () => Promise<unknown>) => Promise<void>,
  ][] = [
    ["before the write", (s) => s, async (destroy) => void (await destroy())],
    [
      "between the key's read and the write",
      (s) => ({
        key: async (subject, opts) => {
          const k = await s.key(subject, opts);
          await s.destroy(subject); // the erasure lands now: the key in hand is already gone from the store
          return k;
        },
        destroy: (subject) => s.destroy(subject),
      }),
      async () => undefined,
    ],
    ["after the write", (s) => s, async () => undefined],
  ];
  for (const [when, wrap, eraseFirst] of landings)
    it(`leaves no word in clear when the erasure lands ${when}, and the decision path as it was`, async () => {
      const store = keysIn();
      const vault = envelopeVault(wrap(store), { cacheKeys: false });
      const { tableName, sealed, raw, read } = await clients(vault);
      await eraseFirst(() => store.destroy("clm_2"));
      await sealed.send(new PutCommand({ TableName: tableName, Item: item("clm_2") }));
      if (when === "after the write") await store.destroy("clm_2");
      expect(JSON.stringify(await raw("clm_2"))).not.toContain("Quirinius");
      const after = await read("clm_2");
      expect(after).toMatchObject({ order_id: "ord_001", amount_eur: 80, input: { claim: { order_id: "ord_001" } } });
      expect(after?.input.claim.reason).toBe(ERASED);
      expect(JSON.parse(after?.event as string).details.input.claim_text).toBe(ERASED);
    });
});

describe("the audit on a sealing client, after an erasure", () => {
  it("returns an event stored alone and again in a step's list once, before and after its claim's erasure", async () => {
    const store = keysIn();
    const { tableName, sealed } = await clients(envelopeVault(store, { cacheKeys: false }));
    const audit = createDynamoAuditLog({ client: sealed, tableName, clock: { now: () => 0 }, pageSize: undefined });
    const event = (type: "CLAIM_RECEIVED" | "CREW_STARTED", at: string) =>
      createAuditEvent({
        dfid: "dfid_clm_5",
        type,
        state: "RECEIVED",
        at,
        details: { claim_id: "clm_5", input: { claim_text: WORDS }, amount_eur: 80 },
      });
    const received = event("CLAIM_RECEIVED", "2026-01-01T00:00:00.000Z");
    const started = event("CREW_STARTED", "2026-01-01T00:00:01.000Z");
    // A redelivered step: the receipt appended alone, then with the crew's start in one item.
    await audit.append(received);
    await audit.appendAll([received, started]);
    const types = async () => (await audit.byDfid("dfid_clm_5")).map((e) => e.event_type);
    expect(await types()).toEqual(["CLAIM_RECEIVED", "CREW_STARTED"]);
    await store.destroy("clm_5");
    expect(await types()).toEqual(["CLAIM_RECEIVED", "CREW_STARTED"]);
    expect((await audit.byDfid("dfid_clm_5"))[0]?.details.input).toEqual({ claim_text: ERASED });
  });
});
