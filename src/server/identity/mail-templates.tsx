// In charge of the identity e-mails' words: the built-in subject, plain-text and HTML templates
// of each kind (the HTML in the shared e-mail layout, mail/layout.tsx), their replacement by
// files in MAIL_TEMPLATES_DIR, and rendering. Templates use
// GoTrue's variable syntax ({{ .ConfirmationURL }}, {{ .Token }}, {{ .Data.name }}, ...) so
// Supabase templates carry over; every value is HTML-escaped in HTML and stripped of line breaks
// in subjects. Only substitutions are supported, and a template naming an unknown variable is
// refused when the process starts. Pure apart from reading the directory once.
/** @jsxRuntime automatic @jsxImportSource react */ // JSX compiles alike whatever the working folder (commands run from a team's project)
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { MailLayout, MailNote, MailParagraph, renderMailHtml } from '../mail/layout.js';
import { count } from '../text/counts.js';

export const AUTH_MAIL_KINDS = [
  'confirmation',
  'invite',
  'recovery',
  'magic_link',
  'email_change',
  'reauthentication',
] as const;
export type AuthMailKind = (typeof AUTH_MAIL_KINDS)[number];

export interface TemplateSet {
  subject: string;
  text: string;
  html: string;
}

export type AuthMailTemplates = Record<AuthMailKind, TemplateSet>;

/** What a template may name. Data holds the user's metadata ({{ .Data.key }}). */
export interface TemplateVariables {
  ProductName: string;
  SiteURL: string;
  Email: string;
  NewEmail?: string;
  ConfirmationURL?: string;
  Token?: string;
  TokenHash?: string;
  RedirectTo?: string;
  /** how long the link and code work, in words ("1 hour") */
  ValidFor?: string;
  Data?: Record<string, unknown>;
}

const VARIABLES = new Set([
  'ProductName',
  'SiteURL',
  'Email',
  'NewEmail',
  'ConfirmationURL',
  'Token',
  'TokenHash',
  'RedirectTo',
  'ValidFor',
]);

const PLACEHOLDER = /\{\{\s*\.([A-Za-z]+)(?:\.([A-Za-z0-9_]+))?\s*\}\}/g;

// The built-in HTML parts are the shared e-mail layout rendered once with GoTrue placeholders as its
// values, so they are substituted (and escaped) exactly like an operator's own HTML template.
function html(heading: string, body: string, action: string | null, notes: string): string {
  return renderMailHtml(
    <MailLayout
      productName="{{ .ProductName }}"
      siteUrl="{{ .SiteURL }}"
      preview={body}
      heading={heading}
      {...(action ? { action: { label: action, url: '{{ .ConfirmationURL }}' } } : {})}
      code="{{ .Token }}"
      codeLabel={action ? 'Or enter this code:' : 'Your code:'}
      notes={<MailNote>{notes}</MailNote>}
    >
      <MailParagraph>{body}</MailParagraph>
    </MailLayout>,
  );
}

const IGNORE = 'If you did not ask for this, you can ignore this e-mail.';

export const BUILT_IN_TEMPLATES: AuthMailTemplates = {
  confirmation: {
    subject: 'Confirm your e-mail address for {{ .ProductName }}',
    text: `Confirm your e-mail address ({{ .Email }}) to finish signing up for {{ .ProductName }}:

{{ .ConfirmationURL }}

Or enter this code: {{ .Token }}

The link and the code work for {{ .ValidFor }}. ${IGNORE}
`,
    html: html(
      'Confirm your e-mail address',
      'Confirm your e-mail address ({{ .Email }}) to finish signing up for {{ .ProductName }}.',
      'Confirm my e-mail address',
      `The link and the code work for {{ .ValidFor }}. ${IGNORE}`,
    ),
  },
  invite: {
    subject: 'You have been invited to {{ .ProductName }}',
    text: `You have been invited to create an account on {{ .ProductName }} with {{ .Email }}. Accept the invitation:

{{ .ConfirmationURL }}

Or enter this code: {{ .Token }}

The link and the code work for {{ .ValidFor }}. ${IGNORE}
`,
    html: html(
      'You have been invited',
      'You have been invited to create an account on {{ .ProductName }} with {{ .Email }}.',
      'Accept the invitation',
      `The link and the code work for {{ .ValidFor }}. ${IGNORE}`,
    ),
  },
  recovery: {
    subject: 'Reset your {{ .ProductName }} password',
    text: `Someone asked to reset the password of {{ .Email }} on {{ .ProductName }}. Choose a new one:

{{ .ConfirmationURL }}

Or enter this code: {{ .Token }}

The link and the code work for {{ .ValidFor }}. If you did not ask for this, ignore this e-mail: your password stays as it is.
`,
    html: html(
      'Reset your password',
      'Someone asked to reset the password of {{ .Email }} on {{ .ProductName }}.',
      'Choose a new password',
      `The link and the code work for {{ .ValidFor }}. If you did not ask for this, ignore this e-mail: your password stays as it is.`,
    ),
  },
  magic_link: {
    subject: 'Your {{ .ProductName }} sign-in link',
    text: `Sign in to {{ .ProductName }} as {{ .Email }}:

{{ .ConfirmationURL }}

Or enter this code: {{ .Token }}

The link and the code work for {{ .ValidFor }}, once. ${IGNORE}
`,
    html: html(
      'Sign in',
      'Sign in to {{ .ProductName }} as {{ .Email }}.',
      'Sign in',
      `The link and the code work for {{ .ValidFor }}, once. ${IGNORE}`,
    ),
  },
  email_change: {
    subject: 'Confirm the change of your {{ .ProductName }} e-mail address',
    text: `Confirm the change of your {{ .ProductName }} e-mail address from {{ .Email }} to {{ .NewEmail }}:

{{ .ConfirmationURL }}

Or enter this code: {{ .Token }}

The link and the code work for {{ .ValidFor }}. Until the change is confirmed, {{ .Email }} stays in force. ${IGNORE}
`,
    html: html(
      'Confirm your new e-mail address',
      'Confirm the change of your {{ .ProductName }} e-mail address from {{ .Email }} to {{ .NewEmail }}.',
      'Confirm the change',
      `The link and the code work for {{ .ValidFor }}. Until the change is confirmed, {{ .Email }} stays in force. ${IGNORE}`,
    ),
  },
  reauthentication: {
    subject: 'Your {{ .ProductName }} verification code',
    text: `Enter this code to confirm it is you ({{ .Email }}) on {{ .ProductName }}:

{{ .Token }}

The code works for {{ .ValidFor }}. ${IGNORE}
`,
    html: html(
      'Confirm it is you',
      'Enter this code to confirm it is you ({{ .Email }}) on {{ .ProductName }}.',
      null,
      `The code works for {{ .ValidFor }}. ${IGNORE}`,
    ),
  },
};

export function escapeHtml(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** Throws naming the first unknown or unsupported placeholder. */
export function checkTemplate(template: string): void {
  for (const match of template.matchAll(PLACEHOLDER)) {
    const [whole, name, key] = match;
    if (name === 'Data' ? key === undefined : !VARIABLES.has(name!) || key !== undefined) {
      throw new Error(`${whole} is not a known variable`);
    }
  }
  const rest = template.replace(PLACEHOLDER, '');
  if (rest.includes('{{')) {
    throw new Error('only substitutions like {{ .ConfirmationURL }} are supported');
  }
}

function valueOf(variables: TemplateVariables, name: string, key: string | undefined): string {
  if (name === 'Data') {
    const value = key === undefined ? undefined : variables.Data?.[key];
    if (value === undefined || value === null) return '';
    return typeof value === 'string' ? value : JSON.stringify(value);
  }
  const value = variables[name as keyof Omit<TemplateVariables, 'Data'>];
  return typeof value === 'string' ? value : '';
}

function substitute(template: string, variables: TemplateVariables, encode: (v: string) => string): string {
  return template.replace(PLACEHOLDER, (_whole, name: string, key: string | undefined) =>
    encode(valueOf(variables, name, key)),
  );
}

export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

export function renderAuthMail(
  templates: AuthMailTemplates,
  kind: AuthMailKind,
  variables: TemplateVariables,
): RenderedMail {
  const set = templates[kind];
  // A subject is one header line whatever a value holds.
  const subject = substitute(set.subject, variables, (v) => v.replace(/[\r\n]+/g, ' '))
    .replace(/[\r\n]+/g, ' ')
    .trim();
  return {
    subject,
    text: substitute(set.text, variables, (v) => v),
    html: substitute(set.html, variables, escapeHtml),
  };
}

const FILES: Record<keyof TemplateSet, string> = {
  subject: 'subject.txt',
  text: 'txt',
  html: 'html',
};

/**
 * The templates in use: the built-in ones, each part replaced by `<kind>.subject.txt`,
 * `<kind>.txt` or `<kind>.html` from `dir` when that file exists. Throws naming a file whose
 * template is not valid.
 */
export function loadAuthMailTemplates(dir?: string): AuthMailTemplates {
  const templates = structuredClone(BUILT_IN_TEMPLATES);
  if (!dir) return templates;
  if (!existsSync(dir)) throw new Error(`MAIL_TEMPLATES_DIR: ${dir} does not exist`);
  for (const kind of AUTH_MAIL_KINDS) {
    for (const part of Object.keys(FILES) as (keyof TemplateSet)[]) {
      const file = path.join(dir, `${kind}.${FILES[part]}`);
      if (!existsSync(file)) continue;
      const content = readFileSync(file, 'utf8');
      try {
        checkTemplate(content);
      } catch (error) {
        throw new Error(`MAIL_TEMPLATES_DIR: ${file}: ${(error as Error).message}`, { cause: error });
      }
      templates[kind][part] = part === 'subject' ? content.trim() : content;
    }
  }
  return templates;
}

/** "1 hour", "30 minutes", "90 seconds": how long a link works, for the e-mail's words. */
export function describeDuration(seconds: number): string {
  if (seconds % 3600 === 0) return count(seconds / 3600, 'hour');
  if (seconds % 60 === 0) return count(seconds / 60, 'minute');
  return count(seconds, 'second');
}
