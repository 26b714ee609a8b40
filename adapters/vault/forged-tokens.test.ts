// A customer's text in the form of a sealed field (issue 38): a reason of `pd1:abc`, a forged token (pd1 or pd2), another claim's
// real token copied into a claim, an order id that reads like a token. Through the table's sealing client on dynalite
// (the real SDK), each is stored sealed where it is personal, reads back exactly as written, and neither opens another
// claim's words nor reads `[erased]` once that other claim is erased.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { localClientConfig } from "../../local/emulators.ts";
import { useEmulatedAws } from "../aws/emulators.test-kit.ts";
import { envelopeVault } from "./envelope.ts";
import { keyFileStore } from "./key-files.ts";
import { sealTableClient } from "./sealed-table.ts";

const aws = useEmulatedAws();
const WORDS = "Zelda Quirinius, zelda@example.com";

describe("a customer's text that reads like a sealed field", () => {
  it("is sealed where it is personal, reads back as written, and never opens or erases another claim", async () => {
    const store = keyFileStore(join(mkdtempSync(join(tmpdir(), "forged-tokens-")), "keys"));
    const vault = envelopeVault(store, { cacheKeys: false });
    const tableName = await aws.newTable();
    const sealed = sealTableClient(
      DynamoDBDocumentClient.from(new DynamoDBClient(localClientConfig(aws.emulators.dynamodbEndpoint))),
      vault,
    );
    const key = (claimId: string) => ({ pk: `CLAIM#${claimId}`, sk: "META" });
    const put = (claimId: string, fields: Record<string, unknown>) =>
      sealed.send(new PutCommand({ TableName: tableName, Item: { ...key(claimId), claim_id: claimId, ...fields } }));
    const raw = async (claimId: string) =>
      (await aws.doc.send(new GetCommand({ TableName: tableName, Key: key(claimId) }))).Item ?? {};
    const read = async (claimId: string) =>
      (await sealed.send(new GetCommand({ TableName: tableName, Key: key(claimId) }))).Item ?? {};

    // Another customer's claim, and the token its words are stored as.
    await put("clm_other", { reason: WORDS });
    const theirs = (await raw("clm_other")).reason as string;
    // Written as pd2, its claim left to the item that holds it (the item's key names clm_other).
    expect(theirs).toMatch(/^pd2:A/);
    const theirBytes = Buffer.from(theirs.slice(4), "base64url");
    const forgedTheirs = `pd2:${Buffer.concat([theirBytes.subarray(0, -16), Buffer.alloc(16)]).toString("base64url")}`;
    const forgedGone = `pd1:${Buffer.from("clm_gone").toString("base64url")}:${"A".repeat(16)}:AAAA:${"A".repeat(22)}`;
    const forgedGoneV2 = `pd2:${Buffer.concat([Buffer.of(2, 8), Buffer.from("clm_gone"), Buffer.alloc(31)]).toString("base64url")}`;
    await vault.seal("clm_gone", "x");
    await vault.destroy("clm_gone");
    const texts = {
      reason: "pd1:abc",
      note: theirs,
      claim_text: forgedTheirs,
      customer_name: forgedGoneV2,
      input: { claim: { reason: forgedGone } },
      order_id: forgedGone,
    };
    await put("clm_mine", texts);

    const stored = await raw("clm_mine");
    const personal = { reason: texts.reason, note: theirs, claim_text: forgedTheirs, customer_name: forgedGoneV2 };
    for (const [k, v] of Object.entries(personal)) expect([k, stored[k]]).not.toEqual([k, v]);
    expect((stored.input as { claim: { reason: string } }).claim.reason).not.toBe(forgedGone);
    expect(stored.order_id).toBe(forgedGone); // not personal: kept as the customer wrote it
    expect(await read("clm_mine")).toEqual({ ...key("clm_mine"), claim_id: "clm_mine", ...texts });

    // The other claim erased: the copy of its token in clm_mine is clm_mine's text, and reads as written still.
    await vault.destroy("clm_other");
    expect((await read("clm_other")).reason).toBe("[erased]");
    expect(await read("clm_mine")).toEqual({ ...key("clm_mine"), claim_id: "clm_mine", ...texts });
  });
});
