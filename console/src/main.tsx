import { render, type ComponentChildren, type ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { LocationProvider, Route, Router, useLocation } from 'preact-iso';
import { beginSignIn, completeSignIn, signedIn, signOut } from './auth';
import { ApplicationPage } from './pages/application';
import { ApplicationsPage } from './pages/applications';
import { SessionPage } from './pages/session';
import { SessionsPage } from './pages/sessions';
import { SignalsPage } from './pages/signals';
import { RecordingPage } from './pages/recording';
import { RecordingsPage } from './pages/recordings';
import { UsagePage } from './pages/usage';
import { AccessPage } from './pages/access';
import { PrivacyPage } from './pages/privacy';
import { WebhookPage, WebhooksPage } from './pages/webhooks';
import { forgetOrganization, useOrganization, type Scope } from './caller';
import { ErrorNote, Loading } from './ui';
import './styles.css';

/**
 * The console's pages: those with a scope only for whom holds it (admins: `admin`, and
 * `webhooks:manage` for webhooks). Keys and access is everyone's, but a member has only their own
 * connected applications there, and it is named so.
 */
const NAV: { href: string; label: string; memberLabel?: string; scope?: Scope }[] = [
  { href: '/console/applications', label: 'Agent applications', scope: 'admin' },
  { href: '/console/sessions', label: 'Sessions' },
  { href: '/console/signals', label: 'Signals' },
  { href: '/console/recordings', label: 'Recordings' },
  { href: '/console/usage', label: 'Usage and credits' },
  { href: '/console/webhooks', label: 'Webhooks', scope: 'webhooks:manage' },
  { href: '/console/access', label: 'Keys and access', memberLabel: 'Connected applications' },
  { href: '/console/privacy', label: 'Privacy', scope: 'admin' },
];

function Callback() {
  const { route } = useLocation();
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    completeSignIn(location.search).then(
      (to) => route(to, true),
      (e: unknown) => setError((e as Error).message),
    );
  }, []);
  return (
    <main id="main">
      <h1>Signing in…</h1>
      <ErrorNote error={error} />
      {error && (
        <button type="button" onClick={() => void beginSignIn('/console/')}>
          Sign in again
        </button>
      )}
    </main>
  );
}

function SignIn() {
  const [error, setError] = useState<string | null>(null);
  return (
    <main id="main" class="signin">
      <h1>Intake console</h1>
      <p>Configure agent applications, follow conversations as they are processed, and manage what your organization stores.</p>
      <button
        type="button"
        class="primary"
        onClick={() => void beginSignIn(location.pathname + location.search).catch((e: unknown) => setError((e as Error).message))}
      >
        Sign in
      </button>
      <ErrorNote error={error} />
    </main>
  );
}

function Home() {
  const { route } = useLocation();
  useEffect(() => route('/console/sessions', true), []);
  return null;
}

function NotFound() {
  return (
    <main id="main">
      <h1>Not found</h1>
      <p>
        There is no such page. <a href="/console/">Back to the console</a>.
      </p>
    </main>
  );
}

function Shell({ children }: { children: ComponentChildren }) {
  const { path } = useLocation();
  const org = useOrganization();
  const scopes = org.data?.caller.scopes;
  const admin = !!scopes?.includes('admin');
  // Until the role is known, only what every user sees: an admin's pages never show to a member.
  const nav = NAV.filter((n) => !n.scope || scopes?.includes(n.scope));
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header>
        <span class="brand">Intake</span>
        <nav aria-label="Console">
          <ul>
            {nav.map((n) => (
              <li key={n.href}>
                <a href={n.href} aria-current={path.startsWith(n.href) ? 'page' : undefined}>
                  {!admin && n.memberLabel ? n.memberLabel : n.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <span class="org">
          {org.data?.name}
          {org.data?.caller.role && <span class="muted"> · {org.data.caller.role}</span>}
        </span>
        <button
          type="button"
          onClick={() => {
            forgetOrganization();
            void signOut().then(() => location.assign('/console/'));
          }}
        >
          Sign out
        </button>
      </header>
      {children}
    </>
  );
}

/**
 * An admin's page opened by someone without its scope (a member following a link): said plainly,
 * without the API's error code or a form they could not use.
 */
function ForAdmins({ title, scope, children }: { title: string; scope: Scope; children: ComponentChildren }) {
  const org = useOrganization();
  if (org.data?.caller.scopes.includes(scope)) return <>{children}</>;
  return (
    <main id="main">
      <h1>{title}</h1>
      <ErrorNote error={org.error} />
      {!org.data && !org.error && <Loading what="your access" />}
      {org.data && (
        <div data-testid="admins-only">
          <p>
            This page is for admins of {org.data.name}. You are signed in as a {org.data.caller.role ?? 'user'}: you see sessions, signals,
            recordings and usage, and your own connected applications.
          </p>
          <p>
            Ask an admin of your organization for what is here. <a href="/console/sessions">Back to the sessions</a>.
          </p>
        </div>
      )}
    </main>
  );
}

/** A page of the console: behind the sign-in, inside the shell; with `only`, for whom holds its scope. */
function page<P extends object>(Page: ComponentType<P>, only?: { title: string; scope: Scope }) {
  return (props: P) => {
    if (!signedIn()) return <SignIn />;
    return (
      <Shell>
        {only ? (
          <ForAdmins {...only}>
            <Page {...props} />
          </ForAdmins>
        ) : (
          <Page {...props} />
        )}
      </Shell>
    );
  };
}

const ADMIN_APPLICATIONS = { title: 'Agent applications', scope: 'admin' } as const;
const ADMIN_WEBHOOKS = { title: 'Webhooks', scope: 'webhooks:manage' } as const;

const Pages = {
  home: page(Home),
  applications: page(ApplicationsPage, ADMIN_APPLICATIONS),
  application: page(ApplicationPage, ADMIN_APPLICATIONS),
  sessions: page(SessionsPage),
  session: page(SessionPage),
  signals: page(SignalsPage),
  usage: page(UsagePage),
  recordings: page(RecordingsPage),
  recording: page(RecordingPage),
  webhooks: page(WebhooksPage, ADMIN_WEBHOOKS),
  webhook: page(WebhookPage, ADMIN_WEBHOOKS),
  access: page(AccessPage),
  privacy: page(PrivacyPage, { title: 'Privacy', scope: 'admin' }),
  notFound: page(NotFound),
};

function App() {
  const [, setSignedOut] = useState(0);
  useEffect(() => {
    const onSignedOut = () => {
      forgetOrganization();
      setSignedOut((n) => n + 1);
    };
    window.addEventListener('intake:signed-out', onSignedOut);
    return () => window.removeEventListener('intake:signed-out', onSignedOut);
  }, []);
  return (
    <LocationProvider>
      <Router>
        <Route path="/console/callback" component={Callback} />
        <Route path="/console/" component={Pages.home} />
        <Route path="/console/applications" component={Pages.applications} />
        <Route path="/console/applications/:applicationId" component={Pages.application} />
        <Route path="/console/sessions" component={Pages.sessions} />
        <Route path="/console/sessions/:sessionId" component={Pages.session} />
        <Route path="/console/signals" component={Pages.signals} />
        <Route path="/console/usage" component={Pages.usage} />
        <Route path="/console/recordings" component={Pages.recordings} />
        <Route path="/console/recordings/:recordingId" component={Pages.recording} />
        <Route path="/console/webhooks" component={Pages.webhooks} />
        <Route path="/console/webhooks/:endpointId" component={Pages.webhook} />
        <Route path="/console/access" component={Pages.access} />
        <Route path="/console/privacy" component={Pages.privacy} />
        <Route default component={Pages.notFound} />
      </Router>
    </LocationProvider>
  );
}

render(<App />, document.getElementById('app')!);
