// The operator console: a Fetch handler and a node:http handler under a base path
export { type OnceflowConsole, createConsole } from './create-console.js';
export type { ConsoleAuth, ConsoleOptions } from './options.js';
