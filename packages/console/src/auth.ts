import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ResolvedConsoleOptions } from './options.js';

export const SESSION_COOKIE = 'onceflow_console';

/** Who is looking, and the CSRF token their forms must carry. */
export interface Operator {
  /** Recorded in each acted-on record's history as `console:<name>`. */
  readonly name: string;
  readonly csrf: string;
}

function same(a: string, b: string): boolean {
  const x = createHmac('sha256', 'compare').update(a).digest();
  const y = createHmac('sha256', 'compare').update(b).digest();
  return timingSafeEqual(x, y);
}

function hostOf(origin: string): string | undefined {
  try {
    return new URL(origin).host;
  } catch {
    return undefined; // `null` and anything unparsable: not this host
  }
}

function cookie(request: Request, name: string): string | undefined {
  for (const part of (request.headers.get('cookie') ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return decodeURIComponent(v.join('='));
  }
  return undefined;
}

/**
 * Authentication and CSRF. A token session's cookie holds a MAC of the token, never the token.
 * A form's CSRF token is a MAC of the operator's name under the console's secret; an action is
 * accepted only with that token and, when the browser sends them, a same-origin `Origin` or
 * `Sec-Fetch-Site`.
 */
export function createAuth(options: ResolvedConsoleOptions) {
  const secret = options.secret ?? randomBytes(32).toString('hex');
  const mac = (text: string) => createHmac('sha256', secret).update(text).digest('base64url');
  const auth = options.auth;
  const sessionValue = 'token' in auth ? mac(`session:${auth.token}`) : undefined;

  async function identify(request: Request): Promise<Operator | undefined> {
    let name: string | undefined;
    if ('token' in auth) {
      const bearer = /^Bearer (.+)$/.exec(request.headers.get('authorization') ?? '')?.[1];
      const session = cookie(request, SESSION_COOKIE);
      const ok =
        (bearer !== undefined && same(bearer, auth.token)) ||
        (session !== undefined && sessionValue !== undefined && same(session, sessionValue));
      name = ok ? (auth.operator ?? 'operator') : undefined;
    } else {
      name = await auth.authorize(request);
    }
    return name === undefined ? undefined : { name, csrf: mac(`csrf:${name}`) };
  }

  return {
    identify,
    /** For the sign-in form: the cookie to set when `token` is right. */
    signIn(token: string): string | undefined {
      if (!('token' in auth) || !same(token, auth.token) || sessionValue === undefined)
        return undefined;
      return `${SESSION_COOKIE}=${sessionValue}; Path=${options.basePath || '/'}; HttpOnly; SameSite=Strict`;
    },
    signOut: () =>
      `${SESSION_COOKIE}=; Path=${options.basePath || '/'}; Max-Age=0; HttpOnly; SameSite=Strict`,
    /** True when the form's token is the operator's and the request is not cross-site. */
    checkCsrf(request: Request, operator: Operator, form: URLSearchParams): boolean {
      const site = request.headers.get('sec-fetch-site');
      if (site !== null && site !== 'same-origin' && site !== 'none') return false;
      // Host only: behind a TLS-terminating proxy the scheme the app sees is not the browser's.
      const origin = request.headers.get('origin');
      if (origin !== null && hostOf(origin) !== new URL(request.url).host) return false;
      return same(form.get('_csrf') ?? '', operator.csrf);
    },
  };
}

export type ConsoleAuthGate = ReturnType<typeof createAuth>;
