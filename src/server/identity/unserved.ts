// In charge of what the identity API answers when no route serves a request, as GoTrue's router
// does: a path it serves, asked with another method, is 405 with an empty body and the methods it
// does serve in `Allow`; HEAD is one of those methods (GoTrue's router does not answer HEAD with
// GET, and a HEAD from a link scanner must not spend a one-time link); an unknown path is 404.
import type { MiddlewareHandler } from 'hono';

interface ServedPattern {
  segments: string[];
  methods: Set<string>;
}

/** The methods each route pattern serves, learned from the app's route table once it is complete. */
export class ServedMethods {
  private patterns: ServedPattern[] = [];

  /** `basePath`: where the app is mounted; its route patterns are matched below it. */
  constructor(private readonly basePath: string) {}

  learn(routes: readonly { method: string; path: string }[]): void {
    const byPath = new Map<string, Set<string>>();
    for (const route of routes) {
      // 'ALL' entries are middleware or catch-alls that answer every method themselves.
      if (route.method === 'ALL' || route.path.includes('*')) continue;
      const methods = byPath.get(route.path) ?? new Set<string>();
      methods.add(route.method);
      byPath.set(route.path, methods);
    }
    this.patterns = [...byPath].map(([path, methods]) => ({ segments: path.split('/'), methods }));
  }

  /**
   * The methods served for a request path (the base is taken off), from every pattern it matches:
   * a fixed path such as /user/identities/authorize is also served by /user/identities/:id.
   */
  allowFor(requestPath: string): string[] {
    const below = requestPath.startsWith(this.basePath)
      ? requestPath.slice(this.basePath.length)
      : requestPath;
    const segments = (below || '/').split('/');
    const allowed = new Set<string>();
    for (const pattern of this.patterns) {
      if (pattern.segments.length !== segments.length) continue;
      const matches = pattern.segments.every(
        (part, i) => part === segments[i] || (part.startsWith(':') && segments[i] !== ''),
      );
      if (matches) for (const method of pattern.methods) allowed.add(method);
    }
    return [...allowed];
  }
}

function methodNotAllowed(allow: string[]): Response {
  return new Response(null, { status: 405, headers: { allow: allow.join(', ') } });
}

/**
 * First in the chain: Hono would answer HEAD with the GET route, which for /verify, /callback and
 * /authorize has effects. A HEAD on a served path is 405; on an unknown one it goes on to the 404.
 */
export function refuseHead(served: ServedMethods): MiddlewareHandler {
  return async (c, next) => {
    if (c.req.method === 'HEAD') {
      const allow = served.allowFor(c.req.path);
      if (allow.length > 0) return methodNotAllowed(allow);
    }
    await next();
  };
}

/** Last in the chain: 405 for a served path asked with another method, else the given 404. */
export function answerUnserved(served: ServedMethods, notFound: () => Response): MiddlewareHandler {
  return async (c) => {
    const allow = served.allowFor(c.req.path);
    return allow.length > 0 ? methodNotAllowed(allow) : notFound();
  };
}
