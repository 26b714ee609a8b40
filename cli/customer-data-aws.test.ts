// `claims erase --table` and `claims export --table` against a stage as AWS runs it: the handlers compose the vault
// of KMS-wrapped data keys in the table (dynalite through the real DynamoDB SDK), and KMS is a stand-in speaking its
// JSON 1.1 wire format through the real `@aws-sdk/client-kms` — only because no KMS can run here.
import { inflateRawSync, gunzipSync } from "node:zlib";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DecryptCommand, GenerateDataKeyCommand, KMSClient } from "@aws-sdk/client-kms";
import { DynamoDBDocumentClient, ScanCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMPACT_DICTIONARIES } from "../adapters/aws/compact.ts";
import { kmsKeyStore } from "../adapters/aws/kms-keys.ts";
import type { KmsDataKeys } from "../adapters/aws/kms-keys.ts";
import { startKmsStandIn } from "../local/testing/kms-standin.ts";
import type { KmsStandIn } from "../local/testing/kms-standin.ts";
import { envelopeVault } from "../adapters/vault/envelope.ts";
import { ERASED } from "../core/privacy/sealing.ts";
import { localClientConfig } from "../local/emulators.ts";
import { LOCAL_TABLE_NAME } from "../local/stack.ts";
import { decideOnStack, startTestStack } from "../local/testing/stack-fixture.ts";
import { claimsInProcess } from "./cli-in-process.test-kit.ts";
import { eraseInTable, exportFromTable } from "./customer-data-aws.ts";
import { SERVED_ERASURES_DFID } from "./customer-data-served.ts";

const WORDS = ["Wendelin Quast", "wendelin.quast@example.de", "DE89370400440532013000", "+49 151 2345 6789"];
let stack: Awaited<ReturnType<typeof startTestStack>>;
let kms: KmsStandIn | undefined;
let table: { table: string; endpoint: string };
const claimIds: Record<string, string> = {};

/** KMS through the real SDK client, made on first use (the stand-in starts after the stack, with its credentials). */
function lazyKms(): KmsDataKeys {
  let client: KMSClient | undefined;
  const kmsClient = () => (client ??= new KMSClient({ ...kms!.clientConfig(), maxAttempts: 1 }));
  return {
    generateDataKey: (input) => kmsClient().send(new GenerateDataKeyCommand(input)),
    decrypt: (input) => kmsClient().send(new DecryptCommand(input)),
  };
}

beforeAll(async () => {
  stack = await startTestStack({
    // The vault the deployed functions compose (functions/composition/compose.ts linkedVault), over the stack's table.
    personalDataVault: (emulators) =>
      envelopeVault(
        kmsKeyStore(
          {
            client: DynamoDBDocumentClient.from(new DynamoDBClient(localClientConfig(emulators.dynamodbEndpoint))),
            tableName: LOCAL_TABLE_NAME,
            clock: { now: () => Date.now() },
            pageSize: undefined,
          },
          lazyKms(),
          "alias/claims-crew-test-personal-data",
        ),
        { cacheKeys: false },
      ),
  });
  kms = await startKmsStandIn({ credentials: stack.emulators.credentials });
  // The operator's shell: AWS credentials and the endpoints (AWS_ENDPOINT_URL_KMS, as the SDK reads it).
  Object.assign(process.env, {
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: stack.emulators.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: stack.emulators.credentials.secretAccessKey,
    AWS_ENDPOINT_URL_KMS: kms.endpoint,
  });
  table = { table: LOCAL_TABLE_NAME, endpoint: stack.emulators.dynamodbEndpoint };
  const reason = `I am ${WORDS[0]} (${WORDS[1]}), the charger melted`;
  const decided = await decideOnStack(stack, {
    claim: { order_id: "ord_021", customer_id: "cus_0100", amount_eur: 100, category: "electronics", reason },
  });
  claimIds.refunded = decided.claim_id;
  expect([decided.verdict, decided.executed]).toEqual(["ACCEPT", true]);
  const second = await decideOnStack(stack, {
    claim: {
      order_id: "ord_022",
      customer_id: "cus_0100",
      amount_eur: 100,
      category: "electronics",
      reason: `Again ${WORDS[0]}: broken`,
    },
  });
  claimIds.second = second.claim_id;
  // The customer's third automatic refund in the window: a person decides it (held at a review: in flight).
  const held = await decideOnStack(stack, {
    claim_text: `Order ord_023 for 100 EUR, electronics, bought 3 days ago. Dead on arrival. ${WORDS[0]}, IBAN ${WORDS[2]}, call ${WORDS[3]}`,
  });
  claimIds.held = held.claim_id;
  const other = await decideOnStack(stack, {
    claim: {
      order_id: "ord_017",
      customer_id: "cus_0042",
      amount_eur: 178,
      category: "home",
      reason: "Another customer: Ines Paulsen",
    },
  });
  claimIds.other = other.claim_id;
}, 120_000);

afterAll(async () => {
  delete process.env.AWS_ENDPOINT_URL_KMS;
  await kms?.stop();
  await stack?.stop();
});

/** Every text the table holds: each item as JSON, and each binary attribute inflated as the table's ports would. */
async function tableTexts(): Promise<string[]> {
  const doc = DynamoDBDocumentClient.from(new DynamoDBClient(localClientConfig(stack.emulators.dynamodbEndpoint)));
  try {
    const items = (await doc.send(new ScanCommand({ TableName: LOCAL_TABLE_NAME }))).Items ?? [];
    const texts = items.map((i) => JSON.stringify(i));
    const binaries = items.flatMap((i) => Object.values(i).filter((v): v is Uint8Array => v instanceof Uint8Array));
    // Every codec that inflates the bytes: a raw deflate inflates with a dictionary it was not made with too
    // (into other bytes), so each dictionary's reading is scanned, not only the first that succeeds.
    for (const bin of binaries)
      for (const inflate of [
        ...Object.values(COMPACT_DICTIONARIES).map((dictionary) => () => inflateRawSync(bin, { dictionary })),
        () => gunzipSync(bin),
        () => inflateRawSync(bin),
      ])
        try {
          texts.push(inflate().toString("utf8"));
        } catch {
          // not this codec
        }
    return texts;
  } finally {
    doc.destroy();
  }
}

describe("claims erase / export --table against a deployed stage (KMS-wrapped data keys)", () => {
  it("exports the customer's words opened through KMS, then erases every claim of theirs, in flight included, audited", async () => {
    // Sealed: no text of the customer anywhere in the table, but each claim's data key is there, wrapped.
    const before = await tableTexts();
    // The scan reads the compressed attributes too: the kernel's verdict is only ever stored compressed.
    expect(before.some((t) => t.includes('"event_type":"KERNEL_VERDICT"'))).toBe(true);
    expect(before.filter((t) => WORDS.some((w) => t.includes(w)))).toEqual([]);
    const exported = await exportFromTable(table, kms!.alias, "cus_0100");
    expect(exported.map((c) => c.claim_id).sort()).toEqual([claimIds.refunded, claimIds.second, claimIds.held].sort());
    expect(JSON.stringify(exported)).toContain(WORDS[0]);
    expect(JSON.stringify(exported)).toContain(WORDS[2]);
    expect(exported.every((c) => !c.erased)).toBe(true);

    const decrypts = kms!.calls.filter((c) => c === "Decrypt").length;
    const erased = await eraseInTable(table, { customerId: "cus_0100" }, new Date("2026-06-02T00:00:00Z"));
    // Erasing reads the table blind: not one KMS call.
    expect(kms!.calls.filter((c) => c === "Decrypt").length).toBe(decrypts);
    expect(erased.claims.sort((a, b) => a.claim_id.localeCompare(b.claim_id))).toEqual(
      [
        { claim_id: claimIds.refunded, outcome: "destroyed", in_flight: false },
        { claim_id: claimIds.second, outcome: "destroyed", in_flight: false },
        { claim_id: claimIds.held, outcome: "destroyed", in_flight: true },
      ].sort((a, b) => a.claim_id!.localeCompare(b.claim_id!)),
    );
    const after = await tableTexts();
    for (const id of [claimIds.refunded, claimIds.second, claimIds.held])
      expect(after.find((t) => t.includes(`"pk":"DATAKEY#${id}"`))).toMatch(/"erased_at":"2026-06-02T00:00:00.000Z"/);
    const record = (await stack.deps.audit.byDfid(SERVED_ERASURES_DFID)).map((e) => e.details);
    expect(record).toEqual([
      expect.objectContaining({ customer_id: "cus_0100", cause: "request", claim_ids: expect.any(Array) }),
    ]);
    expect((record[0]!.claim_ids as string[]).sort()).toEqual(
      [claimIds.refunded, claimIds.second, claimIds.held].sort(),
    );

    // Export again: every personal field reads [erased]; another customer's words still open.
    const again = await exportFromTable(table, kms!.alias, "cus_0100");
    expect(again.every((c) => c.erased && c.personal_data.every((f) => f.value === ERASED))).toBe(true);
    expect(JSON.stringify(again)).not.toContain("Wendelin");
    expect(JSON.stringify(await exportFromTable(table, kms!.alias, "cus_0042"))).toContain("Ines Paulsen");

    // The claim in flight goes on: a person approves it with a note quoting the customer, stored [erased]. The approval
    // checks the proposal again on what survives the erasure (its key hashed the customer's words: docs/customer-data.md).
    const approved = await stack.runtime.decideReview(claimIds.held!, {
      decision: "APPROVE",
      reviewer: "rita",
      note: `Called ${WORDS[0]} back`,
    });
    expect(approved.ok && approved.body.review.status, JSON.stringify(approved)).toBe("APPROVED");
    expect((await stack.deps.reviews.getReview(claimIds.held!))?.note).toBe(ERASED);
    const final = await tableTexts();
    expect(final.filter((t) => WORDS.some((w) => t.includes(w)) || t.includes("Called Wendelin"))).toEqual([]);
  });

  it("answers twice and an unknown customer as over a data directory, through the claims command", async () => {
    // In this process (cli/cli-in-process.test-kit.ts), with the operator's AWS settings beforeAll put in process.env;
    // cli/customer-data.test.ts runs `claims erase` and `export` as binaries.
    const claims = (args: string[]) => claimsInProcess(args);
    const where = ["--table", LOCAL_TABLE_NAME, "--endpoint", stack.emulators.dynamodbEndpoint];
    const twice = await claims(["erase", "--customer", "cus_0100", ...where]);
    expect(twice.code, twice.stderr).toBe(0);
    expect(twice.stdout).toMatch(/customer cus_0100: already erased \(3 claim\(s\)\); nothing left to erase/);
    expect(twice.stdout).toContain(`${claimIds.held} (table ${LOCAL_TABLE_NAME}): erased before`);
    const nobody = await claims(["erase", "--customer", "cus_nobody", ...where]);
    expect(nobody.code).toBe(1);
    expect(nobody.stderr).toContain(`no claim of customer cus_nobody in table ${LOCAL_TABLE_NAME}: nothing erased`);
    const keyless = await claims(["export", "--customer", "cus_0100", ...where]);
    expect(keyless.code).not.toBe(0);
    expect(keyless.stderr).toMatch(/--table needs --kms-key/);
    const both = await claims(["erase", "--customer", "cus_0100", "--data-dir", "/tmp/x", ...where]);
    expect(both.stderr).toMatch(/give --data-dir or --table, not both/);
  });
});
