/** The sign-in and consent pages: plain HTML, no script and no external asset. */

const SCOPE_TEXT: Record<string, string> = {
  'projects:read': 'Read your projects and the agent sessions associated with them',
  'sessions:upload': 'Upload coding-agent sessions on your behalf',
  'sessions:associate': 'Create projects and associate agent sessions with them',
};

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** The pages' headers: nothing loads from elsewhere, forms post only here, no framing (clickjacking). */
export const PAGE_HEADERS = pageHeaders([]);

/**
 * A CSV source for where a page's form may end up: browsers apply `form-action` to the redirects
 * after a form is sent too, so the sign-in and consent pages name the client's redirect URI (its
 * origin, or its custom scheme) and the identity provider. Null: not expressible (never widened).
 */
export function formTarget(uri: string): string | null {
  if (!URL.canParse(uri)) return null;
  const url = new URL(uri);
  if (url.protocol === 'http:' || url.protocol === 'https:') {
    // A host name may hold characters that mean something in a policy (`;`, `,`, `*`, `'`): only plain ones are named.
    if (/^[a-z0-9.-]+$/.test(url.hostname)) return url.origin;
    // CSP cannot spell an IPv6 address: a native client's [::1] loopback gets the plain-HTTP scheme source.
    return url.protocol === 'http:' && url.hostname === '[::1]' ? 'http:' : null;
  }
  return /^[a-z][a-z0-9.+-]*:$/.test(url.protocol) ? url.protocol : null;
}

/** The headers of a page whose forms may lead to `formTargets` besides this server (formTarget's sources). */
export function pageHeaders(formTargets: readonly string[]): Record<string, string> {
  const targets = [...new Set(formTargets)].join(' ');
  return {
    'Content-Security-Policy': `default-src 'none'; style-src 'unsafe-inline'; form-action 'self'${targets ? ` ${targets}` : ''}; frame-ancestors 'none'; base-uri 'none'`,
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-store',
  };
}

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Intake</title>
<style>
  body { font: 16px/1.5 system-ui, sans-serif; max-width: 28rem; margin: 3rem auto; padding: 0 1rem; color: #1b1b1f; }
  label { display: block; margin-top: 1rem; font-weight: 600; } input[type=email], input[type=password] { width: 100%; padding: .5rem; font: inherit; box-sizing: border-box; }
  button { margin-top: 1.25rem; margin-right: .5rem; padding: .5rem 1.25rem; font: inherit; cursor: pointer; }
  .error { color: #a1001a; border-left: 4px solid #a1001a; padding-left: .75rem; } ul { padding-left: 1.25rem; }
</style></head>
<body><main>${body}</main></body></html>`;
}

/** The e-mail and password form of both sign-in pages. */
function passwordForm(o: { action: string; csrf: string; email?: string }): string {
  return `<form method="post" action="${escapeHtml(o.action)}">
  <input type="hidden" name="csrf" value="${escapeHtml(o.csrf)}">
  <label for="email">E-mail</label>
  <input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(o.email ?? '')}">
  <label for="password">Password</label>
  <input id="password" name="password" type="password" autocomplete="current-password" required>
  <button type="submit">Sign in</button>
</form>`;
}

export function loginPage(o: {
  action: string;
  csrf: string;
  clientName: string;
  email?: string;
  error?: string;
  /** Sign-in at the company's identity provider (OIDC_ISSUER), when configured. */
  upstream?: { action: string; name: string };
}): string {
  const upstream = o.upstream
    ? `
<form method="post" action="${escapeHtml(o.upstream.action)}">
  <input type="hidden" name="csrf" value="${escapeHtml(o.csrf)}">
  <button type="submit">Sign in with ${escapeHtml(o.upstream.name)}</button>
</form>
<p>or with your Intake e-mail address and password:</p>`
    : '';
  return layout(
    'Sign in',
    `
<h1>Sign in to Intake</h1>
<p><strong>${escapeHtml(o.clientName)}</strong> asks to connect to your Intake account.</p>
${o.error ? `<p class="error" role="alert">${escapeHtml(o.error)}</p>` : ''}${upstream}
${passwordForm(o)}`,
  );
}

export function consentPage(o: {
  action: string;
  csrf: string;
  clientName: string;
  redirectHost: string;
  scopes: string[];
  email: string;
  /** The user approved these scopes for this client before (native clients are asked each time). */
  approvedBefore?: boolean;
  /** The page that lists and revokes what the user approved. */
  grantsUrl: string;
}): string {
  const items = o.scopes.map((s) => `<li>${escapeHtml(SCOPE_TEXT[s] ?? s)} <code>${escapeHtml(s)}</code></li>`).join('');
  return layout(
    'Approve access',
    `
<h1>Approve access</h1>
<p><strong>${escapeHtml(o.clientName)}</strong> (returning to <strong>${escapeHtml(o.redirectHost)}</strong>) asks to act as
<strong>${escapeHtml(o.email)}</strong> on the Intake MCP server:</p>
<ul>${items}</ul>
${o.approvedBefore ? '<p>You approved this application before. Applications on your computer are asked to confirm each time.</p>\n' : ''}<p>You can revoke this access at any time on the <a href="${escapeHtml(o.grantsUrl)}">connected applications</a> page.</p>
<form method="post" action="${escapeHtml(o.action)}">
  <input type="hidden" name="csrf" value="${escapeHtml(o.csrf)}">
  <button type="submit" name="decision" value="approve">Approve</button>
  <button type="submit" name="decision" value="deny">Deny</button>
</form>`,
  );
}

/** The connected-applications page before sign-in. */
export function grantsSignInPage(o: { action: string; csrf: string; email?: string; error?: string }): string {
  return layout(
    'Connected applications',
    `
<h1>Connected applications</h1>
<p>Sign in to see the applications you allowed to act on your Intake account, and revoke them.</p>
${o.error ? `<p class="error" role="alert">${escapeHtml(o.error)}</p>` : ''}
${passwordForm(o)}
<p>Signed in with single sign-on only? Ask an admin (<code>intake grant revoke</code>), or call
<code>DELETE /v3/rest/me/grants/{grantId}</code> with a user token.</p>`,
  );
}

/** The MCP clients a signed-in user approved, each with a button that revokes it. */
export function grantsPage(o: {
  base: string;
  csrf: string;
  email: string;
  grants: { grantId: string; clientName: string | null; clientId: string; scopes: string[]; grantedAt: string }[];
}): string {
  const csrf = `<input type="hidden" name="csrf" value="${escapeHtml(o.csrf)}">`;
  const items = o.grants
    .map(
      (g) => `<li><strong>${escapeHtml(g.clientName ?? g.clientId)}</strong>, approved ${escapeHtml(g.grantedAt.slice(0, 10))}:
  ${g.scopes.map((s) => `<code>${escapeHtml(s)}</code>`).join(' ')}
  <form method="post" action="${escapeHtml(o.base)}/revoke">${csrf}<input type="hidden" name="grant" value="${escapeHtml(g.grantId)}">
  <button type="submit">Revoke</button></form></li>`,
    )
    .join('\n');
  return layout(
    'Connected applications',
    `
<h1>Connected applications</h1>
<p>Signed in as <strong>${escapeHtml(o.email)}</strong>.</p>
${o.grants.length ? `<p>These applications may act as you on the Intake MCP server. Revoking one stops its access at once; it must ask you again.</p>\n<ul>${items}</ul>` : '<p>No application may act as you.</p>'}
<form method="post" action="${escapeHtml(o.base)}/sign-out">${csrf}<button type="submit">Sign out</button></form>`,
  );
}

export function errorPage(title: string, message: string): string {
  return layout(title, `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p>`);
}

/**
 * oidc-provider's error page (its `renderError`): an error the user sees instead of being sent back
 * to the client, such as a redirect URI that is not registered. The error code and its description
 * are oidc-provider's, meant for people (never a stack).
 */
export function renderOAuthError(
  ctx: { type: string; body: unknown; set(headers: Record<string, string>): void },
  out: { error: string; error_description?: string },
): void {
  ctx.set(PAGE_HEADERS);
  ctx.type = 'html';
  ctx.body = errorPage(
    'Sign-in failed',
    `${out.error_description ?? 'The request could not be completed.'} (${out.error}). Start again from your application.`,
  );
}
