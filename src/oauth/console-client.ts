/**
 * The web console (issue 36, decision 0205): a first-party public client, configured in the
 * authorization server rather than registered, the one client whose tokens are for the REST API.
 * Its user acts with the scopes of their role, as with the CLI's tokens, and sees no consent page
 * (Intake's own console asks for nothing beyond what the user may do). Its grant is listed and
 * revoked as any other (`/v3/rest/me/grants`).
 */
export const CONSOLE_CLIENT_ID = 'intake-console';
export const CONSOLE_CLIENT_NAME = 'Intake console';
/** The console's one scope: act in the REST API as the signed-in user. */
export const CONSOLE_SCOPE = 'console';
/** Where the console takes its authorization code (under `/console`, which the API serves). */
export const CONSOLE_CALLBACK_PATH = '/console/callback';

/** `<issuer>/v3/rest`: the REST API as a resource (RFC 8707), for the console's tokens alone. */
export function restResource(issuer: string): string {
  return `${issuer}/v3/rest`;
}
