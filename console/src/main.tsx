import 'uplot/dist/uPlot.min.css';
import './styles.css';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { forgetAdminToken, memberClient, operatorClient, savedAdminToken, saveAdminToken } from './api';
import { AffiliateApiError, createApiClient, ok, type ApiClient, type OperationId, type PageProps, type Schemas } from './client';
import { AcceptInvite } from './pages/accept-invite';
import { Account } from './pages/account';
import { Affiliates } from './pages/affiliates';
import { ApiKeys } from './pages/api-keys';
import { AuditRecords } from './pages/audit-records';
import { RESOURCES } from './pages/browse';
import { Catalogue } from './pages/catalogue';
import { Coupons } from './pages/coupons';
import { Audit, Programs } from './pages/operator';
import { Overview } from './pages/overview';
import { Payouts } from './pages/payouts';
import { Plans } from './pages/plans';
import { Reports } from './pages/reports';
import { Review } from './pages/review';
import { Settings } from './pages/settings';
import { SignIn } from './pages/sign-in';
import { Signup } from './pages/signup';
import { Team } from './pages/team';
import { Tracking } from './pages/tracking';
import { Webhooks } from './pages/webhooks';
import { ErrorBanner } from './ui';

/** A section of a member's navigation: left out when the role cannot make the operation it needs (null: every member). */
type Route = { id: string; label: string; needs: OperationId | null; page: (props: PageProps) => preact.JSX.Element };

/** The list each browsing section reads (a resource the table does not know is shown to every member; the gateway still judges). */
const BROWSE_NEEDS: Record<string, OperationId> = {
  affiliates: 'getAffiliates',
  links: 'getLinks',
  codes: 'getPromotionalCodes',
  referrals: 'getReferrals',
  sales: 'getSales',
};

const MEMBER_ROUTES: Route[] = [
  { id: 'overview', label: 'Overview', needs: 'getProgramSummary', page: (props) => <Overview {...props} /> },
  { id: 'webhooks', label: 'Webhooks', needs: 'getWebhookEndpoints', page: (props) => <Webhooks {...props} /> },
  { id: 'tracking', label: 'Tracking', needs: 'getOwnProgram', page: (props) => <Tracking {...props} /> },
  { id: 'signup', label: 'Sign-up and approval', needs: 'getOwnProgram', page: (props) => <Signup {...props} /> },
  { id: 'review', label: 'Fraud review', needs: 'getCommissions', page: (props) => <Review {...props} /> },
  { id: 'events', label: 'Event catalogue', needs: 'getEventTypes', page: (props) => <Catalogue {...props} /> },
  { id: 'manage-affiliates', label: 'Approve and edit affiliates', needs: 'getAffiliates', page: (props) => <Affiliates {...props} /> },
  { id: 'plans', label: 'Commission plans', needs: 'getCommissionPlans', page: (props) => <Plans {...props} /> },
  { id: 'coupons', label: 'Coupons and codes', needs: 'getCoupons', page: (props) => <Coupons {...props} /> },
  { id: 'payouts', label: 'Payouts', needs: 'getPayouts', page: (props) => <Payouts {...props} /> },
  { id: 'reports', label: 'Reports', needs: 'getAffiliateReport', page: (props) => <Reports {...props} /> },
  { id: 'settings', label: 'Program settings', needs: 'getOwnProgram', page: (props) => <Settings {...props} /> },
  { id: 'audit-records', label: 'Audit record', needs: 'getAuditRecords', page: (props) => <AuditRecords {...props} /> },
  ...Object.entries(RESOURCES).map(([id, resource]): Route => ({
    id,
    label: resource.title,
    needs: BROWSE_NEEDS[id] ?? null,
    page: (props) => <resource.Page key={id} {...props} />,
  })),
  { id: 'team', label: 'Team', needs: 'getTeamMembers', page: ({ client, can }) => <Team client={client} can={can} /> },
  { id: 'api-keys', label: 'API keys', needs: 'getOwnApiKeys', page: ({ client, can }) => <ApiKeys client={client} can={can} /> },
  { id: 'account', label: 'Your account', needs: null, page: ({ client, can }) => <Account client={client} can={can} /> },
];

const OPERATOR_ROUTES: { id: string; label: string; page: (client: ApiClient) => preact.JSX.Element }[] = [
  { id: 'programs', label: 'Programs and API keys', page: (client) => <Programs client={client} /> },
  { id: 'audit', label: 'Audit record', page: (client) => <Audit client={client} /> },
];

/** The route of the fragment (`#/team` -> team), and its query (`#/accept-invite?token=…`). */
function location() {
  const [id = '', search = ''] = window.location.hash.replace(/^#\/?/, '').split('?');
  return { id, params: new URLSearchParams(search) };
}

/** Who is signed in: nobody yet (while the session is asked for), a member, or the operator. */
type Signed =
  | { kind: 'checking' }
  | { kind: 'nobody'; ended?: boolean }
  | { kind: 'member'; session: Schemas['TeamSession'] }
  | { kind: 'operator'; token: string };

function App() {
  const [signed, setSigned] = useState<Signed>(() => {
    const token = savedAdminToken();
    return token ? { kind: 'operator', token } : { kind: 'checking' };
  });
  const [here, setHere] = useState(location());
  const [signOutError, setSignOutError] = useState<unknown>(null);
  useEffect(() => {
    const follow = () => setHere(location());
    window.addEventListener('hashchange', follow);
    return () => window.removeEventListener('hashchange', follow);
  }, []);
  useEffect(() => {
    if (signed.kind !== 'checking') return;
    // The session is an httpOnly cookie: only the gateway can say whether this browser holds a live one.
    ok(createApiClient({}).GET('/api/v1/team/session')).then(
      (session) => setSigned({ kind: 'member', session }),
      () => setSigned({ kind: 'nobody' }),
    );
  }, [signed.kind]);
  const signedInAsMember = (session: Schemas['TeamSession']) => {
    setSigned({ kind: 'member', session });
    // The invite's token leaves the address bar (and the history) once it has been used.
    if (location().id === 'accept-invite') window.history.replaceState(null, '', `${window.location.pathname}#/`);
    setHere(location());
  };

  const invite = here.id === 'accept-invite' ? here.params.get('token') : null;
  if (invite !== null && signed.kind !== 'checking') return <AcceptInvite token={invite} onMember={signedInAsMember} />;
  if (signed.kind === 'checking') return <main aria-busy="true" />;
  if (signed.kind === 'nobody') {
    return (
      <SignIn
        ended={signed.ended === true}
        onMember={signedInAsMember}
        onOperator={(token) => {
          saveAdminToken(token);
          setSigned({ kind: 'operator', token });
        }}
      />
    );
  }

  const signOut = async () => {
    setSignOutError(null);
    if (signed.kind === 'operator') {
      forgetAdminToken();
      return setSigned({ kind: 'nobody' });
    }
    try {
      await ok(memberClient(signed.session.csrfToken).DELETE('/api/v1/team/session'));
      setSigned({ kind: 'nobody' });
    } catch (failed) {
      // A session that already ended (expired, or revoked by a role change) is signed out all the same.
      if (failed instanceof AffiliateApiError && failed.status === 401) return setSigned({ kind: 'nobody' });
      setSignOutError(failed);
    }
  };

  let sections: { id: string; label: string }[];
  let content: preact.JSX.Element;
  let brand: string;
  if (signed.kind === 'operator') {
    const route = OPERATOR_ROUTES.find((each) => each.id === here.id) ?? OPERATOR_ROUTES[0]!;
    sections = OPERATOR_ROUTES;
    content = route.page(operatorClient(signed.token));
    brand = 'operator view';
  } else {
    const { session } = signed;
    const allowed = new Set<string>(session.allowedOperations);
    const can = (operation: OperationId) => allowed.has(operation);
    const routes = MEMBER_ROUTES.filter((each) => each.needs === null || can(each.needs));
    const route = routes.find((each) => each.id === here.id) ?? routes[0]!;
    sections = routes;
    content = route.page({ client: memberClient(session.csrfToken, () => setSigned({ kind: 'nobody', ended: true })), can });
    brand = `${session.program.name} · ${session.member.email} (${session.member.role})`;
  }
  const current = sections.find((each) => each.id === here.id) ?? sections[0]!;
  return (
    <>
      <header>
        <p class="brand">Affiliate console · {brand}</p>
        <nav aria-label="Sections">
          {sections.map((each) => (
            <a key={each.id} href={`#/${each.id}`} aria-current={each.id === current.id ? 'page' : undefined}>
              {each.label}
            </a>
          ))}
        </nav>
        <button type="button" onClick={signOut}>
          Sign out
        </button>
        <ErrorBanner error={signOutError} />
      </header>
      <main>{content}</main>
    </>
  );
}

render(<App />, document.getElementById('app') as HTMLElement);
