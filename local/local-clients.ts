// The AWS SDK clients the local stack's handlers use: the production clients of functions/composition (the same
// serialization, sealing, retries, deserialization and errors), built with `localClientConfig`, less three SDK
// middlewares that do nothing on the local stack but cost CPU on every call (issue 37, bench/RESULTS.md):
// - loggerMiddleware: the SDK's default logger logs nothing, yet the middleware filters every input and output
//   through the operation's schema (schemaLogFilter) to hand them to it;
// - getUserAgentMiddleware: builds and escapes the user-agent header, which no emulator reads;
// - recursionDetectionMiddleware: copies Lambda's X-Ray trace id (`_X_AMZN_TRACE_ID`), which no local run has.
// What a handler sends and reads is unchanged: the request's body, target, key and signature stamp are the same.
// Each client also keeps its resolved middleware chain per command class (`withCachedHandlers`): the SDK built the
// chain again for every call (clone, sort and compose of ~20 middlewares), about a third of a call's CPU.
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

/** A resolved middleware chain: called with a command (its `input`), answers `{ output }`. */
type Handler = (command: unknown) => Promise<{ output: unknown }>;

/** A DocumentClient command (lib-dynamodb): its marshalling middlewares go on the low-level command it wraps. */
type DocumentCommand = {
  readonly clientCommand: { resolveMiddleware(stack: unknown, config: unknown, options: undefined): Handler };
  readonly middlewareStack: unknown;
  addMarshallingMiddleware(config: unknown): void;
};

/** What `withCachedHandlers` needs of a v3 client (a DocumentClient included). */
type CachingClient = { readonly config: unknown; readonly middlewareStack: object };

/** The stack methods that change what a chain holds: any of them drops the kept chains. */
const STACK_CHANGES = ["add", "addRelativeTo", "remove", "removeByTag", "use"] as const;

/**
 * `client` keeping the resolved middleware chain of each command class it sent, as the SDK's own `cacheMiddleware`
 * option does (which lib-dynamodb refuses): the SDK otherwise clones, sorts and composes the client's and the
 * command's middlewares for every call. A call with options (an abort signal) resolves its own chain as before; a
 * change to the client's stack (a test's fault, a bench's counter) drops every kept chain. What each middleware does
 * per call is unchanged; the chain's context object is shared by the calls of one class, as with `cacheMiddleware`
 * (what the local clients' middlewares write there is the same for every call: endpoint, signing scheme, features).
 */
export function withCachedHandlers<C extends CachingClient>(client: C): C {
  let chains = new WeakMap<object, Handler>();
  const stack = client.middlewareStack as { concat(other: unknown): unknown } & Record<string, unknown>;
  for (const name of STACK_CHANGES) {
    const change = stack[name];
    if (typeof change !== "function") continue;
    stack[name] = (...args: unknown[]) => {
      chains = new WeakMap();
      return (change as (...a: unknown[]) => unknown).apply(stack, args);
    };
  }
  const own = client as unknown as { send(...args: unknown[]): Promise<unknown> };
  const send = own.send.bind(client);
  const cached = (command: { constructor: object } & Partial<DocumentCommand>, ...rest: unknown[]) => {
    if (rest.some((r) => r !== undefined)) return send(command, ...rest);
    const document = typeof command.addMarshallingMiddleware === "function" && command.clientCommand !== undefined;
    let chain = chains.get(command.constructor);
    if (chain === undefined) {
      if (document) {
        // What DynamoDBDocumentClientCommand.resolveMiddleware does, keeping the low-level command's chain.
        const doc = command as DocumentCommand;
        doc.addMarshallingMiddleware(client.config);
        chain = doc.clientCommand.resolveMiddleware(stack.concat(doc.middlewareStack), client.config, undefined);
      } else
        chain = (
          command as unknown as { resolveMiddleware(s: unknown, c: unknown, o: undefined): Handler }
        ).resolveMiddleware(stack, client.config, undefined);
      chains.set(command.constructor, chain);
    }
    return chain(document ? (command as DocumentCommand).clientCommand : command).then((result) => result.output);
  };
  own.send = cached as typeof own.send;
  return client;
}

/** `createAwsClients(settings)` for local endpoints (settings from `localClientConfig`), each client trimmed and keeping its chains. */
export function createLocalAwsClients(settings: Parameters<typeof createAwsClients>[0]): AwsClients {
  const clients = createAwsClients(settings);
  withCachedHandlers(trimmedForLocal(clients.dynamo));
  withCachedHandlers(trimmedForLocal(clients.sqs));
  withCachedHandlers(trimmedForLocal(clients.events));
  return clients;
}
