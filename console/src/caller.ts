import { api, unwrap, type Schemas } from './api';
import { useLoad } from './ui';

export type Organization = Schemas['Organization'];
export type Scope = Organization['caller']['scopes'][number];

/**
 * The signed-in user's organization and what they may do in it (`caller`: their role and its
 * scopes), read once a sign-in: the navigation shows a member no admin page, and an admin page
 * opened by a member says it is for admins instead of failing with the API's 403.
 */
let organization: Promise<Organization> | null = null;

export function loadOrganization(): Promise<Organization> {
  organization ??= unwrap(api.GET('/v3/rest/organization')).catch((e: unknown) => {
    organization = null; // not kept: the next page asks again
    throw e;
  });
  return organization;
}

/** Signing out (or being signed out): the next user's organization and role are read afresh. */
export function forgetOrganization(): void {
  organization = null;
}

export function useOrganization() {
  return useLoad(loadOrganization, []);
}

/** Whether the signed-in user holds `scope`; undefined while it is not known yet. */
export function useCan(scope: Scope): boolean | undefined {
  const org = useOrganization();
  return org.data ? org.data.caller.scopes.includes(scope) : undefined;
}

/**
 * The organization's applications as [id, name] (filter options, and names instead of ids): admins
 * list them; null for members, who may not (nothing is asked then), and while loading.
 */
export function useApplicationOptions(): (readonly [string, string])[] | null {
  const admin = useCan('admin');
  const apps = useLoad(
    () => (admin ? unwrap(api.GET('/v3/rest/agent-applications', { params: { query: { limit: 100 } } })) : Promise.resolve(null)),
    [admin],
  );
  return apps.data ? apps.data.applications.map((a) => [a.applicationId, a.name] as const) : null;
}
