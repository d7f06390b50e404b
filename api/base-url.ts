import type { AppContext, AppDeps } from './context.js';

/** The service's public URL: PUBLIC_BASE_URL, or the scheme and host the request came to. */
export function publicBaseUrl(deps: AppDeps, ctx: AppContext): string {
  return (deps.config.http.publicBaseUrl || `${ctx.protocol}://${ctx.host}`).replace(/\/$/, '');
}
