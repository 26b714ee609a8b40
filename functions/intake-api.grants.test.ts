// The intake API's IAM grant is exactly what it calls: every DynamoDB operation its routes send on the local stack
// (recorded by an SDK middleware for the requests made on behalf of the intake handler only) is among the actions
// app/manifest.ts grants intakeApi on the table, and the narrowed grant leaves out what it never sends.
import { AsyncLocalStorage } from "node:async_hooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiEvent, startTestStack } from "../local/testing/stack-fixture.ts";
import { FUNCTIONS, LINKS } from "../app/manifest.ts";

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
const caller = new AsyncLocalStorage<string>();
const sent = new Set<string>();

beforeAll(async () => {
  stack = await startTestStack();
  stack.clients.dynamo.middlewareStack.add(
    (next, context) => (args) => {
      if (caller.getStore() === "intakeApi")
        sent.add(`dynamodb:${String(context.commandName).replace(/Command$/, "")}`);
      return next(args);
    },
    { step: "initialize", name: "recordIntakeCalls" },
  );
});
afterAll(() => stack?.stop());

const call = (method: string, path: string, init: Parameters<typeof apiEvent>[2] = {}) =>
  caller.run("intakeApi", () => stack.handlers.intakeApi(apiEvent(method, path, init)));

describe("the intake API's table grant", () => {
  it("covers every DynamoDB call of every intake route, and holds nothing it does not call", async () => {
    const claim = { order_id: "ord_001", amount_eur: 299.99, category: "electronics", reason: "Screen is dead" };
    const json = (body: unknown, headers: Record<string, string> = {}) => ({
      body: JSON.stringify(body),
      headers: { "content-type": "application/json", ...headers },
    });
    const first = await call("POST", "/claims", json({ claim }, { "idempotency-key": "k-1" }));
    expect(first.statusCode).toBe(202);
    // The same key again (a replay), and a key whose claim id an unrelated claim holds is released (DeleteItem).
    expect((await call("POST", "/claims", json({ claim }, { "idempotency-key": "k-1" }))).statusCode).toBeLessThan(300);
    expect(
      (await call("POST", "/claims", json({ claim_text: "order ord_002, 1200 EUR, arrived broken" }))).statusCode,
    ).toBe(202);
    const id = JSON.parse(String(first.body)).claim_id as string;
    await stack.drained();
    for (const path of [`/claims/${id}`, "/claims", "/claims?status=DECIDED", "/reports", "/openapi.json"])
      expect((await call("GET", path)).statusCode, path).toBeLessThan(500);
    // The unconditional grant, and DeleteItem on idempotency keys' items only (its one use).
    const granted = new Set<string>([
      ...FUNCTIONS.intakeApi.access[LINKS.table],
      ...FUNCTIONS.intakeApi.scoped.flatMap((g) => g.actions),
    ]);
    expect([...sent].filter((a) => !granted.has(a))).toEqual([]);
    // What it reads and writes: claims (conditional put, update), their idempotency keys, the views.
    expect([...sent]).toEqual(expect.arrayContaining(["dynamodb:PutItem", "dynamodb:GetItem", "dynamodb:Query"]));
    expect(granted.has("dynamodb:BatchWriteItem")).toBe(false);
    expect(granted.has("dynamodb:UpdateItem")).toBe(false);
  });
});
