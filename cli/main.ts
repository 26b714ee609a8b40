// The `claims` CLI (docs/cli.md): runs the program of cli/program.ts on the command line. bin/claims.mjs runs it
// compiled (dist/cli/main.js).
import { runCli } from "./program.ts";

// Everything the CLI writes (the data directory's runs, store, journals, credentials, reports) is owner-only.
process.umask(0o077);
await runCli(process.argv.slice(2));
