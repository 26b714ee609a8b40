// Counts AWS requests by service and operation with an SDK middleware, for the pipeline benchmark's
// "AWS requests per claim". The middleware sits after the SDK's retry middleware, so every HTTP
// attempt counts (SDK retries included), as AWS bills them.

/** Request counts: total, and per service (`DynamoDB`, `SQS`, `EventBridge`) per operation (`PutItem`, …). */
export type RequestCounts = {
  readonly total: number;
  readonly byService: Readonly<Record<string, Readonly<Record<string, number>>>>;
};

/** A request counter shared by any number of clients. */
type RequestCounter = {
  record(service: string, operation: string): void;
  /** A copy of the counts so far (service and operation names sorted). */
  snapshot(): RequestCounts;
  reset(): void;
};

/** A fresh counter. */
export function createRequestCounter(): RequestCounter {
  let counts = new Map<string, Map<string, number>>();
  let total = 0;
  return {
    record(service, operation) {
      total++;
      const ops = counts.get(service) ?? new Map<string, number>();
      ops.set(operation, (ops.get(operation) ?? 0) + 1);
      counts.set(service, ops);
    },
    snapshot() {
      const byService: Record<string, Record<string, number>> = {};
      for (const service of [...counts.keys()].sort()) {
        const ops: Record<string, number> = {};
        for (const op of [...counts.get(service)!.keys()].sort()) ops[op] = counts.get(service)!.get(op)!;
        byService[service] = ops;
      }
      return { total, byService };
    },
    reset() {
      counts = new Map();
      total = 0;
    },
  };
}

const MIDDLEWARE_NAME = "claimsRequestCounter";

/** Any SDK v3 client (a DynamoDBDocumentClient shares its base client's stack, so either works). */
type CountableClient = {
  readonly middlewareStack: {
    addRelativeTo(
      middleware: never,
      options: { name: string; relation: "before" | "after"; toMiddleware: string; override?: boolean },
    ): void;
    remove(toRemove: string): boolean;
  };
};

/** Service name from the SDK's client name: `DynamoDBClient` → `DynamoDB`. */
function serviceOf(clientName: unknown): string {
  return typeof clientName === "string" ? clientName.replace(/Client$/, "") : "unknown";
}

/** Operation name from the SDK's command name: `PutItemCommand` → `PutItem`. */
function operationOf(commandName: unknown): string {
  return typeof commandName === "string" ? commandName.replace(/Command$/, "") : "unknown";
}

/**
 * Adds the counting middleware to `client` (one counter per client; a second call replaces the first).
 * Returns a function that removes it.
 */
export function countRequests(client: CountableClient, counter: RequestCounter): () => void {
  const middleware =
    (next: (args: unknown) => Promise<unknown>, context: { clientName?: unknown; commandName?: unknown }) =>
    async (args: unknown) => {
      counter.record(serviceOf(context.clientName), operationOf(context.commandName));
      return next(args);
    };
  client.middlewareStack.addRelativeTo(middleware as never, {
    name: MIDDLEWARE_NAME,
    relation: "after",
    toMiddleware: "retryMiddleware",
    override: true,
  });
  return () => {
    client.middlewareStack.remove(MIDDLEWARE_NAME);
  };
}
