import { Email, ShortText } from './common';
import { z } from './zod';

/**
 * The public sign-up of a program (README, "Sign-up and approval"): its page at `/join/{slug}` on
 * the gateway, the questions it asks, and what a submission carries. Whether a new affiliate waits
 * for approval is the program's existing `requireApproval`, not a second setting here.
 */

/** The program's public name in `/join/{slug}`: lower case, so that one program never has two spellings of its address. */
export const ProgramSlug = z
  .string()
  .min(3)
  .max(60)
  .regex(
    /^[a-z0-9]+(-[a-z0-9]+)*$/,
    'slug can only contain lower-case letters, numbers and single hyphens between them (e.g. acme-partners)',
  )
  .openapi({ description: 'Unique across the platform: the sign-up page is /join/{slug}' });

export const SignupQuestionType = z.enum(['TEXT', 'LONG_TEXT', 'URL', 'SELECT']).openapi('SignupQuestionType', {
  description: 'TEXT: one line (200 characters); LONG_TEXT: several lines (2000); URL: an http or https URL; SELECT: one of options',
});

/** The longest answer kept: LONG_TEXT; the others are one line. */
export const SIGNUP_ANSWER_MAX = { TEXT: 200, LONG_TEXT: 2000, URL: 2000, SELECT: 200 } as const;

export const SignupQuestion = z
  .object({
    id: z
      .string()
      .min(1)
      .max(40)
      .regex(/^[A-Za-z0-9_-]+$/, 'question id can only contain letters, numbers, hyphens and underscores')
      .openapi({ description: 'The key of this answer in a JSON submission (`answers`) and in the form' }),
    label: ShortText.openapi({ description: 'The question as the applicant reads it' }),
    type: SignupQuestionType,
    required: z.boolean().default(false).openapi({ description: 'Whether an answer is required (default false)' }),
    options: z
      .array(ShortText)
      .max(50)
      .default([])
      .openapi({ description: 'The choices of a SELECT question (at least one); empty for the other types' }),
  })
  .strict()
  .superRefine((question, ctx) => {
    if (question.type === 'SELECT' && question.options.length === 0) {
      ctx.addIssue({ code: 'custom', path: ['options'], message: `question ${question.id}: a SELECT question needs at least one option` });
    }
    if (question.type !== 'SELECT' && question.options.length > 0) {
      ctx.addIssue({ code: 'custom', path: ['options'], message: `question ${question.id}: only a SELECT question has options` });
    }
  })
  .openapi('SignupQuestion');

export const SIGNUP_DEFAULTS = {
  enabled: false,
  introText: '',
  termsUrl: null as string | null,
  questions: [] as z.infer<typeof SignupQuestion>[],
};

export const SignupSettings = z
  .object({
    enabled: z.boolean().openapi({ description: 'false: /join/{slug} answers 404' }),
    introText: z.string().max(2000).default('').openapi({ description: 'Shown above the form, as plain text' }),
    termsUrl: z
      .string()
      .url()
      .max(2000)
      .refine((url) => /^https?:\/\//i.test(url), 'must be an http or https URL')
      .nullable()
      .default(null)
      .openapi({ description: 'The program terms an applicant accepts by submitting; null: none shown' }),
    questions: z
      .array(SignupQuestion)
      .max(20)
      .default([])
      .refine(
        (questions) => new Set(questions.map((question) => question.id)).size === questions.length,
        'questions: each question id once',
      )
      .openapi({ description: 'Questions asked on the form, in order (at most 20, each id once)' }),
  })
  .strict()
  .openapi('SignupSettings', {
    description: "The program's sign-up page. Whether a new affiliate is PENDING until approved is the program's requireApproval",
  });

export type SignupQuestion = z.infer<typeof SignupQuestion>;
export type SignupSettings = z.infer<typeof SignupSettings>;

/** A submission from a program's own form (JSON); the hosted page sends the same fields form-encoded, answers as `answers[<id>]`. */
export const SignupSubmission = z
  .object({
    firstName: ShortText.openapi({ description: "The applicant's first name" }),
    lastName: ShortText.openapi({ description: "The applicant's last name" }),
    email: Email.openapi({ description: "The applicant's email: 400 when already an affiliate of the program" }),
    answers: z
      .record(z.string().max(100), z.string().max(SIGNUP_ANSWER_MAX.LONG_TEXT))
      .default({})
      .openapi({ description: 'Answers keyed by question id' }),
  })
  .strict()
  .openapi('SignupSubmission', { description: "An application from the program's own form" });
export type SignupSubmission = z.infer<typeof SignupSubmission>;

export const SignupResult = z
  .object({
    status: z
      .enum(['PENDING', 'ACTIVE'])
      .openapi({ description: 'PENDING: the program reviews applications; ACTIVE: the affiliate can start at once' }),
  })
  .openapi('SignupResult', { description: 'The application is in' });

/** One answer as the affiliate keeps it: the question as it was asked then, so a later edit of the question does not change what was answered. */
export const SignupAnswer = z.object({
  questionId: z.string().openapi({ description: 'The id of the question answered' }),
  question: z.string().openapi({ description: 'The label of the question when it was answered' }),
  answer: z.string().openapi({ description: 'The answer given' }),
});
export type SignupAnswer = z.infer<typeof SignupAnswer>;

/** What the gateway sends the affiliate service for a validated submission (internal: never a public body). */
export const SignupAffiliateBody = z
  .object({
    firstName: ShortText,
    lastName: ShortText,
    email: Email,
    signupAnswers: z.array(SignupAnswer).max(20),
    status: z.enum(['PENDING', 'ACTIVE']),
  })
  .strict();
export type SignupAffiliateBody = z.infer<typeof SignupAffiliateBody>;

/**
 * Every problem of the answers against the questions, as one list (nothing is created when it is
 * not empty): a missing required answer, an answer to no question, a URL that is not http(s), a
 * choice not among a SELECT's options, an answer too long for its type.
 */
export function signupAnswerProblems(questions: readonly SignupQuestion[], answers: Record<string, string>): string[] {
  const problems: string[] = [];
  const known = new Map(questions.map((question) => [question.id, question]));
  for (const id of Object.keys(answers)) {
    if (!known.has(id)) problems.push(`answers.${id}: there is no question ${id}`);
  }
  for (const question of questions) {
    const answer = answerOf(answers, question.id);
    if (answer === '') {
      if (question.required) problems.push(`answers.${question.id}: "${question.label}" is required`);
      continue;
    }
    if (answer.length > SIGNUP_ANSWER_MAX[question.type])
      problems.push(`answers.${question.id}: "${question.label}" may have at most ${SIGNUP_ANSWER_MAX[question.type]} characters`);
    if (question.type === 'URL' && !isWebUrl(answer))
      problems.push(`answers.${question.id}: "${question.label}" must be an http or https URL`);
    if (question.type === 'SELECT' && !question.options.includes(answer)) {
      problems.push(
        `answers.${question.id}: "${question.label}" must be one of ${question.options.map((option) => `"${option}"`).join(', ')}`,
      );
    }
  }
  return problems;
}

/** The answers as the affiliate keeps them, in the order the questions are asked; unanswered optional ones left out. */
export function signupAnswersOf(questions: readonly SignupQuestion[], answers: Record<string, string>): SignupAnswer[] {
  return questions
    .filter((question) => answerOf(answers, question.id) !== '')
    .map((question) => ({ questionId: question.id, question: question.label, answer: answerOf(answers, question.id) }));
}

/**
 * The answer to one question, trimmed; '' when there is none. Only the submission's own keys: a
 * question id such as `constructor` or `toString` would otherwise read Object.prototype's method.
 */
function answerOf(answers: Record<string, string>, id: string): string {
  const answer: unknown = Object.hasOwn(answers, id) ? answers[id] : undefined;
  return typeof answer === 'string' ? answer.trim() : '';
}

function isWebUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}
