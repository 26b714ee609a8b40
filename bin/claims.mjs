#!/usr/bin/env node
// Entry point of the `claims` CLI: registers the TypeScript loader, then runs local/cli.ts.
import { register } from "tsx/esm/api";
register();
await import("../local/cli.ts");
