// The AWS SDK clients' per-call work that does nothing on AWS or locally, cut from every client the functions build
// (functions/composition/compose.ts `createAwsClients`; the local stack's clients are the same, trimmed further):
// - the resolved middleware chain is kept per command class (`withCachedHandlers`): the SDK built it again for every
//   call (clone, sort and compose of ~20 middlewares), about a third of a call's CPU (bench/RESULTS.md, i37p);
// - `loggerMiddleware` goes when the client has no logger of its own (`withoutIdleLogger`): the SDK's default logger
//   logs nothing, yet the middleware ran the operation's log filters over every input and output to hand them to it.
// What a call sends and reads is unchanged: its body, target, key, signature, retries, user agent and trace header.

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

/** A client's stack and config, as far as `withoutIdleLogger` reads them. */
type LoggingClient = { readonly middlewareStack: { remove(name: string): boolean } };

/**
 * `client` without the SDK's `loggerMiddleware` when `logger` (the client's configured logger) is undefined: the SDK
 * then logs to a logger that discards everything, after filtering each call's input and output for it.
 */
export function withoutIdleLogger<C extends LoggingClient>(client: C, logger: unknown): C {
  if (logger === undefined) client.middlewareStack.remove("loggerMiddleware");
  return client;
}
