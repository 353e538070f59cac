// The entry of io/webhook/ for the wiring: the wake files' watch. The receiver's socket (server.ts) is loaded by
// src/main.ts only when `webhook serve` runs, so no other command pays for node:http.
export * from './wake.js';
