// ContextStore on DynamoDB: the authoritative orders (`ORDER#<id>`/`ORDER`), listed by gsi1 `ORDERS`.
// Written by `seedOrders` (table.ts); read here and validated like the in-memory store does.
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { validateOrder } from "../../core/kernel/orders.ts";
import type { Order } from "../../core/integrity/contracts.ts";
import type { ContextStore } from "../../pipeline/ports.ts";
import type { ContextSnapshot } from "../../core/integrity/contracts.ts";
import { dynamoCall, queryAll } from "./dynamo-context.ts";
import type { DynamoContext } from "./dynamo-context.ts";
import { OrderDataError } from "../../core/integrity/errors.ts";
import { GSI1, gsi1, keys, withoutTableAttributes } from "./table.ts";

function toOrder(item: Record<string, unknown>): Order {
  try {
    return validateOrder(withoutTableAttributes(item));
  } catch (error) {
    // A corrupt order is a data problem for a person (the claim goes to review), not a broken adapter.
    throw new OrderDataError(`stored order ${String(item.pk)} is invalid: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/** A ContextStore over the orders in the single table. */
export function createDynamoContextStore(ctx: DynamoContext): ContextStore {
  const { client, tableName } = ctx;
  return {
    async getOrder(orderId) {
      const out = await dynamoCall(`GetItem order ${orderId}`, () =>
        client.send(new GetCommand({ TableName: tableName, Key: keys.order(orderId) })),
      );
      return out.Item ? toOrder(out.Item) : undefined;
    },
    async snapshot(): Promise<ContextSnapshot> {
      const items = await queryAll(ctx, "Query all orders", {
        IndexName: GSI1,
        KeyConditionExpression: "gsi1pk = :pk",
        ExpressionAttributeValues: { ":pk": gsi1.orders },
      });
      const orders = items
        .map(toOrder)
        .sort((a, b) => (a.order_id < b.order_id ? -1 : a.order_id > b.order_id ? 1 : 0));
      const out: Record<string, Order> = {};
      for (const order of orders)
        Object.defineProperty(out, order.order_id, {
          value: order,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      return { orders: out };
    },
  };
}
