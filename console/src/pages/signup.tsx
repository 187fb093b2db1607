import type { Affiliate, Program, SignupQuestion, SignupSettings } from '@affiliate/contracts';
import { useState } from 'preact/hooks';
import { call, type Credential } from '../api';
import { Action, ErrorBanner, Notice, Table, useLoad, useProgramSettingsForm, when } from '../ui';

const QUESTION_TYPES: { value: SignupQuestion['type']; label: string }[] = [
  { value: 'TEXT', label: 'Short text' },
  { value: 'LONG_TEXT', label: 'Long text' },
  { value: 'URL', label: 'Web address' },
  { value: 'SELECT', label: 'Choice' },
];

/** A question as the form edits it: its options as one line, comma-separated. */
type EditedQuestion = { id: string; label: string; type: SignupQuestion['type']; required: boolean; options: string };

const splitOptions = (text: string) =>
  text
    .split(',')
    .map((option) => option.trim())
    .filter(Boolean);

/**
 * How affiliates join: the program's sign-up page (its address, whether it is open, the intro, the
 * terms and the questions, whether applications wait for approval), and the applications waiting,
 * each with its answers, approved or rejected here (PUT /affiliates, which subscribers see as affiliate.updated).
 */
export function Signup({ credential }: { credential: Credential }) {
  const program = useLoad(async () => (await call<Program>(credential, 'GET', '/program')).items, []);
  const pending = useLoad(async () => (await call<Affiliate[]>(credential, 'GET', '/affiliates?status=PENDING')).items, []);
  const decide = async (affiliate: Affiliate, status: 'ACTIVE' | 'REJECTED') => {
    await call(credential, 'PUT', '/affiliates', { affiliateId: affiliate.id, status });
    pending.reload();
  };
  return (
    <section>
      <h1>Sign-up</h1>
      <ErrorBanner error={program.error ?? pending.error} />
      <Table
        caption="Applications waiting for approval"
        rows={pending.value ?? []}
        empty="No application is waiting."
        columns={[
          { title: 'Applicant', value: (affiliate) => `${affiliate.firstName} ${affiliate.lastName}` },
          { title: 'Email', value: (affiliate) => affiliate.email },
          { title: 'Applied', value: (affiliate) => when(affiliate.createdAt) },
          {
            title: 'Answers',
            value: (affiliate) =>
              affiliate.signupAnswers.length ? (
                <dl>
                  {affiliate.signupAnswers.map((answer) => (
                    <div key={answer.questionId}>
                      <dt>{answer.question}</dt>
                      <dd>{answer.answer}</dd>
                    </div>
                  ))}
                </dl>
              ) : (
                'None'
              ),
          },
          {
            title: 'Decision',
            value: (affiliate) => (
              <>
                <Action label={`Approve ${affiliate.email}`} run={() => decide(affiliate, 'ACTIVE')} />
                <Action kind="danger" label={`Reject ${affiliate.email}`} run={() => decide(affiliate, 'REJECTED')} />
              </>
            ),
          },
        ]}
      />
      {program.value ? <SignupSettingsForm credential={credential} program={program.value} onSaved={program.reload} /> : null}
    </section>
  );
}

function SignupSettingsForm({ credential, program, onSaved }: { credential: Credential; program: Program; onSaved: () => void }) {
  // Absent until the program first sets it: the page is off. (Types only from the contracts: their values pull node modules into the bundle.)
  const signup: SignupSettings = program.signup ?? { enabled: false, introText: '', termsUrl: null, questions: [] };
  const [slug, setSlug] = useState(program.slug ?? '');
  const [enabled, setEnabled] = useState(signup.enabled);
  const [requireApproval, setRequireApproval] = useState(program.requireApproval);
  const [introText, setIntroText] = useState(signup.introText);
  const [termsUrl, setTermsUrl] = useState(signup.termsUrl ?? '');
  const [questions, setQuestions] = useState<EditedQuestion[]>(
    signup.questions.map((question) => ({ ...question, options: question.options.join(', ') })),
  );
  const { error, saved, save } = useProgramSettingsForm(credential, onSaved, () => ({
    slug: slug === '' ? null : slug,
    requireApproval,
    signup: {
      enabled,
      introText,
      termsUrl: termsUrl === '' ? null : termsUrl,
      questions: questions.map((question) => ({ ...question, options: question.type === 'SELECT' ? splitOptions(question.options) : [] })),
    },
  }));
  const edit = (index: number, change: Partial<EditedQuestion>) =>
    setQuestions(questions.map((question, at) => (at === index ? { ...question, ...change } : question)));
  const value = (event: Event) => (event.target as HTMLInputElement).value;
  return (
    <form class="panel" onSubmit={save}>
      <h2>Sign-up page</h2>
      {program.slug && signup.enabled ? (
        <p>
          Your sign-up page: <a href={`/join/${program.slug}`}>{new URL(`/join/${program.slug}`, window.location.origin).toString()}</a>.
          Embed it in an iframe on your allowed origins (Tracking page).
        </p>
      ) : (
        <Notice>The sign-up page is off: choose an address and open it.</Notice>
      )}
      <label for="signup-slug">Address (/join/…: lower-case letters, numbers and hyphens)</label>
      <input id="signup-slug" value={slug} onInput={(event) => setSlug(value(event))} />
      <label class="inline">
        <input type="checkbox" checked={enabled} onChange={(event) => setEnabled((event.target as HTMLInputElement).checked)} /> Open for
        applications
      </label>
      <label class="inline">
        <input
          type="checkbox"
          checked={requireApproval}
          onChange={(event) => setRequireApproval((event.target as HTMLInputElement).checked)}
        />{' '}
        New affiliates wait for approval
      </label>
      <label for="signup-intro">Intro text</label>
      <textarea id="signup-intro" rows={3} cols={60} value={introText} onInput={(event) => setIntroText(value(event))} />
      <label for="signup-terms">Terms URL (optional)</label>
      <input id="signup-terms" type="url" value={termsUrl} onInput={(event) => setTermsUrl(value(event))} />
      <fieldset>
        <legend>Questions</legend>
        {questions.map((question, index) => (
          <div class="question" key={index}>
            <label for={`question-id-${index}`}>Question {index + 1} id</label>
            <input id={`question-id-${index}`} value={question.id} onInput={(event) => edit(index, { id: value(event) })} />
            <label for={`question-label-${index}`}>Question {index + 1} label</label>
            <input id={`question-label-${index}`} value={question.label} onInput={(event) => edit(index, { label: value(event) })} />
            <label for={`question-type-${index}`}>Question {index + 1} type</label>
            <select
              id={`question-type-${index}`}
              value={question.type}
              onChange={(event) => edit(index, { type: (event.target as HTMLSelectElement).value as SignupQuestion['type'] })}
            >
              {QUESTION_TYPES.map((type) => (
                <option key={type.value} value={type.value}>
                  {type.label}
                </option>
              ))}
            </select>
            {question.type === 'SELECT' ? (
              <>
                <label for={`question-options-${index}`}>Question {index + 1} choices (comma-separated)</label>
                <input
                  id={`question-options-${index}`}
                  value={question.options}
                  onInput={(event) => edit(index, { options: value(event) })}
                />
              </>
            ) : null}
            <label class="inline">
              <input
                type="checkbox"
                checked={question.required}
                onChange={(event) => edit(index, { required: (event.target as HTMLInputElement).checked })}
              />{' '}
              Question {index + 1} required
            </label>
            <button type="button" class="danger" onClick={() => setQuestions(questions.filter((_, at) => at !== index))}>
              Remove question {index + 1}
            </button>
          </div>
        ))}
        <button
          type="button"
          onClick={() =>
            setQuestions([...questions, { id: `q${questions.length + 1}`, label: '', type: 'TEXT', required: false, options: '' }])
          }
        >
          Add a question
        </button>
      </fieldset>
      <button type="submit">Save sign-up settings</button>
      {saved ? <Notice>Saved.</Notice> : null}
      <ErrorBanner error={error} />
    </form>
  );
}
