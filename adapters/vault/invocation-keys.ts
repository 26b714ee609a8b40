// A subject's key state remembered for the rest of one handler invocation (issue 37: 45 key-item reads per claim on
// AWS, 5 distinct (invocation, claim) pairs). Each handler invocation runs in a scope of its own (AsyncLocalStorage:
// concurrent invocations never share one); a store wrapped by `rememberedPerInvocation` answers a subject's second
// lookup in the scope from the first, and forgets everything when the invocation ends. So an erasure made elsewhere
// holds from the next invocation on; one made through the store in this invocation holds at once. Outside a scope
// (a CLI command, a test), every lookup reaches the store, as before.
import { AsyncLocalStorage } from "node:async_hooks";
import type { DataKeyState, DataKeyStore } from "./envelope.ts";

type Scope = {
  readonly memos: Map<DataKeyStore, Map<string, Promise<DataKeyState>>>;
  /** False once the invocation has ended: work it left running (a timer, a lazily started loop) reads the store. */
  open: boolean;
  /** Opened by `openingSqsHandler` for the handler it wraps: that handler's own wrapper takes it instead of a new one. */
  handOn: boolean;
};

const scopes = new AsyncLocalStorage<Scope>();

/**
 * Runs `run` as one invocation: the key states read in it are remembered until it ends. With `handOn`, the next
 * handler wrapper inside takes this scope as its own (the SQS opening and the handler it wraps are one invocation);
 * any other wrapper inside opens a scope of its own (a handler called by another one is another invocation).
 */
export async function inKeyInvocation<T>(run: () => Promise<T>, opts: { handOn?: boolean } = {}): Promise<T> {
  const current = scopes.getStore();
  if (current?.open && current.handOn) {
    current.handOn = opts.handOn ?? false;
    return run();
  }
  const scope: Scope = { memos: new Map(), open: true, handOn: opts.handOn ?? false };
  try {
    return await scopes.run(scope, run);
  } finally {
    scope.open = false;
    scope.memos.clear();
  }
}

/** `handler`, each call run as one invocation ({@link inKeyInvocation}). */
export function keyInvocationHandler<A extends unknown[], R>(
  handler: (...args: A) => Promise<R>,
  opts: { handOn?: boolean } = {},
): (...args: A) => Promise<R> {
  return (...args) => inKeyInvocation(() => handler(...args), opts);
}

/**
 * `store`, its answers remembered per subject for the rest of the invocation they were read in (a key or a
 * tombstone; "none" is read again, since a later lookup may make the key). Lookups of one subject running together
 * share one read. Destroying through it is seen at once in its invocation.
 */
export function rememberedPerInvocation(store: DataKeyStore): DataKeyStore {
  const memoOf = (): Map<string, Promise<DataKeyState>> | undefined => {
    const scope = scopes.getStore();
    if (!scope?.open) return undefined;
    let memo = scope.memos.get(store);
    if (memo === undefined) {
      memo = new Map();
      scope.memos.set(store, memo);
    }
    return memo;
  };
  return {
    async key(subject, opts) {
      const memo = memoOf();
      if (memo === undefined) return store.key(subject, opts);
      const known = memo.get(subject);
      if (known !== undefined) {
        const state = await known;
        if (state.state !== "none") return state;
      }
      const read = store.key(subject, opts);
      memo.set(subject, read);
      try {
        const state = await read;
        if (state.state === "none" && memo.get(subject) === read) memo.delete(subject);
        return state;
      } catch (error) {
        if (memo.get(subject) === read) memo.delete(subject);
        throw error;
      }
    },
    async destroy(subject) {
      const memo = memoOf();
      memo?.delete(subject);
      const outcome = await store.destroy(subject);
      memo?.set(subject, Promise.resolve({ state: "erased" }));
      return outcome;
    },
  };
}
