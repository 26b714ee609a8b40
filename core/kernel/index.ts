// Barrel of the kernel's money primitives: money, orders, the refund ledger and the customer window.
export * from "./money.ts";
export * from "./orders.ts";
export * from "./ledger.ts";
export * from "./customer-window.ts";
