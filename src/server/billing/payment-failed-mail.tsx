// In charge of the e-mail a workspace's owners get when a payment fails: what failed, what to do
// (update the payment method before the grace period ends), and the links to do it, as plain
// text and in the product's HTML e-mail layout.
/** @jsxRuntime automatic @jsxImportSource react */ // JSX compiles alike whatever the working folder (commands run from a team's project)
import { MailLayout, MailLink, MailNote, MailParagraph, renderMailHtml } from '../mail/layout.js';

export interface PaymentFailedFacts {
  productName: string;
  appUrl: string;
  workspace: string;
  /** " of 12.00 EUR", or empty when the invoice does not say */
  amount: string;
  invoiceUrl: string | null;
  billingUrl: string;
}

export function paymentFailedMail(facts: PaymentFailedFacts): {
  subject: string;
  text: string;
  html: string;
} {
  const failed = `The latest payment${facts.amount} for the workspace "${facts.workspace}" failed.`;
  const todo =
    'Please update the payment method to keep full access; after the grace period the workspace becomes read-only.';
  const text = [
    failed,
    '',
    todo,
    ...(facts.invoiceUrl ? [`Invoice: ${facts.invoiceUrl}`] : []),
    `Billing settings: ${facts.billingUrl}`,
    '',
    `${facts.productName} · ${facts.appUrl}`,
  ].join('\n');
  const html = renderMailHtml(
    <MailLayout
      productName={facts.productName}
      siteUrl={facts.appUrl}
      preview={failed}
      heading="A payment failed"
      action={{ label: 'Update the payment method', url: facts.billingUrl }}
      notes={
        facts.invoiceUrl ? (
          <MailNote>
            The invoice: <MailLink href={facts.invoiceUrl}>{facts.invoiceUrl}</MailLink>
          </MailNote>
        ) : undefined
      }
    >
      <MailParagraph>{failed}</MailParagraph>
      <MailParagraph>{todo}</MailParagraph>
    </MailLayout>,
  );
  return { subject: `Payment failed for ${facts.workspace}`, text, html };
}
