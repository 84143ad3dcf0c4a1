// In charge of the digest e-mail's HTML part: the sections compose.ts wrote (a workspace, its
// counts and latest events) in the product's e-mail layout, with the workspace as the link to
// follow and the unsubscribe and preference links in the footer.
/** @jsxRuntime automatic @jsxImportSource react */ // JSX compiles alike whatever the working folder (commands run from a team's project)
import { Section } from '@react-email/components';
import { MailLayout, MailLink, MailNote, MailParagraph, renderMailHtml } from '../mail/layout.js';
import type { DigestSection } from './compose.js';

export interface DigestHtmlInput {
  productName: string;
  appUrl: string;
  heading: string;
  preview: string;
  greeting: string;
  intro: string;
  sections: DigestSection[];
  why: string;
  unsubscribeUrl: string;
  preferencesUrl: string;
}

export function renderDigestHtml(input: DigestHtmlInput): string {
  return renderMailHtml(
    <MailLayout
      productName={input.productName}
      siteUrl={input.appUrl}
      preview={input.preview}
      heading={input.heading}
      footer={
        <>
          {input.why} <MailLink href={input.unsubscribeUrl}>Unsubscribe</MailLink> ·{' '}
          <MailLink href={input.preferencesUrl}>Preferences</MailLink>
        </>
      }
    >
      <MailParagraph>{input.greeting}</MailParagraph>
      <MailParagraph>{input.intro}</MailParagraph>
      {input.sections.map((s) => (
        <Section key={s.url} style={{ padding: '8px 0 8px' }}>
          <h2
            className="mail-heading"
            style={{ fontSize: '18px', lineHeight: '26px', margin: '0 0 4px', color: '#0f172a' }}
          >
            <MailLink href={s.url}>{s.name}</MailLink>
          </h2>
          <MailNote>{s.summary}</MailNote>
          <ul
            className="mail-text"
            style={{
              margin: '0 0 12px',
              paddingLeft: '20px',
              color: '#0f172a',
              fontSize: '15px',
              lineHeight: '22px',
            }}
          >
            {s.items.map((item, i) => (
              <li key={i}>{item}</li>
            ))}
          </ul>
        </Section>
      ))}
    </MailLayout>,
  );
}
