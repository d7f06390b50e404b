import { createIntakeClient, IntakeError, unwrap } from '../../clients/typescript/src/client';
import type { components, operations } from '../../clients/typescript/src/schema';
import { accessToken, forgetTokens } from './auth';

/**
 * The public REST API through the typed client (clients/typescript), the console's one way to the
 * data: every request carries the signed-in user's access token.
 */
export const api = createIntakeClient({ baseUrl: location.origin });
api.use({
  async onRequest({ request }) {
    const token = await accessToken();
    if (token) request.headers.set('Authorization', `Bearer ${token}`);
    return request;
  },
  async onResponse({ response }) {
    // Revoked or expired beyond refresh: the next render asks to sign in. (Not every 401 is about the
    // token: `recording_not_allowed` is the organization's setting, and signing out would not help.)
    if (response.status === 401) {
      const body = (await response
        .clone()
        .json()
        .catch(() => ({}))) as { errorCode?: string };
      if (body.errorCode !== 'recording_not_allowed') {
        forgetTokens();
        window.dispatchEvent(new Event('intake:signed-out'));
      }
    }
    return response;
  },
});

export { IntakeError, unwrap };
export type Schemas = components['schemas'];
/** The JSON answer of an operation (its 200 unless named). */
export type Answer<
  O extends keyof operations,
  S extends keyof operations[O]['responses'] = 200 & keyof operations[O]['responses'],
> = operations[O]['responses'][S] extends {
  content: { 'application/json': infer T };
}
  ? T
  : never;
/** The JSON body an operation takes. */
export type Body<O extends keyof operations> = operations[O] extends { requestBody?: { content: { 'application/json': infer T } } }
  ? T
  : never;

/** A failure as the user reads it: the API's message (and its code), or the thrown error's. */
export function describeError(error: unknown): string {
  if (error instanceof IntakeError) {
    const fields = error.errors?.map((e) => `${e.path}: ${e.message}`).join('; ');
    return `${error.message}${fields ? ` (${fields})` : ''} [${error.errorCode}]`;
  }
  return error instanceof Error ? error.message : String(error);
}
