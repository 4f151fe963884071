import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { clearSession, loadSession, onUnauthorized, probeRole, saveSession, type Session } from './api/client';
import { AuthProvidersPage } from './pages/auth-providers';
import { ConnectionsPage } from './pages/connections';
import { HealthPage } from './pages/health';
import { KeysPage } from './pages/keys';
import { OAuthConsentPage } from './pages/oauth-consent';
import { PoliciesPage } from './pages/policies';
import { ProjectPage } from './pages/project';
import { ProjectsPage } from './pages/projects';
import { SignInPage } from './pages/sign-in';
import { SkillsPage } from './pages/skills';
import { SkillChangesPage } from './pages/skill-changes';
import { TenantsPage } from './pages/tenants';
import { NotForRole, ROLE_LABEL, RoleContext, may, type Capability } from './roles';
import { Link, navigate, usePath } from './router';
import { ErrorNote, asError } from './ui';

const TENANT_NAV: Array<{ to: string; label: string; needs?: Capability }> = [
  { to: '/projects', label: 'Projects' },
  { to: '/skills', label: 'Skills', needs: 'manage' },
  { to: '/keys', label: 'API keys', needs: 'manage' },
  { to: '/auth-providers', label: 'Auth providers', needs: 'manage' },
  { to: '/connections', label: 'Connections', needs: 'manage' },
  { to: '/policies', label: 'Policies', needs: 'policies' },
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

  useEffect(
    () =>
      onUnauthorized((code) =>
        signOut(
          code === 'api_key_expired'
            ? 'This key has expired. Ask an admin of the tenant for a new one.'
            : 'The service no longer accepts this key or token (revoked or wrong). Sign in again.',
        ),
      ),
    [],
  );

  // A tenant session kept without its role (signed in before the console knew roles) learns it once.
  const [probeError, setProbeError] = useState<Error>();
  useEffect(() => {
    if (session?.kind !== 'tenant' || session.role) return;
    probeRole(session.token).then(
      (role) => {
        const known = { ...session, role };
        saveSession(known);
        setSession(known);
      },
      (error: unknown) => setProbeError(asError(error)),
    );
  }, [session]);

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
          // Signed in on the way to a consent page: stay there to decide.
          if (!path.startsWith('/oauth/consent')) navigate(s.kind === 'admin' ? '/admin/tenants' : '/projects');
        }}
      />
    );
  }

  if (session.kind === 'tenant' && !session.role) {
    return (
      <main id="main" class="sign-in">
        {probeError ? <ErrorNote error={probeError} label="The key could not be checked" /> : <p role="status">Checking the key…</p>}
        <button type="button" class="secondary" onClick={() => signOut()}>
          Sign out
        </button>
      </main>
    );
  }

  const role = session.role ?? 'admin';
  const nav = session.kind === 'admin' ? ADMIN_NAV : TENANT_NAV.filter((item) => !item.needs || may(role, item.needs));
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
        <span class="who">{session.kind === 'admin' ? 'Operator' : `Tenant, ${ROLE_LABEL[role]}`}</span>
        <button type="button" class="secondary" onClick={() => signOut()}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        <RoleContext.Provider value={role}>
          <Route path={path} session={session} signOut={signOut} />
        </RoleContext.Provider>
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
  const role = session.role ?? 'admin';
  if (path.startsWith('/oauth/consent'))
    return may(role, 'decide') ? <OAuthConsentPage /> : <NotForRole role={role} what="Deciding a sign-in request" needs="decide" />;
  const project = /^\/projects\/([^/]+)(?:\/([a-z]+))?/.exec(path);
  if (project) return <ProjectPage projectId={decodeURIComponent(project[1]!)} tab={project[2]} />;
  const review = /^\/skills\/([^/]+)\/changes$/.exec(path);
  if (review && may(role, 'manage')) return <SkillChangesPage skillId={decodeURIComponent(review[1]!)} />;
  if (path.startsWith('/skills'))
    return may(role, 'manage') ? <SkillsPage /> : <NotForRole role={role} what="Registering and listing skills" needs="manage" />;
  if (path.startsWith('/auth-providers'))
    return may(role, 'manage') ? <AuthProvidersPage /> : <NotForRole role={role} what="Managing auth providers" needs="manage" />;
  if (path.startsWith('/connections'))
    return may(role, 'manage') ? <ConnectionsPage /> : <NotForRole role={role} what="Managing connections" needs="manage" />;
  if (path.startsWith('/policies'))
    return may(role, 'policies') ? <PoliciesPage /> : <NotForRole role={role} what="Reading the policies" needs="policies" />;
  if (path.startsWith('/keys'))
    return may(role, 'manage') ? (
      <KeysPage session={session} signOut={props.signOut} />
    ) : (
      <NotForRole role={role} what="Managing API keys" needs="manage" />
    );
  return <ProjectsPage />;
}
