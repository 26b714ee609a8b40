// The shared port contracts against the DynamoDB adapters over a sealing client (adapters/vault/sealed-table.ts, as
// `claims serve` runs them): sealing what is written and opening what is read changes no port's behaviour.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { localClientConfig } from "../../local/emulators.ts";
import { describeDynamoPortContracts } from "../aws/contract-dynamo.test-kit.ts";
import { useEmulatedAws } from "../aws/emulators.test-kit.ts";
import { servedVault } from "./key-files.ts";
import { sealTableClient } from "./sealed-table.ts";

const aws = useEmulatedAws();

describeDynamoPortContracts("DynamoDB, sealed", async () => ({
  doc: sealTableClient(
    DynamoDBDocumentClient.from(new DynamoDBClient(localClientConfig(aws.emulators.dynamodbEndpoint)), {
      marshallOptions: { removeUndefinedValues: true },
    }),
    servedVault(join(mkdtempSync(join(tmpdir(), "contract-sealed-")), "keys")),
  ),
  tableName: await aws.newTable(),
}));
