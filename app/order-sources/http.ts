// Orders from the shop's own order API, read for each claim (adapters/shop/order-api.ts): its base URL, each
// attempt's timeout and its bearer token (on AWS the OrderApiToken secret; locally ORDER_API_TOKEN or the file
// ORDER_API_TOKEN_FILE names).
import type { OrderSourceDeclaration } from "./declaration.ts";

export const http = {
  name: "http",
  description: "your shop's order API, read for each claim",
  adapter: "adapters/shop/order-api.ts",
  settings: {
    url: {
      kind: "url",
      env: "ORDER_API_URL",
      description: "the base URL; `/orders/{order_id}` is appended",
      missing: "ORDER_SOURCE=http reads orders from {ORDER_API_URL}/orders/{order_id}",
    },
    // Each attempt's timeout, by default and at most (3 attempts fit the kernel's 30 s).
    timeoutMs: {
      kind: "int",
      env: "ORDER_API_TIMEOUT_MS",
      description: "each attempt's timeout",
      limits: { default: 4_000, min: 100, max: 8_000 },
    },
  },
  secrets: {
    token: {
      link: "OrderApiToken",
      env: "ORDER_API_TOKEN",
      fileEnv: "ORDER_API_TOKEN_FILE",
      description: "the order API's token",
    },
  },
} as const satisfies OrderSourceDeclaration;
