// The AWS SDK clients the local stack's handlers use: the production clients of functions/composition (the same
// serialization, sealing, retries, deserialization and errors), built with `localClientConfig`, less three SDK
// middlewares that do nothing on the local stack but cost CPU on every call (issue 37, bench/RESULTS.md):
// - loggerMiddleware: the SDK's default logger logs nothing, yet the middleware filters every input and output
//   through the operation's schema (schemaLogFilter) to hand them to it;
// - getUserAgentMiddleware: builds and escapes the user-agent header, which no emulator reads;
// - recursionDetectionMiddleware: copies Lambda's X-Ray trace id (`_X_AMZN_TRACE_ID`), which no local run has.
// What a handler sends and reads is unchanged: the request's body, target, key and signature stamp are the same.
import { createAwsClients } from "../functions/composition/compose.ts";
import type { AwsClients } from "../functions/composition/compose.ts";

/** The SDK middlewares the local stack's clients go without (each is what nothing local reads). */
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
