// dynalite (the local DynamoDB) in a worker thread, so its request handling and LevelDB work run beside
// the handlers' event loop instead of on it (local/emulators.ts). Plain JavaScript: a worker does not
// inherit the main thread's TypeScript loader. Messages: in { path? } via workerData; out { port } or
// { error }; "stop" closes the server and its database, then answers "stopped".
import { parentPort, workerData } from "node:worker_threads";
import dynalite from "dynalite";

const path = workerData?.path;
// LevelDB appends every write to its log before dynalite answers, so an acknowledged write survives `kill -9`.
const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0, ...(path === undefined ? {} : { path }) });
server.once("error", (error) => parentPort.postMessage({ error: error instanceof Error ? error.message : String(error) }));
server.listen(0, "127.0.0.1", () => parentPort.postMessage({ port: server.address().port }));
parentPort.on("message", (message) => {
  if (message !== "stop") return;
  server.close((error) => parentPort.postMessage(error ? { error: error.message } : "stopped"));
  // Keep-alive sockets of SDK clients would hold close() open.
  server.closeAllConnections();
});
