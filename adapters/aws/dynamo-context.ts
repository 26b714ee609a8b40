// What every DynamoDB repository shares: the injected DocumentClient, the table, a clock, and the
// helpers that turn SDK failures into the adapter's errors and page through queries.
import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import type { DynamoDBDocumentClient, QueryCommandInput } from "@aws-sdk/lib-dynamodb";
import type { Clock } from "../../pipeline/ports.ts";
import {
  AwsAdapterError,
  describeError,
  DynamoRequestError,
  isConditionalCheckFailed,
  isRetryableSdkError,
} from "./errors.ts";

/** Settings shared by the DynamoDB repositories. */
export type DynamoContext = {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  readonly clock: Clock;
  /** `Limit` of each Query page (default: none, DynamoDB's 1 MB pages). Small values exercise paging in tests. */
  readonly pageSize: number | undefined;
  /** How long items are kept (TTL `expires_at`; readers treat an expired item as absent); undefined: kept. */
  readonly retention?: Retention;
};

/** The retention policy: how long after its last write a session, and after its append an audit item, is kept. */
export type Retention = { readonly sessionsMs?: number; readonly auditMs?: number };

/**
 * Runs one SDK call; a lost condition passes through untouched (callers map it to their domain answer),
 * any other SDK failure becomes a `DynamoRequestError` naming `what`, with `retryable` from the SDK.
 */
export async function dynamoCall<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (isConditionalCheckFailed(error) || error instanceof AwsAdapterError) throw error;
    throw new DynamoRequestError(`${what} failed: ${describeError(error)}`, {
      cause: error,
      retryable: isRetryableSdkError(error),
    });
  }
}

/** Every item of a query, following `LastEvaluatedKey` page by page. */
export async function queryAll(
  ctx: DynamoContext,
  what: string,
  input: Omit<QueryCommandInput, "TableName" | "ExclusiveStartKey" | "Limit">,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await dynamoCall(what, () =>
      ctx.client.send(
        new QueryCommand({
          ...input,
          TableName: ctx.tableName,
          ...(ctx.pageSize ? { Limit: ctx.pageSize } : {}),
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      ),
    );
    items.push(...((page.Items ?? []) as Record<string, unknown>[]));
    start = page.LastEvaluatedKey as Record<string, unknown> | undefined;
  } while (start);
  return items;
}
