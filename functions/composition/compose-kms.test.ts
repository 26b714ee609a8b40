// The deployed composition with the stage's KMS key linked (`Resource.PersonalDataKey`), as on AWS: the deployed
// `handler` exports run on SST links and the SDK's endpoint settings (the emulators, and a KMS stand-in speaking
// KMS's wire format — only because no KMS can run here). What they write holds the customer's words sealed under a
// KMS-wrapped data key, and every deployed queue consumer opens the sealed records Lambda hands it.
import { readFileSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Context } from "aws-lambda";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { KMSClient } from "@aws-sdk/client-kms";
import { DynamoDBDocumentClient, ScanCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isSealed } from "../../core/privacy/sealing.ts";
import { kmsDataKeys, kmsKeyStore } from "../../adapters/aws/kms-keys.ts";
import { legacyKmsKeyStore } from "../../adapters/aws/kms-keys.test-kit.ts";
import { startKmsStandIn } from "../../local/testing/kms-standin.ts";
import type { KmsStandIn } from "../../local/testing/kms-standin.ts";
import { envelopeVault } from "../../adapters/vault/envelope.ts";
import { LOCAL_TABLE_NAME } from "../../local/stack.ts";
import { localClientConfig } from "../../local/emulators.ts";
import { setSstResourceEnv } from "../../local/resources.ts";
import { CONFIG_PATH, TEST_NOW, apiEvent, sqsEvent, startTestStack } from "../../local/testing/stack-fixture.ts";
import { policyFromConfig } from "../../app/policy-format.ts";
import { loadConfig } from "./config-file.ts";

const NAME = "Ottilie Brennecke-Hausmann";
let stack: Awaited<ReturnType<typeof startTestStack>>;
let kms: KmsStandIn;

beforeAll(async () => {
  stack = await startTestStack();
  kms = await startKmsStandIn({ credentials: stack.emulators.credentials });
  const policyPath = join(mkdtempSync(join(tmpdir(), "policy-")), "claims-policy.json");
  writeFileSync(
    policyPath,
    JSON.stringify(
      policyFromConfig(loadConfig(CONFIG_PATH, TEST_NOW), readFileSync(CONFIG_PATH, "utf8"), {
        source: "scenarios/config.yaml",
        demo: true,
      }),
    ),
  );
  Object.assign(process.env, {
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: stack.emulators.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: stack.emulators.credentials.secretAccessKey,
    AWS_ENDPOINT_URL_DYNAMODB: stack.emulators.dynamodbEndpoint,
    AWS_ENDPOINT_URL_SQS: stack.emulators.sqsEndpoint,
    AWS_ENDPOINT_URL_EVENTBRIDGE: stack.emulators.eventsEndpoint,
    AWS_ENDPOINT_URL_KMS: kms.endpoint,
    CLAIMS_POLICY_PATH: policyPath,
    LLM_PROVIDER: "rules",
  });
  // The link SST gives a function linked to infra/keys.ts's key.
  setSstResourceEnv({ PersonalDataKey: { keyId: kms.keyArn } });
});
afterAll(async () => {
  delete process.env.SST_RESOURCE_PersonalDataKey;
  delete (globalThis as { __SST_RESOURCE_RAW__?: Record<string, unknown> }).__SST_RESOURCE_RAW__?.PersonalDataKey;
  delete process.env.AWS_ENDPOINT_URL_KMS;
  await kms?.stop();
  await stack?.stop();
});

const rawTable = async () => {
  const doc = DynamoDBDocumentClient.from(new DynamoDBClient(localClientConfig(stack.emulators.dynamodbEndpoint)));
  try {
    return (await doc.send(new ScanCommand({ TableName: LOCAL_TABLE_NAME }))).Items ?? [];
  } finally {
    doc.destroy();
  }
};

describe("the deployed functions with the stage's KMS key linked", () => {
  it("store a claim's words sealed under a data key wrapped by the day's branch key KMS made, and open them to read", async () => {
    const { handler } = await import("../intake-api.ts");
    const reason = `Hello, I am ${NAME}, the screen is dead`;
    const body = JSON.stringify({
      claim: { order_id: "ord_004", amount_eur: 50, category: "prohibited_category", reason },
    });
    const posted = await handler(apiEvent("POST", "/claims", { body }));
    expect(posted.statusCode).toBe(202);
    const { claim_id } = JSON.parse(posted.body ?? "{}") as { claim_id: string };
    const items = await rawTable();
    expect(JSON.stringify(items)).not.toContain("Brennecke");
    const key = items.find((i) => i.pk === `DATAKEY#${claim_id}`);
    expect(key?.wrapped).toBeInstanceOf(Uint8Array);
    // Wrapped under the day's branch key, which KMS made (GenerateDataKey) and wraps.
    expect(items.find((i) => i.pk === `BRANCHKEY#${key?.branch}`)?.wrapped).toBeInstanceOf(Uint8Array);
    expect(kms.calls).toContain("GenerateDataKey");
    // The stack's own (unsealing-free) ports read the token; the deployed vault opens it with the claim its item names
    // (the token leaves it out: issue 37).
    const stored = (await stack.deps.claims.getClaim(claim_id))?.claim?.reason ?? "";
    expect(isSealed(stored)).toBe(true);
    const { productionVault } = await import("./compose.ts");
    expect(await productionVault()?.open(stored, claim_id)).toBe(reason);
  });

  it.each(["orchestrator", "worker", "kernel", "timer", "intake-extract", "refund-executor"])(
    "%s's deployed handler opens the sealed records Lambda hands it, a claim's key KMS wrapped before the branch keys",
    async (name) => {
      // Sealed by another process under a key KMS wrapped for the claim itself (items made before the branch keys):
      // this function has never unwrapped it, so opening the record costs it exactly one KMS Decrypt.
      const client = new KMSClient(kms.clientConfig());
      const subject = `clm_opened_by_${name.replace("-", "_")}`;
      const token = await envelopeVault(legacyKmsKeyStore(keyCtx(), kmsDataKeys(client), kms.alias)).seal(
        subject,
        NAME,
      );
      client.destroy();
      const before = decrypts();
      await handlerOf(name)(sqsEvent([{ body: JSON.stringify({ claim_id: subject, note: token }) }]), {} as Context);
      expect(decrypts()).toBe(before + 1);
    },
  );

  it("open records sealed under a branch key with one KMS Decrypt per container and branch, none per claim", async () => {
    // Another process seals under its day's branch key (TEST_NOW's day), which these functions never unwrapped.
    const client = new KMSClient(kms.clientConfig());
    const sealer = envelopeVault(kmsKeyStore(keyCtx(), kmsDataKeys(client), kms.alias));
    const names = ["orchestrator", "worker", "kernel", "timer", "intake-extract", "refund-executor"];
    const tokens = await Promise.all(names.map((_, i) => sealer.seal(`clm_branch_${i}`, `${NAME} ${i}`)));
    client.destroy();
    const before = decrypts();
    const { productionVault } = await import("./compose.ts");
    for (const [i, name] of names.entries()) {
      const subject = `clm_branch_${i}`;
      await handlerOf(name)(
        sqsEvent([{ body: JSON.stringify({ claim_id: subject, note: tokens[i] }) }]),
        {} as Context,
      );
      expect(await productionVault()?.open(tokens[i]!)).toBe(`${NAME} ${i}`);
    }
    // The functions of this test share one container (one module graph): one Decrypt for the branch key.
    expect(decrypts()).toBe(before + 1);
  });
});

const decrypts = () => kms.calls.filter((c) => c === "Decrypt").length;

/** The table as another process's key store sees it. */
const keyCtx = () => ({
  client: DynamoDBDocumentClient.from(new DynamoDBClient(localClientConfig(stack.emulators.dynamodbEndpoint))),
  tableName: LOCAL_TABLE_NAME,
  clock: { now: () => TEST_NOW },
  pageSize: undefined,
});

const handlers = new Map<string, (event: unknown, context: Context) => Promise<unknown>>();
/** A deployed handler, imported once (as Lambda loads it once per container). */
const handlerOf = (name: string) => {
  const known = handlers.get(name);
  if (known === undefined) throw new Error(`${name} was not imported`);
  return known;
};
beforeAll(async () => {
  for (const name of ["orchestrator", "worker", "kernel", "timer", "intake-extract", "refund-executor"]) {
    const { handler } = (await import(`../${name}.ts`)) as {
      handler: (event: unknown, context: Context) => Promise<unknown>;
    };
    handlers.set(name, handler);
  }
});
