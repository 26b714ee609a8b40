// The app's manifest, defined once and free of SST: the bus and its rule patterns (bus.ts), the resource links
// and IAM actions (links.ts), every function with its sizing and access (functions.ts), every queue with its
// consumer and event-source settings (queues.ts), and the HTTP routes (routes.ts). infra/ builds the SST
// components from these; functions/ reads its links by these names; local/ builds the embedded stack (queues,
// pollers, rules, HTTP front) from the same values. Nothing here may touch `sst`, `$app` or `aws` (lint-guarded):
// it runs in Lambda and locally too.
export * from "./bus.ts";
export * from "./links.ts";
export * from "./functions.ts";
export * from "./queues.ts";
export * from "./routes.ts";
