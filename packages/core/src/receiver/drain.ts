/**
 * Counts the requests a receiver is answering and, once draining, turns new ones away. Touched
 * from request callbacks on one thread only.
 */
export interface RequestGate {
  /** Requests being answered now. */
  readonly inFlight: number;
  readonly draining: boolean;
  /** Counts one more request as in flight; each `enter` is followed by one `leave`. */
  enter(): void;
  /** Counts one request as answered; resolves `drain()` once none is left. */
  leave(): void;
  /** Starts draining; resolves once no request is in flight. Idempotent. */
  drain(): Promise<void>;
}

/**
 * A class, so that `inFlight` and `draining` are prototype getters: an object literal with its
 * own getters is a dictionary-mode object, slower to read on every request.
 */
class Gate implements RequestGate {
  #inFlight = 0;
  #draining = false;
  #waiters: (() => void)[] = [];

  get inFlight(): number {
    return this.#inFlight;
  }

  get draining(): boolean {
    return this.#draining;
  }

  enter(): void {
    this.#inFlight++;
  }

  leave(): void {
    this.#inFlight--;
    if (this.#inFlight > 0 || this.#waiters.length === 0) return;
    const done = this.#waiters;
    this.#waiters = [];
    for (const resolve of done) resolve();
  }

  drain(): Promise<void> {
    this.#draining = true;
    if (this.#inFlight === 0) return Promise.resolve();
    return new Promise<void>((resolve) => this.#waiters.push(resolve));
  }
}

export function createRequestGate(): RequestGate {
  return new Gate();
}
