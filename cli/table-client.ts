// The DynamoDB client of a command that reads or writes a table by name (`load-orders`, `backtest --table`):
// a deployed table with the AWS configuration, or a local endpoint with the credentials of the environment
// (AWS_ACCESS_KEY_ID…), else those `claims serve` wrote for its run (its emulators refuse any other).
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { readLocalCredentials } from "../local/credentials.ts";
import { dataDirFrom } from "./run-store.ts";

/** A DynamoDB client for `--region` / `--endpoint` (the caller destroys it). */
export function tableClient(o: { region?: string | undefined; endpoint?: string | undefined }): DynamoDBClient {
  return new DynamoDBClient({
    ...(o.region ? { region: o.region } : {}),
    ...(o.endpoint
      ? {
          endpoint: o.endpoint,
          region: o.region ?? "us-east-1",
          ...(process.env.AWS_ACCESS_KEY_ID
            ? {}
            : {
                credentials: readLocalCredentials(dataDirFrom(undefined)) ?? {
                  accessKeyId: "none",
                  secretAccessKey: "none",
                },
              }),
        }
      : {}),
  });
}
