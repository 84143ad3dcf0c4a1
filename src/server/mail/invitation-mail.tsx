// In charge of the workspace invitation e-mail's HTML and plain-text parts, from the facts the
// database records with it (migration 0086): who invited whom to which workspace, as what, the
// accept link and until when it works.
/** @jsxRuntime automatic @jsxImportSource react */ // JSX compiles alike whatever the working folder (commands run from a team's project)
import { MailLayout, MailNote, MailParagraph, renderMailHtml } from './layout.js';

export interface InvitationFacts {
  inviter: string | null;
  workspace: string;
  role: string;
  email: string;
  link: string;
  expires_at: string;
}

export interface MailBrand {
  productName: string;
  siteUrl: string;
}

function article(role: string): string {
  return /^[aeiou]/i.test(role) ? 'an' : 'a';
}

function expiry(at: string): string {
  return `${new Date(at).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

export function renderInvitationMail(
  facts: InvitationFacts,
  brand: MailBrand,
): { text: string; html: string } {
  const who = facts.inviter ?? 'Someone';
  const sentence = `${who} invited you to join the workspace “${facts.workspace}” on ${brand.productName} as ${article(facts.role)} ${facts.role}.`;
  const validity = `The link works once, for ${facts.email}, until ${expiry(facts.expires_at)}.`;
  const ignore = 'If you did not expect this, ignore this e-mail.';
  const text = [
    sentence,
    '',
    `Accept the invitation: ${facts.link}`,
    '',
    validity,
    ignore,
    '',
    `${brand.productName} · ${brand.siteUrl}`,
  ].join('\n');
  const html = renderMailHtml(
    <MailLayout
      productName={brand.productName}
      siteUrl={brand.siteUrl}
      preview={sentence}
      heading={`Join ${facts.workspace}`}
      action={{ label: 'Accept the invitation', url: facts.link }}
      notes={
        <>
          <MailNote>{validity}</MailNote>
          <MailNote>{ignore}</MailNote>
        </>
      }
    >
      <MailParagraph>{sentence}</MailParagraph>
    </MailLayout>,
  );
  return { text, html };
}
