import type { SignupQuestion, SignupSettings } from '@affiliate/contracts';

// escape-html (express's own dependency, already in the tree) ships no types: its one function, as documented.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const escapeHtml = require('escape-html') as (text: string) => string;

/** What the page shows of the program: its name and its sign-up settings. */
export type SignupPageProgram = { name: string; slug: string; signup: SignupSettings };

/** What the applicant typed, shown again with the problems when the server refuses it. */
export type FilledForm = { firstName?: string; lastName?: string; email?: string; answers?: Record<string, string> };

/** The name of the field no person fills in: it is off screen and out of the tab order, and only bots that fill every field see it. */
export const HONEYPOT_FIELD = 'website';
export const FORM_TOKEN_FIELD = 'formToken';
export const SIGNUP_STYLESHEET_PATH = '/join-assets/signup.css';

/**
 * The page's only stylesheet, served by the gateway itself: the console's CSP allows styles from
 * this origin only (no inline style), so the form looks the same embedded or not, offline.
 */
export const SIGNUP_STYLESHEET = `
body { font: 16px/1.5 system-ui, sans-serif; color: #1a1a1a; background: #fff; margin: 0; }
main { max-width: 36rem; margin: 0 auto; padding: 1.5rem; }
h1 { font-size: 1.6rem; margin: 0 0 .5rem; }
.intro { white-space: pre-line; }
label { display: block; font-weight: 600; margin-top: 1rem; }
input, textarea, select { display: block; width: 100%; box-sizing: border-box; font: inherit; padding: .5rem; border: 1px solid #555; border-radius: 4px; }
textarea { min-height: 6rem; }
button { margin-top: 1.5rem; font: inherit; padding: .6rem 1.4rem; border: 0; border-radius: 4px; background: #1d4ed8; color: #fff; cursor: pointer; }
.problems { border: 2px solid #b91c1c; border-radius: 4px; padding: .5rem 1rem; margin: 1rem 0; color: #7f1d1d; }
.optional { font-weight: 400; color: #444; }
.trap { position: absolute; left: -10000px; width: 1px; height: 1px; overflow: hidden; }
a { color: #1d4ed8; }
`;

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
  `<title>${escapeHtml(title)}</title><link rel="stylesheet" href="${SIGNUP_STYLESHEET_PATH}"></head><body><main>${body}</main></body></html>`;

const fieldId = (question: SignupQuestion) => `answer-${question.id}`;

function labelOf(text: string, forId: string, required: boolean): string {
  return `<label for="${escapeHtml(forId)}">${escapeHtml(text)}${required ? '' : ' <span class="optional">(optional)</span>'}</label>`;
}

function questionField(question: SignupQuestion, value: string): string {
  const id = fieldId(question);
  const attributes = `id="${escapeHtml(id)}" name="answers[${escapeHtml(question.id)}]"${question.required ? ' required' : ''}`;
  const label = labelOf(question.label, id, question.required);
  switch (question.type) {
    case 'LONG_TEXT':
      return `${label}<textarea ${attributes} maxlength="2000">${escapeHtml(value)}</textarea>`;
    case 'URL':
      return `${label}<input type="url" ${attributes} value="${escapeHtml(value)}" placeholder="https://">`;
    case 'SELECT': {
      const options = ['', ...question.options]
        .map(
          (option) =>
            `<option value="${escapeHtml(option)}"${option === value ? ' selected' : ''}>${option === '' ? 'Choose…' : escapeHtml(option)}</option>`,
        )
        .join('');
      return `${label}<select ${attributes}>${options}</select>`;
    }
    default:
      return `${label}<input type="text" ${attributes} value="${escapeHtml(value)}" maxlength="200">`;
  }
}

/** The sign-up form; with `problems`, the refused submission again, its values kept and every problem listed above it. */
export function renderSignupForm(program: SignupPageProgram, formToken: string, filled: FilledForm = {}, problems: string[] = []): string {
  const { signup } = program;
  const problemList = problems.length
    ? `<div class="problems" role="alert"><h2>Your application could not be sent</h2><ul>${problems.map((problem) => `<li>${escapeHtml(problem)}</li>`).join('')}</ul></div>`
    : '';
  const terms = signup.termsUrl
    ? `<p>By applying you accept the <a href="${escapeHtml(signup.termsUrl)}" target="_blank" rel="noopener noreferrer">program terms</a>.</p>`
    : '';
  const person = (name: 'firstName' | 'lastName' | 'email', label: string, type: string, autocomplete: string) =>
    `${labelOf(label, name, true)}<input type="${type}" id="${name}" name="${name}" required autocomplete="${autocomplete}" value="${escapeHtml(filled[name] ?? '')}">`;
  return page(
    `Join ${program.name}`,
    `<h1>Join ${escapeHtml(program.name)}</h1>` +
      (signup.introText ? `<p class="intro">${escapeHtml(signup.introText)}</p>` : '') +
      problemList +
      `<form method="post" action="/join/${escapeHtml(program.slug)}">` +
      `<input type="hidden" name="${FORM_TOKEN_FIELD}" value="${escapeHtml(formToken)}">` +
      person('firstName', 'First name', 'text', 'given-name') +
      person('lastName', 'Last name', 'text', 'family-name') +
      person('email', 'Email', 'email', 'email') +
      signup.questions.map((question) => questionField(question, filled.answers?.[question.id] ?? '')).join('') +
      `<div class="trap" aria-hidden="true"><label for="${HONEYPOT_FIELD}">Leave this empty</label><input type="text" id="${HONEYPOT_FIELD}" name="${HONEYPOT_FIELD}" tabindex="-1" autocomplete="off"></div>` +
      terms +
      `<button type="submit">Apply</button></form>`,
  );
}

/** What the applicant sees once the application is in (or, for a bot caught by the honeypot, what it would have seen). */
export function renderSignupResult(program: SignupPageProgram, status: 'PENDING' | 'ACTIVE'): string {
  const message =
    status === 'ACTIVE'
      ? `<p>Welcome aboard: your affiliate account with ${escapeHtml(program.name)} is active.</p>`
      : `<p>Thank you: your application to ${escapeHtml(program.name)} is waiting for review. You will hear from us once it has been approved.</p>`;
  return page(`Application sent: ${program.name}`, `<div role="status"><h1>Application received</h1>${message}</div>`);
}

export function renderNotFound(): string {
  return page(
    'Sign-up not found',
    '<h1>This sign-up page does not exist</h1><p>Check the address, or ask the program for its sign-up link.</p>',
  );
}
