// A subject's key state remembered for the rest of one handler invocation (issue 37: 45 key-item reads per claim on
// AWS, 5 distinct (invocation, claim) pairs). Each handler invocation runs in a scope of its own (AsyncLocalStorage:
// concurrent invocations never share one); a store wrapped by `rememberedPerInvocation` answers a subject's second
// lookup in the scope from the first, and forgets everything when the invocation ends. So an erasure made elsewhere
// holds from the next invocation on; one made through the store in this invocation holds at once. Outside a scope
// (a CLI command, a test), every lookup reaches the store, as before. A subject the invocation made itself (a claim id
// its id source just drew: {@link newSubjectInInvocation}) has no key anywhere yet, so the store is asked to make it
// without reading first (`fresh`: kms-keys.ts puts the key and reads only when the put loses).
import { AsyncLocalStorage } from "node:async_hooks";
import type { DataKeyState, DataKeyStore } from "./envelope.ts";

/**
 * A key lookup as a store may take it: with `fresh`, the caller knows the subject is new (no key, no tombstone), so a
 * store that can make a key without reading first does (a lookup whose subject turns out to exist still finds it).
 */
export type KeyLookup = { create: boolean; fresh?: boolean };

type Scope = {
  readonly memos: Map<DataKeyStore, Map<string, Promise<DataKeyState>>>;
  /** False once the invocation has ended: work it left running (a timer, a lazily started loop) reads the store. */
  open: boolean;
  /** Opened by `openingSqsHandler` for the handler it wraps: that handler's own wrapper takes it instead of a new one. */
  handOn: boolean;
  /** Subjects this invocation drew itself (new random claim ids), until their key is first looked up. */
  readonly fresh: Set<string>;
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
  const scope: Scope = { memos: new Map(), open: true, handOn: opts.handOn ?? false, fresh: new Set() };
  try {
    return await scopes.run(scope, run);
  } finally {
    scope.open = false;
    scope.memos.clear();
    scope.fresh.clear();
  }
}

/**
 * Tells the current invocation that `subject` is new: an id it just drew at random (functions/composition/compose.ts's
 * id source), so no key and no tombstone exist for it. Its first lookup that may make the key asks the store for a
 * fresh one (one write, no read). Outside an invocation: nothing.
 */
export function newSubjectInInvocation(subject: string): void {
  const scope = scopes.getStore();
  if (scope?.open) scope.fresh.add(subject);
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
    async key(subject, opts: KeyLookup) {
      const memo = memoOf();
      if (memo === undefined) return store.key(subject, opts);
      const known = memo.get(subject);
      if (known !== undefined) {
        const state = await known;
        if (state.state !== "none") return state;
      }
      const fresh = opts.create && scopes.getStore()!.fresh.delete(subject);
      const lookup: KeyLookup = fresh ? { create: true, fresh: true } : opts;
      const read = store.key(subject, lookup);
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
