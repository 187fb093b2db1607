import 'uplot/dist/uPlot.min.css';
import './styles.css';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { forgetCredential, savedCredential, saveCredential, type Credential } from './api';
import { createApiClient, type PageProps } from './client';
import { Affiliates } from './pages/affiliates';
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
import { Tracking } from './pages/tracking';
import { Webhooks } from './pages/webhooks';

type Route = { id: string; label: string; page: (credential: Credential) => preact.JSX.Element };

// Until the team sign-in: the converted pages get a client with the program's key, and may do everything it may.
const props = (credential: Credential): PageProps => ({
  client: createApiClient({ authorization: `Bearer ${credential.token}` }),
  can: () => true,
});

const PROGRAM_ROUTES: Route[] = [
  { id: 'overview', label: 'Overview', page: (credential) => <Overview {...props(credential)} /> },
  { id: 'webhooks', label: 'Webhooks', page: (credential) => <Webhooks {...props(credential)} /> },
  { id: 'tracking', label: 'Tracking', page: (credential) => <Tracking {...props(credential)} /> },
  { id: 'signup', label: 'Sign-up and approval', page: (credential) => <Signup {...props(credential)} /> },
  { id: 'review', label: 'Fraud review', page: (credential) => <Review {...props(credential)} /> },
  { id: 'events', label: 'Event catalogue', page: (credential) => <Catalogue {...props(credential)} /> },
  { id: 'manage-affiliates', label: 'Approve and edit affiliates', page: (credential) => <Affiliates {...props(credential)} /> },
  { id: 'plans', label: 'Commission plans', page: (credential) => <Plans {...props(credential)} /> },
  { id: 'coupons', label: 'Coupons and codes', page: (credential) => <Coupons {...props(credential)} /> },
  { id: 'payouts', label: 'Payouts', page: (credential) => <Payouts {...props(credential)} /> },
  { id: 'reports', label: 'Reports', page: (credential) => <Reports {...props(credential)} /> },
  { id: 'settings', label: 'Program settings', page: (credential) => <Settings {...props(credential)} /> },
  ...Object.entries(RESOURCES).map(([id, resource]) => ({
    id,
    label: resource.title,
    page: (credential: Credential) => <resource.Page {...props(credential)} />,
  })),
];

const OPERATOR_ROUTES: Route[] = [
  { id: 'programs', label: 'Programs and API keys', page: (credential) => <Programs credential={credential} /> },
  { id: 'audit', label: 'Audit record', page: (credential) => <Audit credential={credential} /> },
];

const routeId = () => window.location.hash.replace(/^#\/?/, '');

function App() {
  const [credential, setCredential] = useState<Credential | null>(savedCredential());
  const [current, setCurrent] = useState(routeId());
  useEffect(() => {
    const follow = () => setCurrent(routeId());
    window.addEventListener('hashchange', follow);
    return () => window.removeEventListener('hashchange', follow);
  }, []);
  if (!credential) {
    return (
      <SignIn
        onSignedIn={(signedIn) => {
          saveCredential(signedIn);
          setCredential(signedIn);
        }}
      />
    );
  }
  const routes = credential.kind === 'program' ? PROGRAM_ROUTES : OPERATOR_ROUTES;
  const route = routes.find((each) => each.id === current) ?? (routes[0] as Route);
  return (
    <>
      <header>
        <p class="brand">Affiliate console · {credential.kind === 'program' ? 'program' : 'operator'} view</p>
        <nav aria-label="Sections">
          {routes.map((each) => (
            <a key={each.id} href={`#/${each.id}`} aria-current={each.id === route.id ? 'page' : undefined}>
              {each.label}
            </a>
          ))}
        </nav>
        <button
          type="button"
          onClick={() => {
            forgetCredential();
            setCredential(null);
          }}
        >
          Sign out
        </button>
      </header>
      <main>{route.page(credential)}</main>
    </>
  );
}

render(<App />, document.getElementById('app') as HTMLElement);
