// The entry of `claims serve`'s handler thread (handler-thread.ts): a worker does not inherit the TypeScript loader
// the CLI registered, so it registers its own (as bin/claims.mjs does), then runs handler-worker.ts.
const { register } = await import("tsx/esm/api");
register();
await import("./handler-worker.ts");
