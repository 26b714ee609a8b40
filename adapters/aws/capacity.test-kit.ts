// Test support: the DynamoDB capacity a piece of code consumes, as the emulator reports it with
// `ReturnConsumedCapacity` (dynalite bills a write by the larger of the old and the new item, like AWS).
// A failed conditional write is billed like AWS does (≥ 1 WRU; the emulator reports nothing).

/** Write and read units and requests per operation of one measured run. */
export type Capacity = { wru: number; rru: number; requests: Record<string, number>; wruByKey: Record<string, number> };

type Loose = Record<string, unknown>;
type Stack = {
  middlewareStack: {
    add(mw: never, options: { step: "initialize"; name: string; override?: boolean }): void;
    remove(name: string): boolean;
  };
};

const READS = new Set(["GetItem", "Query", "Scan", "BatchGetItem"]);

const units = (output: Loose): number => {
  const cc = output.ConsumedCapacity;
  const list = Array.isArray(cc) ? cc : cc === undefined ? [] : [cc];
  return list.reduce<number>((n, c) => n + (Number((c as Loose).CapacityUnits) || 0), 0);
};

/** Runs `f` with every request of `client` measured; returns its result and the capacity consumed. */
export async function measureCapacity<T>(
  client: Stack,
  f: () => Promise<T>,
): Promise<{ result: T; capacity: Capacity }> {
  const capacity: Capacity = { wru: 0, rru: 0, requests: {}, wruByKey: {} };
  const name = "testCapacityMeter";
  const middleware =
    (next: (args: { input: Loose }) => Promise<{ output: Loose }>, context: { commandName?: string }) =>
    async (args: { input: Loose }) => {
      const operation = (context.commandName ?? "unknown").replace(/Command$/, "");
      capacity.requests[operation] = (capacity.requests[operation] ?? 0) + 1;
      const input: Loose = { ...args.input, ReturnConsumedCapacity: "TOTAL" };
      const key = (input.Key ?? input.Item) as Loose | undefined;
      const label = key ? `${operation} ${String(key.sk)}` : operation;
      try {
        const out = await next({ ...args, input });
        const n = units(out.output ?? {});
        if (READS.has(operation)) capacity.rru += n;
        else {
          capacity.wru += n;
          capacity.wruByKey[label] = (capacity.wruByKey[label] ?? 0) + n;
        }
        return out;
      } catch (error) {
        if ((error as { name?: string }).name === "ConditionalCheckFailedException") {
          capacity.wru += 1;
          capacity.wruByKey[label] = (capacity.wruByKey[label] ?? 0) + 1;
        }
        throw error;
      }
    };
  client.middlewareStack.add(middleware as never, { step: "initialize", name, override: true });
  try {
    return { result: await f(), capacity };
  } finally {
    client.middlewareStack.remove(name);
  }
}
