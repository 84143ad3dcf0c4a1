// In charge of how every e-mail looks: one React Email layout (product mark and name, a heading,
// the message, a primary button with its link written out beneath it, an optional code, notes and
// a footer) and its rendering to an HTML document. Tables are role=presentation, colours keep
// 4.5:1 contrast in light and dark mode, and nothing is fetched remotely (the logo is a CID).
/** @jsxRuntime automatic @jsxImportSource react */ // JSX compiles alike whatever the working folder (commands run from a team's project)
import {
  Body,
  Button,
  Container,
  Head,
  Heading,
  Hr,
  Html,
  Img,
  Link,
  Preview,
  Section,
  Text,
} from '@react-email/components';
import { createRequire } from 'node:module';
import type { ReactNode } from 'react';
import { LOGO_SRC } from './logo.js';

export interface MailAction {
  label: string;
  url: string;
}

export interface MailLayoutProps {
  productName: string;
  siteUrl: string;
  /** the line inboxes show after the subject */
  preview: string;
  heading: string;
  children: ReactNode;
  action?: MailAction;
  /** a one-time code the reader may type instead of following the link */
  code?: string;
  codeLabel?: string;
  /** small print under the action: how long it works, what to do if unexpected */
  notes?: ReactNode;
  /** extra footer content (unsubscribe and preference links) */
  footer?: ReactNode;
}

// Clients that honour prefers-color-scheme (Apple Mail, Outlook on the web and for Mac) get these;
// the others show the light colours, which Gmail and Outlook invert on their own.
const DARK_MODE_CSS = `
:root { color-scheme: light dark; supported-color-schemes: light dark; }
@media (prefers-color-scheme: dark) {
  .mail-body, .mail-body > table > tbody > tr > td { background-color: #0f172a !important; }
  .mail-card { background-color: #1e293b !important; border-color: #334155 !important; }
  .mail-text, .mail-heading, .mail-code { color: #f1f5f9 !important; }
  .mail-muted { color: #cbd5e1 !important; }
  .mail-link { color: #a5b4fc !important; }
  .mail-code-box { background-color: #0f172a !important; border-color: #475569 !important; }
}
@media only screen and (max-width: 480px) {
  .mail-card { padding: 24px 16px !important; }
  .mail-button { display: block !important; text-align: center !important; }
}
`;

const colors = {
  page: '#f1f5f9',
  card: '#ffffff',
  border: '#e2e8f0',
  text: '#0f172a',
  muted: '#475569',
  primary: '#4338ca',
  link: '#3730a3',
};

const textStyle = { color: colors.text, fontSize: '16px', lineHeight: '24px', margin: '0 0 16px' };
const mutedStyle = { color: colors.muted, fontSize: '14px', lineHeight: '20px', margin: '0 0 12px' };

export function MailParagraph({ children }: { children: ReactNode }) {
  return (
    <Text className="mail-text" style={textStyle}>
      {children}
    </Text>
  );
}

export function MailNote({ children }: { children: ReactNode }) {
  return (
    <Text className="mail-muted" style={mutedStyle}>
      {children}
    </Text>
  );
}

export function MailLink({ href, children }: { href: string; children: ReactNode }) {
  return (
    <Link className="mail-link" href={href} style={{ color: colors.link, textDecoration: 'underline' }}>
      {children}
    </Link>
  );
}

export function MailLayout(props: MailLayoutProps) {
  return (
    <Html lang="en" dir="ltr">
      <Head>
        <meta name="color-scheme" content="light dark" />
        <meta name="supported-color-schemes" content="light dark" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{props.heading}</title>
        <style>{DARK_MODE_CSS}</style>
      </Head>
      <Preview>{props.preview}</Preview>
      <Body
        className="mail-body"
        style={{
          backgroundColor: colors.page,
          margin: 0,
          padding: '24px 8px',
          fontFamily: "-apple-system, BlinkMacSystemFont, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif",
        }}
      >
        <Container style={{ maxWidth: '560px', width: '100%', margin: '0 auto' }}>
          <Section style={{ padding: '0 0 16px' }}>
            <Img
              src={LOGO_SRC}
              width="40"
              height="40"
              alt={props.productName}
              style={{ display: 'inline-block', verticalAlign: 'middle', borderRadius: '8px' }}
            />
            <span
              className="mail-heading"
              style={{
                display: 'inline-block',
                verticalAlign: 'middle',
                marginLeft: '12px',
                fontSize: '18px',
                fontWeight: 600,
                color: colors.text,
              }}
            >
              {props.productName}
            </span>
          </Section>
          <Section
            className="mail-card"
            style={{
              backgroundColor: colors.card,
              border: `1px solid ${colors.border}`,
              borderRadius: '12px',
              padding: '32px',
            }}
          >
            <Heading
              as="h1"
              className="mail-heading"
              style={{ color: colors.text, fontSize: '22px', lineHeight: '30px', margin: '0 0 16px' }}
            >
              {props.heading}
            </Heading>
            {props.children}
            {props.action ? (
              <>
                <Section style={{ padding: '8px 0 16px' }}>
                  <Button
                    className="mail-button"
                    href={props.action.url}
                    style={{
                      backgroundColor: colors.primary,
                      color: '#ffffff',
                      borderRadius: '8px',
                      padding: '12px 20px',
                      fontSize: '16px',
                      fontWeight: 600,
                      textDecoration: 'none',
                    }}
                  >
                    {props.action.label}
                  </Button>
                </Section>
                <Text className="mail-muted" style={{ ...mutedStyle, wordBreak: 'break-all' }}>
                  Or open this link: <MailLink href={props.action.url}>{props.action.url}</MailLink>
                </Text>
              </>
            ) : null}
            {props.code ? (
              <Section
                className="mail-code-box"
                style={{
                  backgroundColor: colors.page,
                  border: `1px solid ${colors.border}`,
                  borderRadius: '8px',
                  padding: '12px 16px',
                  margin: '8px 0 16px',
                }}
              >
                <Text className="mail-muted" style={{ ...mutedStyle, margin: '0 0 4px' }}>
                  {props.codeLabel ?? 'Or enter this code:'}
                </Text>
                <Text
                  className="mail-code"
                  style={{
                    color: colors.text,
                    fontSize: '28px',
                    lineHeight: '36px',
                    letterSpacing: '6px',
                    fontWeight: 700,
                    fontFamily: "ui-monospace, 'SFMono-Regular', Menlo, Consolas, monospace",
                    margin: 0,
                  }}
                >
                  {props.code}
                </Text>
              </Section>
            ) : null}
            {props.notes}
          </Section>
          <Hr style={{ border: 'none', margin: '16px 0 0' }} />
          <Text className="mail-muted" style={{ ...mutedStyle, textAlign: 'center' }}>
            {props.productName} · <MailLink href={props.siteUrl}>{props.siteUrl}</MailLink>
          </Text>
          {props.footer ? (
            <Text className="mail-muted" style={{ ...mutedStyle, textAlign: 'center' }}>
              {props.footer}
            </Text>
          ) : null}
        </Container>
      </Body>
    </Html>
  );
}

function loadServerRenderer(): typeof import('react-dom/server') {
  return createRequire(import.meta.url)('react-dom/server') as typeof import('react-dom/server');
}

/**
 * The HTML document of an e-mail, as @react-email/render writes it (XHTML doctype, no hydration
 * markers), but synchronously: the identity templates are compiled when configuration loads.
 */
export function renderMailHtml(element: ReactNode): string {
  // Loaded by Node when first used rather than imported: the web app's server components reach
  // this module (an invitation sent from a page), and Next.js refuses react-dom/server imported
  // into that graph; e-mails are rendered to a string, never streamed into a page.
  const { renderToStaticMarkup } = loadServerRenderer();
  // React adds an image preload to <head>; an e-mail has nothing to preload.
  const markup = renderToStaticMarkup(element)
    .replace(/<!--\$-->|<!--\/\$-->/g, '')
    .replace(/<link rel="preload" as="image"[^>]*\/>/g, '');
  return `<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">${markup.replace(/<!DOCTYPE.*?>/, '')}`;
}
