import { useState } from 'preact/hooks';
import { ok, type PageProps, type Schemas } from '../client';
import { CheckboxField, described, Field, SelectField } from '../fields';
import { FieldError, FormError } from '../forms';
import { useProgramSettings } from '../program-settings';
import { ErrorBanner, Notice, useLoad } from '../ui';

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
 * terms and the questions, whether applications wait for approval). The applications waiting are
 * approved or rejected on the affiliates page, the console's one approval queue, linked from here.
 */
export function Signup({ client, can }: PageProps) {
  const program = useLoad(() => ok(client.GET('/api/v1/program')), []);
  return (
    <section>
      <h1>Sign-up</h1>
      <ErrorBanner error={program.error} />
      <p>
        Applications waiting for approval, with their answers, are approved or rejected on{' '}
        <a href="#/manage-affiliates">Approve and edit affiliates</a>.
      </p>
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
  const locked = !can('updateOwnProgram');
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
      <CheckboxField
        id="signup-enabled"
        label="Open for applications"
        param="signup.enabled"
        error={error}
        checked={enabled}
        disabled={locked}
        onChecked={setEnabled}
      />
      <CheckboxField
        id="require-approval"
        label="New affiliates wait for approval"
        param="requireApproval"
        error={error}
        checked={requireApproval}
        disabled={locked}
        onChecked={setRequireApproval}
      />
      <Field
        rows={3}
        id="signup-intro"
        label="Intro text"
        param="signup.introText"
        error={error}
        value={introText}
        disabled={locked}
        onValue={setIntroText}
      />
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
      <fieldset disabled={locked} aria-describedby={described(error, 'signup.questions', 'signup-questions')['aria-describedby']}>
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
              <SelectField
                id={`question-type-${index}`}
                label={`Question ${index + 1} type`}
                param={`${path}.type`}
                error={error}
                value={question.type}
                onValue={(type) => edit(index, { type })}
                options={QUESTION_TYPES}
              />
              {question.type === 'SELECT' ? (
                <Field
                  id={`question-options-${index}`}
                  label={`Question ${index + 1} choices (comma-separated)`}
                  param={`${path}.options`}
                  error={error}
                  list
                  value={question.options}
                  onValue={(options) => edit(index, { options })}
                />
              ) : null}
              <CheckboxField
                id={`question-required-${index}`}
                label={`Question ${index + 1} required`}
                param={`${path}.required`}
                error={error}
                checked={question.required}
                onChecked={(required) => edit(index, { required })}
              />
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
      <FormError
        error={error}
        params={[
          'slug',
          'signup.enabled',
          'requireApproval',
          'signup.introText',
          'signup.termsUrl',
          'signup.questions',
          ...questions.flatMap((_, index) => ['id', 'label', 'type', 'required'].map((part) => `signup.questions.${index}.${part}`)),
        ]}
        lists={questions.map((_, index) => `signup.questions.${index}.options`)}
      />
    </form>
  );
}
