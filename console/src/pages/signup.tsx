import { useState } from 'preact/hooks';
import { ok, type PageProps, type Schemas } from '../client';
import { describedBy, Field } from '../field';
import { FieldError } from '../forms';
import { rowsOf } from '../paging';
import { useProgramSettings } from '../program-settings';
import { Action, ErrorBanner, Notice, Table, useLoad, when } from '../ui';

type Affiliate = Schemas['Affiliate'];
type Program = Schemas['Program'];
type QuestionType = Schemas['SignupQuestionType'];

const QUESTION_TYPES: { value: QuestionType; label: string }[] = [
  { value: 'TEXT', label: 'Short text' },
  { value: 'LONG_TEXT', label: 'Long text' },
  { value: 'URL', label: 'Web address' },
  { value: 'SELECT', label: 'Choice' },
];

/** A question as the form edits it: its options as one line, comma-separated. */
type EditedQuestion = Omit<Schemas['SignupQuestion'], 'required' | 'options'> & { required: boolean; options: string };

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
export function Signup({ client, can }: PageProps) {
  const program = useLoad(() => ok(client.GET('/api/v1/program')), []);
  const pending = useLoad(async () => rowsOf(await ok(client.GET('/api/v1/affiliates', { params: { query: { status: 'PENDING' } } }))), []);
  const decide = async (affiliate: Affiliate, status: 'ACTIVE' | 'REJECTED') => {
    await ok(client.PUT('/api/v1/affiliates', { body: { affiliateId: affiliate.id, status } }));
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
          ...(can('updateAffiliate')
            ? [
                {
                  title: 'Decision',
                  value: (affiliate: Affiliate) => (
                    <>
                      <Action label={`Approve ${affiliate.email}`} run={() => decide(affiliate, 'ACTIVE')} />
                      <Action kind="danger" label={`Reject ${affiliate.email}`} run={() => decide(affiliate, 'REJECTED')} />
                    </>
                  ),
                },
              ]
            : []),
        ]}
      />
      {program.value ? <SignupSettingsForm client={client} can={can} program={program.value} onSaved={program.reload} /> : null}
    </section>
  );
}

function SignupSettingsForm({ client, can, program, onSaved }: PageProps & { program: Program; onSaved: () => void }) {
  // Absent until the program first sets it: the page is off.
  const signup = program.signup ?? { enabled: false };
  const [slug, setSlug] = useState(program.slug ?? '');
  const [enabled, setEnabled] = useState(signup.enabled);
  const [requireApproval, setRequireApproval] = useState(program.requireApproval);
  const [introText, setIntroText] = useState(signup.introText ?? '');
  const [termsUrl, setTermsUrl] = useState(signup.termsUrl ?? '');
  const [questions, setQuestions] = useState<EditedQuestion[]>(
    (signup.questions ?? []).map((question) => ({
      ...question,
      required: question.required ?? false,
      options: (question.options ?? []).join(', '),
    })),
  );
  const { error, saved, save } = useProgramSettings(client, onSaved, () => ({
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
  const locked = !can('updateOwnProgram');
  const beside = (param: string, id: string) => ({
    'aria-describedby': describedBy(error, param, id),
    disabled: locked,
  });
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
      <Field
        id="signup-slug"
        label="Address (/join/…: lower-case letters, numbers and hyphens)"
        param="slug"
        error={error}
        value={slug}
        disabled={locked}
        onValue={setSlug}
      />
      <label class="inline">
        <input
          type="checkbox"
          checked={enabled}
          {...beside('signup.enabled', 'signup-enabled-error')}
          onChange={(event) => setEnabled((event.target as HTMLInputElement).checked)}
        />{' '}
        Open for applications
      </label>
      <FieldError error={error} param="signup.enabled" id="signup-enabled-error" />
      <label class="inline">
        <input
          type="checkbox"
          checked={requireApproval}
          {...beside('requireApproval', 'require-approval-error')}
          onChange={(event) => setRequireApproval((event.target as HTMLInputElement).checked)}
        />{' '}
        New affiliates wait for approval
      </label>
      <FieldError error={error} param="requireApproval" id="require-approval-error" />
      <label for="signup-intro">Intro text</label>
      <textarea
        id="signup-intro"
        rows={3}
        cols={60}
        value={introText}
        {...beside('signup.introText', 'signup-intro-error')}
        onInput={(event) => setIntroText(value(event))}
      />
      <FieldError error={error} param="signup.introText" id="signup-intro-error" />
      <Field
        id="signup-terms"
        label="Terms URL (optional)"
        param="signup.termsUrl"
        error={error}
        type="url"
        value={termsUrl}
        disabled={locked}
        onValue={setTermsUrl}
      />
      <fieldset disabled={locked} aria-describedby={describedBy(error, 'signup.questions', 'signup-questions-error')}>
        <legend>Questions</legend>
        <FieldError error={error} param="signup.questions" id="signup-questions-error" />
        {questions.map((question, index) => {
          const path = `signup.questions.${index}`;
          return (
            <div class="question" key={index}>
              <Field
                id={`question-id-${index}`}
                label={`Question ${index + 1} id`}
                param={`${path}.id`}
                error={error}
                value={question.id}
                onValue={(id) => edit(index, { id })}
              />
              <Field
                id={`question-label-${index}`}
                label={`Question ${index + 1} label`}
                param={`${path}.label`}
                error={error}
                value={question.label}
                onValue={(label) => edit(index, { label })}
              />
              <label for={`question-type-${index}`}>Question {index + 1} type</label>
              <select
                id={`question-type-${index}`}
                value={question.type}
                {...beside(`${path}.type`, `question-type-${index}-error`)}
                onChange={(event) => edit(index, { type: (event.target as HTMLSelectElement).value as QuestionType })}
              >
                {QUESTION_TYPES.map((type) => (
                  <option key={type.value} value={type.value}>
                    {type.label}
                  </option>
                ))}
              </select>
              <FieldError error={error} param={`${path}.type`} id={`question-type-${index}-error`} />
              {question.type === 'SELECT' ? (
                <Field
                  id={`question-options-${index}`}
                  label={`Question ${index + 1} choices (comma-separated)`}
                  param={`${path}.options`}
                  error={error}
                  value={question.options}
                  onValue={(options) => edit(index, { options })}
                />
              ) : null}
              <label class="inline">
                <input
                  type="checkbox"
                  checked={question.required}
                  onChange={(event) => edit(index, { required: (event.target as HTMLInputElement).checked })}
                />{' '}
                Question {index + 1} required
              </label>
              {locked ? null : (
                <button type="button" class="danger" onClick={() => setQuestions(questions.filter((_, at) => at !== index))}>
                  Remove question {index + 1}
                </button>
              )}
            </div>
          );
        })}
        {locked ? null : (
          <button
            type="button"
            onClick={() =>
              setQuestions([...questions, { id: `q${questions.length + 1}`, label: '', type: 'TEXT', required: false, options: '' }])
            }
          >
            Add a question
          </button>
        )}
      </fieldset>
      {locked ? null : <button type="submit">Save sign-up settings</button>}
      {saved ? <Notice>Saved.</Notice> : null}
      <ErrorBanner error={error} />
    </form>
  );
}
