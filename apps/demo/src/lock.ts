/**
 * Every stack's transport lock (and so the worker's processing lease): short, so a SIGKILLed
 * worker's messages come back quickly.
 */
export const DEMO_LOCK_MS = 1500;
