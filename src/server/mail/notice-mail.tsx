// In charge of the short notices the service sends about a workspace (a request to join, its
// answer, a webhook endpoint turned off): a heading, a few sentences, one action and a note, as
// plain text and in the product's HTML layout. The database writes such a notice's facts with the
// message (template.layout = 'notice') and it is rendered here when delivered or shown.
/** @jsxRuntime automatic @jsxImportSource react */ // JSX compiles alike whatever the working folder (commands run from a team's project)
import { z } from 'zod';
import { MailLayout, MailNote, MailParagraph, renderMailHtml } from './layout.js';
import type { MailBrand } from './invitation-mail.js';

export const noticeFactsSchema = z.object({
  layout: z.literal('notice'),
  heading: z.string().min(1),
  /** the message, one paragraph each */
  paragraphs: z.array(z.string()).min(1),
  action: z.object({ label: z.string().min(1), url: z.string().url() }).optional(),
  /** small print under the action */
  note: z.string().optional(),
});

export type NoticeFacts = z.infer<typeof noticeFactsSchema>;

/** The facts of a notice, or null when `template` is not one (another layout, or malformed). */
export function readNoticeFacts(template: unknown): NoticeFacts | null {
  const parsed = noticeFactsSchema.safeParse(template);
  return parsed.success ? parsed.data : null;
}

export function renderNoticeMail(facts: NoticeFacts, brand: MailBrand): { text: string; html: string } {
  const text = [
    ...facts.paragraphs.flatMap((paragraph) => [paragraph, '']),
    ...(facts.action ? [`${facts.action.label}: ${facts.action.url}`, ''] : []),
    ...(facts.note ? [facts.note, ''] : []),
    `${brand.productName} · ${brand.siteUrl}`,
  ].join('\n');
  const html = renderMailHtml(
    <MailLayout
      productName={brand.productName}
      siteUrl={brand.siteUrl}
      preview={facts.paragraphs[0]!}
      heading={facts.heading}
      action={facts.action}
      notes={facts.note ? <MailNote>{facts.note}</MailNote> : undefined}
    >
      {facts.paragraphs.map((paragraph, index) => (
        <MailParagraph key={index}>{paragraph}</MailParagraph>
      ))}
    </MailLayout>,
  );
  return { text, html };
}
