// Orders from the app's own DynamoDB table (the default), loaded with `claims load-orders` (locally: the config's
// `context_store.orders`); the adapter is adapters/aws/dynamo-orders.ts, over the table every function already has.
import type { OrderSourceDeclaration } from "./declaration.ts";

export const table = {
  name: "table",
  description:
    "the DynamoDB table, loaded with [`claims load-orders`](cli.md#claims-load-orders) (locally: the config's `context_store.orders`)",
  adapter: "adapters/aws/dynamo-orders.ts",
  settings: {},
  secrets: {},
} as const satisfies OrderSourceDeclaration;
