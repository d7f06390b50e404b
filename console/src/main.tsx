import { render, type ComponentChildren, type ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { LocationProvider, Route, Router, useLocation } from 'preact-iso';
import { api, unwrap } from './api';
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
import { ErrorNote, useLoad } from './ui';
import './styles.css';

const NAV = [
  { href: '/console/applications', label: 'Agent applications' },
  { href: '/console/sessions', label: 'Sessions' },
  { href: '/console/signals', label: 'Signals' },
  { href: '/console/recordings', label: 'Recordings' },
  { href: '/console/usage', label: 'Usage and credits' },
  { href: '/console/webhooks', label: 'Webhooks' },
  { href: '/console/access', label: 'Keys and access' },
  { href: '/console/privacy', label: 'Privacy' },
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

/** The organization's name, fetched once a sign-in. */
let organization: Promise<{ name: string }> | null = null;

function Shell({ children }: { children: ComponentChildren }) {
  const { path } = useLocation();
  const org = useLoad(() => (organization ??= unwrap(api.GET('/v3/rest/organization'))), []);
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header>
        <span class="brand">Intake</span>
        <nav aria-label="Console">
          <ul>
            {NAV.map((n) => (
              <li key={n.href}>
                <a href={n.href} aria-current={path.startsWith(n.href) ? 'page' : undefined}>
                  {n.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <span class="org">{org.data?.name}</span>
        <button
          type="button"
          onClick={() => {
            organization = null;
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

/** A page of the console: behind the sign-in, inside the shell. */
function page<P extends object>(Page: ComponentType<P>) {
  return (props: P) => {
    if (!signedIn()) return <SignIn />;
    return (
      <Shell>
        <Page {...props} />
      </Shell>
    );
  };
}

const Pages = {
  home: page(Home),
  applications: page(ApplicationsPage),
  application: page(ApplicationPage),
  sessions: page(SessionsPage),
  session: page(SessionPage),
  signals: page(SignalsPage),
  usage: page(UsagePage),
  recordings: page(RecordingsPage),
  recording: page(RecordingPage),
  webhooks: page(WebhooksPage),
  webhook: page(WebhookPage),
  access: page(AccessPage),
  privacy: page(PrivacyPage),
  notFound: page(NotFound),
};

function App() {
  const [, setSignedOut] = useState(0);
  useEffect(() => {
    const onSignedOut = () => {
      organization = null;
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
