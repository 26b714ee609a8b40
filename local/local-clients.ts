// The AWS SDK clients the local stack's handlers use: the production clients of functions/composition (the same
// serialization, sealing, retries, deserialization and errors; each keeps its resolved middleware chains and goes
// without the idle logger middleware, functions/composition/sdk-clients.ts), built with `localClientConfig`, less two
// SDK middlewares that do nothing on the local stack but cost CPU on every call (issue 37, bench/RESULTS.md):
// - getUserAgentMiddleware: builds and escapes the user-agent header, which no emulator reads;
// - recursionDetectionMiddleware: copies Lambda's X-Ray trace id (`_X_AMZN_TRACE_ID`), which no local run has.
// Both run inside a call (the `build` step), where the cost bench does not count a handler's own CPU: its estimate of a
// Lambda handler's time is the same with them or without. What a handler sends and reads is unchanged: the request's
// body, target, key and signature stamp are the same.
import { createAwsClients } from "../functions/composition/compose.ts";
import type { AwsClients } from "../functions/composition/compose.ts";
import { withCachedHandlers } from "../functions/composition/sdk-clients.ts";

export { withCachedHandlers };

/** The SDK middlewares the local stack's clients go without (each is what nothing local reads; the logger's already gone). */
export const LOCAL_SKIPPED_MIDDLEWARE = [
  "loggerMiddleware",
  "getUserAgentMiddleware",
  "recursionDetectionMiddleware",
] as const;

/** What a v3 client offers to drop middleware (a DocumentClient shares its base client's stack). */
type TrimmableClient = { readonly middlewareStack: { remove(name: string): boolean } };

/** `client` without the middlewares that do nothing locally (the same client, for chaining). */
export function trimmedForLocal<C extends TrimmableClient>(client: C): C {
  for (const name of LOCAL_SKIPPED_MIDDLEWARE) client.middlewareStack.remove(name);
  return client;
}

/** `createAwsClients(settings)` for local endpoints (settings from `localClientConfig`), each client trimmed. */
export function createLocalAwsClients(settings: Parameters<typeof createAwsClients>[0]): AwsClients {
  const clients = createAwsClients(settings);
  trimmedForLocal(clients.dynamo);
  trimmedForLocal(clients.sqs);
  trimmedForLocal(clients.events);
  return clients;
}
