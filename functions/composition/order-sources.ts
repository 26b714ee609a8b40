// The order sources' adapters, by name (docs/orders.md#adding-an-order-source): the constructive half of the
// registry whose declarative half is app/order-source.ts. Each name of the registry has exactly its adapter here,
// whose inputs are the settings and secrets its declaration names: the types refuse anything else. The table is
// the app's own (the DynamoDB ports every function composes), handed in rather than built again.
import { orderApiSource } from "../../adapters/shop/order-api.ts";
import type { OrderSourceKind, OrderSourceOf, OrderSourceValues } from "../../app/order-source.ts";
import type { OrderSourceAdapter } from "../../pipeline/ports.ts";

/** The adapter a declaration needs: its name, built from its declared settings' values and secrets. */
type AdapterFor<D extends { readonly name: string; readonly secrets: object; readonly settings: object }> =
  OrderSourceAdapter<Extract<keyof D["secrets"], string>, OrderSourceValues<D>> & { readonly name: D["name"] };

/** The `table` source: the app's table of orders, loaded with `claims load-orders` (adapters/aws/dynamo-orders.ts). */
const tableOrders = {
  name: "table",
  createSource: ({ table }) => table(),
} as const satisfies OrderSourceAdapter<never, object>;

/** Every source's adapter. */
export const ORDER_SOURCE_ADAPTERS = {
  table: tableOrders,
  http: orderApiSource,
} as const satisfies { readonly [N in OrderSourceKind]: AdapterFor<OrderSourceOf<N>> };

/** The adapter of `name`, as the generic shape the composition root builds from. */
export function orderSourceAdapter(name: OrderSourceKind): OrderSourceAdapter {
  return ORDER_SOURCE_ADAPTERS[name] as OrderSourceAdapter;
}
