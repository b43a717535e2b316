// The one name the README's Quick start leaves to the reader: the application's own side effect.
declare function fulfil(
  payment: { id: string; amount: number },
  options: { idempotencyKey: string },
): Promise<void>;
