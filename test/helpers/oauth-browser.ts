/** A browser as far as this flow needs one: cookies by name, redirects followed by hand. */
export class Browser {
  private readonly cookies = new Map<string, string>();
  constructor(private readonly base: string) {}
  async go(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(new URL(path, this.base), { ...init, headers, redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const [name, ...value] = pair!.split('=');
      if (/expires=Thu, 01 Jan 1970/i.test(c)) this.cookies.delete(name!);
      else this.cookies.set(name!, value.join('='));
    }
    return res;
  }
  post(path: string, form: Record<string, string>): Promise<Response> {
    return this.go(path, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString() });
  }
  /** Follows redirects on this server; stops at the first one elsewhere (the client's redirect URI), or at a page. */
  async follow(res: Response): Promise<Response> {
    let r = res;
    while (r.status >= 300 && r.status < 400) {
      const to = new URL(r.headers.get('location')!, this.base);
      if (to.origin !== this.base) return r;
      r = await this.go(to.pathname + to.search);
    }
    return r;
  }
}

/** The form token of a sign-in or consent page. */
export const csrfOf = (html: string): string => /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';

/**
 * A user in a browser completing an authorization request: signs in on the login page, then
 * approves (or denies) on the consent page; returns where the server sent the browser back.
 */
export async function authorizeInBrowser(base: string, authorizationUrl: URL, user: { email: string; password: string }, decision: 'approve' | 'deny' = 'approve'): Promise<URL> {
  const browser = new Browser(base);
  const login = await browser.follow(await browser.go(authorizationUrl.pathname + authorizationUrl.search));
  const uid = new URL(login.url).pathname.split('/').pop()!;
  const consent = await browser.follow(await browser.post(`/oauth/interaction/${uid}/login`, { csrf: csrfOf(await login.text()), email: user.email, password: user.password }));
  if (consent.status !== 200) throw new Error(`sign-in failed: ${consent.status}`);
  const consentUid = new URL(consent.url).pathname.split('/').pop()!;
  const back = await browser.follow(await browser.post(`/oauth/interaction/${consentUid}/confirm`, { csrf: csrfOf(await consent.text()), decision }));
  return new URL(back.headers.get('location')!);
}
