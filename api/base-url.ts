import type { AppContext, AppDeps } from './context.js';

/**
 * The service's public URL: PUBLIC_BASE_URL (required in production), or in development the scheme
 * and Host the request came with (X-Forwarded-Proto and -Host only with TRUST_PROXY).
 */
export function publicBaseUrl(deps: AppDeps, ctx: AppContext): string {
  return (deps.config.http.publicBaseUrl || `${ctx.protocol}://${ctx.host}`).replace(/\/$/, '');
}
