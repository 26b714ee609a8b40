#!/usr/bin/env node
// An example of the shop's order API that Claims Crew reads with ORDER_SOURCE=http (docs/orders.md): plain Node,
// no dependencies. It answers `GET /orders/{order_id}` with `Authorization: Bearer <token>`:
//   200 { order_id, purchase_date, category, amount, currency, customer_id?, payment_ref? } (or with lines and
//   shipping instead of category and amount), 404 unknown order,
//   401 a missing or wrong token. Your own system answers the same contract from its database.
//
//   ORDER_API_TOKEN=… node examples/order-server/server.mjs     # or ORDER_API_TOKEN_FILE=path
// Settings (environment): ORDER_API_TOKEN or ORDER_API_TOKEN_FILE (required, the same variables Claims Crew reads),
// PORT (default 4010; 0 = any free port), HOST (default 127.0.0.1), ORDERS_FILE (default orders.json beside this
// file), ORDER_SERVER_NOW (an ISO instant that relative dates such as "-3d" count from; default: now).
import { createHash, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import process from "node:process";
import { fileURLToPath, URL } from "node:url";

/** Fails the start with a message naming the setting, and no stack trace. */
function fail(message) {
  process.stderr.write(`order server: ${message}\n`);
  process.exit(2);
}

function readToken(env) {
  const direct = env.ORDER_API_TOKEN?.trim();
  if (direct) return direct;
  const file = env.ORDER_API_TOKEN_FILE?.trim();
  if (!file) fail("set ORDER_API_TOKEN, or ORDER_API_TOKEN_FILE to a file whose first line is the token");
  try {
    const token = readFileSync(file, "utf8").split(/\r?\n/)[0].trim();
    if (token === "") fail(`ORDER_API_TOKEN_FILE=${file}: its first line is empty`);
    return token;
  } catch (error) {
    fail(`ORDER_API_TOKEN_FILE=${file} cannot be read: ${error.message}`);
  }
}

/** "-3d" / "-36h" count back from `now`; anything else is returned as written (an ISO date). */
function resolveDate(value, now) {
  const m = /^-(\d+)([dh])$/.exec(String(value));
  if (!m) return value;
  return new Date(now - Number(m[1]) * (m[2] === "d" ? 86_400_000 : 3_600_000)).toISOString();
}

function loadOrders(file, now) {
  let data;
  try {
    data = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    fail(`ORDERS_FILE=${file} cannot be read as JSON: ${error.message}`);
  }
  if (!Array.isArray(data?.orders)) fail(`ORDERS_FILE=${file} must be {"orders": [ … ]}`);
  return new Map(data.orders.map((o) => [o.order_id, { ...o, purchase_date: resolveDate(o.purchase_date, now) }]));
}

const digest = (text) => createHash("sha256").update(text).digest();

function send(res, status, body, headers = {}) {
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store", ...headers });
  res.end(JSON.stringify(body));
}

const env = process.env;
const token = readToken(env);
const now = env.ORDER_SERVER_NOW ? Date.parse(env.ORDER_SERVER_NOW) : Date.now();
if (Number.isNaN(now)) fail(`ORDER_SERVER_NOW=${env.ORDER_SERVER_NOW} is not an ISO instant`);
const ordersFile = env.ORDERS_FILE || fileURLToPath(new URL("orders.json", import.meta.url));
const orders = loadOrders(ordersFile, now);
const expected = digest(`Bearer ${token}`);

const server = createServer((req, res) => {
  const { pathname } = new URL(req.url ?? "/", "http://localhost");
  const match = /^\/orders\/([^/]+)$/.exec(pathname);
  if (!match) return send(res, 404, { error: "not found" });
  if (req.method !== "GET") return send(res, 405, { error: "method not allowed" }, { allow: "GET" });
  // Compare digests in constant time: the answer never tells how much of a wrong token was right.
  if (!timingSafeEqual(digest(req.headers.authorization ?? ""), expected))
    return send(res, 401, { error: "missing or wrong bearer token" }, { "www-authenticate": "Bearer" });
  let orderId;
  try {
    orderId = decodeURIComponent(match[1]);
  } catch {
    return send(res, 404, { error: "no such order" });
  }
  const order = orders.get(orderId);
  if (!order) return send(res, 404, { error: "no such order" });
  send(res, 200, order);
});

server.listen(Number(env.PORT ?? 4010), env.HOST || "127.0.0.1", () => {
  const { address, port } = server.address();
  process.stdout.write(
    `order server listening on http://${address}:${port} (${orders.size} orders from ${ordersFile})\n`,
  );
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.close(() => process.exit(0)));
