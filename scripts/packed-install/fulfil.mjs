// Preloaded (`node --import`) into the README's Quick start: `fulfil` reports each call to the
// parent process, which counts them.
globalThis.fulfil = async (payment, options) => {
  process.send?.({ fulfilled: payment, idempotencyKey: options.idempotencyKey });
};
