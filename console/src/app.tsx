import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { clearSession, loadSession, onUnauthorized, type Session } from './api/client';
import { HealthPage } from './pages/health';
import { KeysPage } from './pages/keys';
import { ProjectPage } from './pages/project';
import { ProjectsPage } from './pages/projects';
import { SignInPage } from './pages/sign-in';
import { SkillsPage } from './pages/skills';
import { TenantsPage } from './pages/tenants';
import { Link, navigate, usePath } from './router';

const TENANT_NAV = [
  { to: '/projects', label: 'Projects' },
  { to: '/skills', label: 'Skills' },
  { to: '/keys', label: 'API keys' },
];
const ADMIN_NAV = [
  { to: '/admin/tenants', label: 'Tenants' },
  { to: '/admin/health', label: 'Health' },
];

export function App() {
  const [session, setSession] = useState<Session | null>(loadSession);
  const [signedOutReason, setSignedOutReason] = useState<string>();
  const path = usePath();

  const signOut = (reason?: string) => {
    clearSession();
    setSession(null);
    setSignedOutReason(reason);
    navigate('/');
  };

  useEffect(() => onUnauthorized(() => signOut('The service no longer accepts this key or token (revoked or wrong). Sign in again.')), []);

  const firstPath = useRef(true);
  useLayoutEffect(() => {
    // After a navigation, keyboard and screen-reader users continue at the new page's content. A layout
    // effect moves focus in the same task that draws the page, so no keystroke lands in between.
    if (firstPath.current) firstPath.current = false;
    else document.getElementById('main')?.focus();
  }, [path]);

  useEffect(() => {
    // A page title per view helps screen-reader users and tab switching.
    document.title = `${path === '/' ? 'Sign in' : path.split('/').filter(Boolean)[0]} · Toolgate console`;
  }, [path]);

  if (!session) {
    return (
      <SignInPage
        reason={signedOutReason}
        onSignedIn={(s) => {
          setSession(s);
          setSignedOutReason(undefined);
          navigate(s.kind === 'admin' ? '/admin/tenants' : '/projects');
        }}
      />
    );
  }

  const nav = session.kind === 'admin' ? ADMIN_NAV : TENANT_NAV;
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Toolgate</span>
        <nav aria-label="Main">
          <ul>
            {nav.map((item) => (
              <li key={item.to}>
                <Link to={item.to} current={path.startsWith(item.to)}>
                  {item.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <span class="who">{session.kind === 'admin' ? 'Operator' : 'Tenant'}</span>
        <button type="button" class="secondary" onClick={() => signOut()}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        <Route path={path} session={session} signOut={signOut} />
      </main>
    </>
  );
}

function Route(props: { path: string; session: Session; signOut: (reason?: string) => void }) {
  const { path, session } = props;
  if (session.kind === 'admin') {
    if (path.startsWith('/admin/health')) return <HealthPage />;
    return <TenantsPage />;
  }
  const project = /^\/projects\/([^/]+)(?:\/([a-z]+))?/.exec(path);
  if (project) return <ProjectPage projectId={decodeURIComponent(project[1]!)} tab={project[2] ?? 'settings'} />;
  if (path.startsWith('/skills')) return <SkillsPage />;
  if (path.startsWith('/keys')) return <KeysPage session={session} signOut={props.signOut} />;
  return <ProjectsPage />;
}
