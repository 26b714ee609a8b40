// Test support: the one-key table the emulator tests create (a string `pk`, on demand), defined once.
import { CreateTableCommand } from "@aws-sdk/client-dynamodb";

/** Creates table `name`, keyed by a string `pk`, billed per request. */
export function pkTableCommand(name: string): CreateTableCommand {
  return new CreateTableCommand({
    TableName: name,
    BillingMode: "PAY_PER_REQUEST",
    AttributeDefinitions: [{ AttributeName: "pk", AttributeType: "S" }],
    KeySchema: [{ AttributeName: "pk", KeyType: "HASH" }],
  });
}
